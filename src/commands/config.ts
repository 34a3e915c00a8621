// `company-data config`: where settings come from, and the one safe way to store the key.
// There is deliberately no option taking the key on the command line: argv is visible to other
// users (ps) and lands in shell history. The key comes from stdin, unechoed on a terminal.
import type { Command } from 'commander';
import type { CommandKit } from '../command-kit.js';
import type { GlobalFlags } from '../config.js';
import { Problem, usageError } from '../problem.js';
import type { Context, IO } from '../types.js';

/** `config set` names -> config file members. */
const SETTABLE: Record<string, string> = {
  'base-url': 'base_url',
  'auth-header': 'auth_header',
  format: 'format',
  timeout: 'timeout',
  retries: 'retries',
  'credits-charged-header': 'credits_charged_header',
  'credits-remaining-header': 'credits_remaining_header',
  'store-connections': 'store_connections',
};

export function register(program: Command, kit: CommandKit): void {
  const config = program
    .command('config')
    .description('Show and change settings and profiles (key, base URL, format)')
    .addHelpText(
      'after',
      `
Precedence: flags > environment (COMPANY_DATA_*) > config file (the profile in force) > defaults.
The profile in force: --profile, else COMPANY_DATA_PROFILE, else the one \`config use\` chose,
else "default" (the config file's top-level settings). set-key, set and unset change that
profile, creating it when it is new; each profile has its own key and settings.
The config file ($XDG_CONFIG_HOME/company-data/config.json) must be private (chmod 600).

Examples:
  $ company-data --sandbox config show
  $ printf '%s' "$MY_KEY" | company-data config set-key
  $ company-data config set base-url https://api.example.com
  $ company-data config set-key --profile cron < ~/secrets/cron.key
  $ company-data config use cron
  $ company-data config list
  $ company-data config delete-profile cron`,
    );
  config
    .command('show')
    .description('Show the profile and each setting, its value (the key redacted) and where it came from')
    .action(kit.withContext(runConfigShow));
  config
    .command('list')
    .description('List the profiles of the config file, their keys (redacted) and base URLs')
    .action(kit.withContext(runConfigList));
  config
    .command('use <profile>')
    .description('Make a profile the one in force when neither --profile nor COMPANY_DATA_PROFILE says')
    .action(kit.withIO((io, { env }, _flags, name: string) => runUse(io, env, name)));
  config
    .command('path')
    .description('Print the path of the config file')
    .action(
      kit.withIO(async (io, { env }) => io.out(`${(await import('../config.js')).configFilePath(env)}\n`)),
    );
  config
    .command('set-key')
    .description('Store the API key in the config file, read from stdin (hidden on a terminal)')
    .addHelpText(
      'after',
      `
Examples:
  $ company-data config set-key < ~/secrets/company-data.key
  $ company-data config set-key --profile cron < ~/secrets/cron.key`,
    )
    .action(kit.withIO((io, { env }, flags) => runSetKey(io, env, flags)));
  config
    .command('set <name> <value>')
    .description(`Store a setting in the config file (${Object.keys(SETTABLE).join(', ')})`)
    .action(
      kit.withIO((io, { env }, flags, name: string, value: string) => runSet(io, env, name, value, flags)),
    );
  config
    .command('unset <name>')
    .description(`Remove a setting from the config file (api-key, ${Object.keys(SETTABLE).join(', ')})`)
    .action(kit.withIO((io, { env }, flags, name: string) => runUnset(io, env, name, flags)));
  config
    .command('delete-profile <profile>')
    .description('Remove a named profile, its key and settings, from the config file')
    .addHelpText(
      'after',
      `
The default profile (the file's top-level settings) is not deleted: remove its settings with
\`config unset\`. A deleted profile that \`config use\` had chosen leaves the default in force.

Example:
  $ company-data config delete-profile old-cron`,
    )
    .action(
      kit.withIO(async (io, { env }, _flags, name: string) =>
        (await import('./config-delete-profile.js')).runDeleteProfile(io, env, name),
      ),
    );
}

const SECONDS = 1000;

export async function runConfigShow(ctx: Context): Promise<number> {
  const [{ redactKey }, { printList }, { existsSync }] = await Promise.all([
    import('../config.js'),
    import('../output/format.js'),
    import('node:fs'),
  ]);
  const c = ctx.config;
  const rows = [
    { setting: 'profile', value: c.profile?.value ?? null, source: c.profile?.source ?? 'not set' },
    { setting: 'base-url', value: c.baseUrl?.value ?? null, source: c.baseUrl?.source ?? 'not set' },
    {
      setting: 'api-key',
      value: c.apiKey ? redactKey(c.apiKey.value) : null,
      source: c.apiKey?.source ?? 'not set',
    },
    { setting: 'auth-header', value: c.authHeader.value, source: c.authHeader.source },
    { setting: 'format', value: c.format.value, source: c.format.source },
    { setting: 'timeout', value: c.timeoutMs.value / SECONDS, source: c.timeoutMs.source },
    { setting: 'retries', value: c.retries.value, source: c.retries.source },
    {
      setting: 'config-file',
      value: c.configPath,
      source: ctx.env.XDG_CONFIG_HOME ? 'environment' : 'default',
    },
    {
      setting: 'cache-dir',
      value: c.cacheDir,
      source: ctx.env.XDG_CACHE_HOME ? 'environment' : 'default',
    },
  ];
  printList(ctx, rows, { columns: ['setting', 'value', 'source'] });
  if (!existsSync(c.configPath)) ctx.io.info(NO_FILE_YET);
  return 0;
}

const NO_FILE_YET = 'There is no config file yet; `company-data config set-key` creates it.';

/** One row per profile: what is stored in it (the key redacted), and whether it is in force. */
export async function runConfigList(ctx: Context): Promise<number> {
  const [config, { printList }] = await Promise.all([import('../config.js'), import('../output/format.js')]);
  const path = ctx.config.configPath;
  // resolveConfig has read and checked this file a moment ago (permissions, shape, the profile).
  const file = await config.readConfigFile(path);
  const inForce = ctx.config.profile ?? { value: config.DEFAULT_PROFILE, source: 'default' as const };
  const rows = config.profileNames(file, path).map((name) => {
    const members = config.storedProfile(file, path, name) ?? {};
    const key = config.storedKey(members);
    const stored = (member: string) => members[member] ?? null;
    return {
      profile: name,
      active: name === inForce.value,
      'api-key': key ? config.redactKey(key) : null,
      'base-url': stored('base_url'),
      'auth-header': stored('auth_header'),
      format: stored('format'),
      timeout: stored('timeout'),
      retries: stored('retries'),
    };
  });
  printList(ctx, rows, { columns: ['profile', 'active', 'api-key', 'base-url'] });
  if (ctx.config.profile?.missing) {
    const unset =
      inForce.source === 'environment'
        ? `unset ${config.PROFILE_ENV}`
        : inForce.source === 'flag'
          ? 'give --profile one of these'
          : 'choose one of these with `company-data config use <profile>`';
    ctx.io.warn(
      `In force: ${inForce.value} (${config.profileReason(inForce.source)}), which is not in ${path}: create it with \`company-data config set-key --profile ${inForce.value}\`, or ${unset}.`,
    );
  } else ctx.io.info(`In force: ${inForce.value} (${config.profileReason(inForce.source)}).`);
  if (!file) ctx.io.info(NO_FILE_YET);
  return 0;
}

/** Reads a line from a terminal without echoing it (raw mode), for secrets. */
function readHidden(io: IO, prompt: string): Promise<string> {
  const stdin = io.stdin as NodeJS.ReadStream;
  // warn, not info: the prompt must show even with --quiet, or the command would seem to hang.
  io.warn(prompt);
  return new Promise((resolve, reject) => {
    let input = '';
    const finish = (error?: Problem) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      if (error) reject(error);
      else resolve(input);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n' || ch === '\x04') return finish();
        if (ch === '\x03')
          return finish(new Problem({ code: 'interrupted', title: 'Interrupted', source: 'client' }));
        if (ch === '\x7f' || ch === '\b') input = input.slice(0, -1);
        else input += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.on('data', onData);
    stdin.resume();
  });
}

async function readAll(io: IO): Promise<string> {
  let text = '';
  for await (const chunk of io.stdin) text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
  return text;
}

export async function readKeyFromStdin(io: IO): Promise<string> {
  const raw = io.isStdinTTY
    ? await readHidden(io, 'API key (typing is hidden; end with Enter):')
    : await readAll(io);
  const key = raw.trim();
  if (key === '') {
    throw usageError(
      'no API key was given on stdin',
      'Pipe the key in, e.g. `company-data config set-key < key.txt`.',
    );
  }
  if (/\s/.test(key)) throw usageError('the API key must be a single word without spaces or line breaks');
  return key;
}

/** The config file as it is (permissions not checked: it is rewritten with mode 0600 anyway). */
async function openForWrite(env: NodeJS.ProcessEnv, flags: GlobalFlags) {
  const config = await import('../config.js');
  const path = config.configFilePath(env);
  const file = (await config.readConfigFile(path, { checkPermissions: false })) ?? {};
  // A write goes to the profile in force, which it creates when new.
  const profile = config.chooseProfile(flags, env, file, path).value;
  const stored = config.storedProfile(file, path, profile);
  return {
    config,
    path,
    file,
    profile,
    stored: stored ?? {},
    /** Where the write went, in words: the file, or the profile in the file. */
    where: profile === config.DEFAULT_PROFILE ? path : `profile ${profile} in ${path}`,
    isNew: stored === undefined,
  };
}

export async function runSetKey(io: IO, env: NodeJS.ProcessEnv, flags: GlobalFlags = {}): Promise<void> {
  const target = await openForWrite(env, flags);
  const key = await readKeyFromStdin(io);
  const { config, path, file, profile } = target;
  await config.writeConfigFile(
    path,
    config.updateProfile(file, path, profile, (m) => ({ ...m, api_key: key })),
  );
  const where = target.isNew ? `the new ${target.where}` : target.where;
  io.info(`Saved the API key ${config.redactKey(key)} to ${where} (mode 0600).`);
}

export async function runSet(
  io: IO,
  env: NodeJS.ProcessEnv,
  name: string,
  value: string,
  flags: GlobalFlags = {},
): Promise<void> {
  const config = await import('../config.js');
  const member = Object.hasOwn(SETTABLE, name) ? SETTABLE[name] : undefined;
  if (!member) {
    throw usageError(
      `unknown setting "${name}"; choose one of ${Object.keys(SETTABLE).join(', ')}`,
      'The key is stored with `company-data config set-key` (read from stdin).',
    );
  }
  const origin = { source: 'flag' as const, label: `config set ${name}` };
  const parsed: string | number =
    name === 'base-url'
      ? config.parseBaseUrl(value, origin)
      : name === 'auth-header'
        ? config.parseAuthHeader(value, origin)
        : name === 'format'
          ? config.parseFormat(value, origin)
          : name === 'timeout'
            ? config.parseTimeoutMs(value, origin) / SECONDS
            : name === 'retries'
              ? config.parseRetries(value, origin)
              : name === 'store-connections'
                ? config.parseStoreConnections(value, origin)
                : config.parseHeaderName(value, origin);
  const target = await openForWrite(env, flags);
  const { path, file, profile } = target;
  await config.writeConfigFile(
    path,
    config.updateProfile(file, path, profile, (m) => ({ ...m, [member]: parsed })),
  );
  io.info(`Set ${name} = ${parsed} in ${target.isNew ? `the new ${target.where}` : target.where}.`);
}

export async function runUnset(
  io: IO,
  env: NodeJS.ProcessEnv,
  name: string,
  flags: GlobalFlags = {},
): Promise<void> {
  const member = name === 'api-key' ? 'api_key' : Object.hasOwn(SETTABLE, name) ? SETTABLE[name] : undefined;
  if (!member) throw usageError(`unknown setting "${name}"`);
  const { config, path, file, profile, stored, where } = await openForWrite(env, flags);
  if (!(member in stored)) {
    io.info(`${name} was not set in ${where}.`);
    return;
  }
  await config.writeConfigFile(
    path,
    config.updateProfile(file, path, profile, ({ [member]: _removed, ...rest }) => rest),
  );
  io.info(`Removed ${name} from ${where}.`);
}

/** `config use <profile>`: the file's current_profile; "default" removes it (the file's old shape). */
export async function runUse(io: IO, env: NodeJS.ProcessEnv, name: string): Promise<void> {
  const config = await import('../config.js');
  const profile = config.parseProfileName(name, { source: 'flag', label: 'config use' });
  const path = config.configFilePath(env);
  const file = (await config.readConfigFile(path, { checkPermissions: false })) ?? {};
  const names = config.profileNames(file, path);
  if (!names.includes(profile)) throw config.unknownProfile(profile, names);
  const { current_profile: previous, ...rest } = file;
  const current = profile === config.DEFAULT_PROFILE ? undefined : profile;
  if (previous !== current) await config.writeConfigFile(path, { ...rest, current_profile: current });
  io.info(
    current === undefined
      ? `Now using the default profile (the top-level settings of ${path}).`
      : `Now using profile ${profile} (current_profile in ${path}).`,
  );
  const fromEnv = env[config.PROFILE_ENV];
  if (fromEnv && fromEnv !== profile)
    io.warn(`${config.PROFILE_ENV}=${fromEnv} is set here, and it still overrides this choice.`);
}
