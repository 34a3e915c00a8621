// `company-data config delete-profile <profile>` (issue 46): a named profile, its key with it, out
// of the config file (docs/configuration.md, "Deleting a profile").
import { usageError } from '../problem.js';
import type { IO } from '../types.js';

/**
 * `config delete-profile <profile>`: the profile goes from the file, its key with it, without a
 * question (as `config unset` and `git remote remove`): the message names the key it held.
 */
export async function runDeleteProfile(io: IO, env: NodeJS.ProcessEnv, name: string): Promise<void> {
  const config = await import('../config.js');
  const profile = config.parseProfileName(name, { source: 'flag', label: 'config delete-profile' });
  const path = config.configFilePath(env);
  const file = (await config.readConfigFile(path, { checkPermissions: false })) ?? {};
  if (profile === config.DEFAULT_PROFILE) {
    throw usageError(
      `the default profile is the top-level settings of ${path}, not a profile that can be deleted`,
      'Remove its settings one by one with `company-data config unset <name>`.',
    );
  }
  const names = config.profileNames(file, path);
  if (!names.includes(profile)) throw config.unknownProfile(profile, names);
  const key = config.storedKey(config.storedProfile(file, path, profile) ?? {});
  const { [profile]: _deleted, ...others } = file.profiles ?? {};
  const { current_profile: current, profiles: _profiles, ...rest } = file;
  const next = {
    ...rest,
    current_profile: current === profile ? undefined : current,
    profiles: Object.keys(others).length > 0 ? others : undefined,
  };
  await config.writeConfigFile(path, next);
  const held = key ? ` and its key ${config.redactKey(key)}` : '';
  io.info(`Deleted profile ${profile}${held} from ${path}.`);
  if (current === profile) io.info('It was the profile in use: the default profile is now in force.');
  const fromEnv = env[config.PROFILE_ENV];
  if (fromEnv === profile)
    io.warn(`${config.PROFILE_ENV}=${fromEnv} is set here and now names no profile: unset it.`);
}
