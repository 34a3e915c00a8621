// Settings with precedence flags > environment > config file > defaults, each with its source,
// so `config show` can say where a value came from and errors can name the culprit.
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { tempSuffix } from './fs-names.js';
import { Problem, usageError } from './problem.js';
import type { AuthHeader, Config, Format, Setting, SettingSource } from './types.js';

/** Global flags as Commander parsed them. */
export interface GlobalFlags {
  profile?: string;
  baseUrl?: string;
  apiKeyFile?: string;
  authHeader?: string;
  sandbox?: boolean;
  format?: string;
  timeout?: string;
  retries?: string;
  quiet?: boolean;
  verbose?: boolean;
  color?: boolean;
  allowInsecureHttp?: boolean;
  csvRaw?: boolean;
  /** --store <path> (a string), --no-store (false). */
  store?: string | boolean;
  /** false with --no-pager. */
  pager?: boolean;
  /** --log-format plain|timestamped (else COMPANY_DATA_LOG_FORMAT). */
  logFormat?: string;
}

/** One profile's settings (snake_case, as written by `config set-key` / `config set`). */
export interface ProfileMembers {
  base_url?: string;
  api_key?: string;
  auth_header?: string;
  format?: string;
  timeout?: number | string;
  retries?: number | string;
  credits_charged_header?: string;
  credits_remaining_header?: string;
  store_connections?: number | string;
  [member: string]: unknown;
}

/**
 * The config file. Its top-level settings are the profile named "default" (the file of a
 * single-profile setup, unchanged); `profiles` holds the others by name, each complete in itself
 * (nothing is inherited from the top level); `current_profile` names the one `config use` chose.
 * docs/configuration.md.
 */
export interface ConfigFile extends ProfileMembers {
  current_profile?: string;
  profiles?: Record<string, ProfileMembers>;
}

export const FORMATS: readonly Format[] = ['table', 'json', 'ndjson', 'csv'];
export const AUTH_HEADERS: readonly AuthHeader[] = ['bearer', 'x-api-key'];
export const DEFAULT_TIMEOUT_SECONDS = 30;
export const DEFAULT_RETRIES = 3;
export const MAX_RETRIES = 10;

/** The home directory of the environment given (a test's own), as the XDG defaults use it. */
function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME || homedir();
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homeOf(env), '.config');
  return join(base, 'company-data');
}

export function configFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'config.json');
}

export function cacheDirFor(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homeOf(env), '.cache'), 'company-data');
}

/** Shows enough of a key to recognise it: `cd_s…9c2e`; short keys are fully hidden. */
export function redactKey(key: string): string {
  return key.length >= 12 ? `${key.slice(0, 4)}…${key.slice(-4)}` : '***';
}

/** Where a value came from, in words, for error messages. */
export interface Origin {
  source: SettingSource;
  /** "--timeout", "COMPANY_DATA_TIMEOUT", "timeout in /path/config.json". */
  label: string;
}

function configError(detail: string): Problem {
  return new Problem({ code: 'config_error', title: 'Configuration error', detail, source: 'client' });
}

function invalid(origin: Origin, detail: string): Problem {
  const where =
    origin.source === 'flag'
      ? origin.label
      : origin.source === 'environment'
        ? `${origin.label} (environment)`
        : origin.label;
  return origin.source === 'flag' ? usageError(`${where}: ${detail}`) : configError(`${where}: ${detail}`);
}

export function parseFormat(raw: unknown, origin: Origin): Format {
  if (typeof raw === 'string' && (FORMATS as readonly string[]).includes(raw)) return raw as Format;
  throw invalid(origin, `format must be one of ${FORMATS.join(', ')}, got ${JSON.stringify(raw)}`);
}

export function parseAuthHeader(raw: unknown, origin: Origin): AuthHeader {
  if (typeof raw === 'string' && (AUTH_HEADERS as readonly string[]).includes(raw)) return raw as AuthHeader;
  throw invalid(origin, `auth header must be bearer or x-api-key, got ${JSON.stringify(raw)}`);
}

/** Seconds (fractions allowed, e.g. 0.5) -> milliseconds. */
export function parseTimeoutMs(raw: unknown, origin: Origin): number {
  const seconds =
    typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw invalid(origin, `timeout must be a positive number of seconds, got ${JSON.stringify(raw)}`);
  }
  return Math.round(seconds * 1000);
}

/** Connections one process opens to a PostgreSQL store, at most: the lock's and its statements'. */
export const DEFAULT_STORE_CONNECTIONS = 2;
export const MAX_STORE_CONNECTIONS = 32;

/** A whole number as a setting gives it (a JSON number, or digits in text), else NaN. */
function wholeNumberOf(raw: unknown): number {
  if (typeof raw === 'number') return Number.isInteger(raw) ? raw : Number.NaN;
  return typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
}

/** store_connections / COMPANY_DATA_STORE_CONNECTIONS: a whole number from 2 (docs/store.md). */
export function parseStoreConnections(raw: unknown, origin: Origin): number {
  const n = wholeNumberOf(raw);
  if (!(n >= 2 && n <= MAX_STORE_CONNECTIONS)) {
    throw invalid(
      origin,
      `store connections must be a whole number from 2 (one holds the process's lock, one runs its statements) to ${MAX_STORE_CONNECTIONS}, got ${JSON.stringify(raw)}`,
    );
  }
  return n;
}

export function parseRetries(raw: unknown, origin: Origin): number {
  const n = wholeNumberOf(raw);
  if (!(n >= 0 && n <= MAX_RETRIES)) {
    throw invalid(
      origin,
      `retries must be a whole number from 0 to ${MAX_RETRIES}, got ${JSON.stringify(raw)}`,
    );
  }
  return n;
}

export function parseBaseUrl(raw: unknown, origin: Origin): string {
  if (typeof raw === 'string') {
    try {
      const url = new URL(raw);
      if (url.protocol === 'http:' || url.protocol === 'https:') return raw.replace(/\/+$/, '');
    } catch {
      // reported below
    }
  }
  throw invalid(origin, `base URL must be an http:// or https:// URL, got ${JSON.stringify(raw)}`);
}

/**
 * A secret readable by anyone but its owner is refused rather than used: the key may already
 * have leaked, and silently using it would hide that. (POSIX only; Windows has no mode bits.)
 */
async function assertPrivate(path: string, what: string): Promise<void> {
  if (process.platform === 'win32') return;
  const info = statSync(path);
  if ((info.mode & 0o077) !== 0) {
    const mode = (info.mode & 0o777).toString(8).padStart(3, '0');
    throw configError(`${what} ${path} is readable by other users (mode ${mode}); run: chmod 600 ${path}`);
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** The config file, or undefined when there is none. */
export async function readConfigFile(
  path: string,
  options: { checkPermissions?: boolean } = {},
): Promise<ConfigFile | undefined> {
  let text: string;
  try {
    // Synchronous: read on every command's start-up, and a small local file is read faster than
    // a round trip through libuv's thread pool.
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw configError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  if (options.checkPermissions !== false) await assertPrivate(path, 'config file');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw configError(`config file ${path} is not a JSON object; fix it or remove it`);
  }
  return parsed as ConfigFile;
}

/** Atomic: a temporary file in the same directory (mode 0600) renamed over the old one. */
export async function writeConfigFile(path: string, data: ConfigFile): Promise<void> {
  // node:fs/promises on first use: every command reads the configuration, few write it, and its
  // load (~1.5 ms, with readline's interface) was part of every start (docs/performance.md).
  const { chmod, mkdir, open, rename, unlink } = await import('node:fs/promises');
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.config.json.${tempSuffix()}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    // Settings first, then the profile `config use` chose, then the named profiles.
    const { current_profile, profiles, ...settings } = data;
    const ordered = { ...settings, current_profile, profiles };
    await handle.writeFile(`${JSON.stringify(ordered, null, 2)}\n`, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  // The umask cannot widen 0600, but be explicit in case the file system ignored the open mode.
  await chmod(temp, 0o600);
  await rename(temp, path);
}

export async function readKeyFile(path: string): Promise<string> {
  let text: string;
  try {
    // Synchronous, as the config file: one small local file.
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw configError(`cannot read key file ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  await assertPrivate(path, 'key file');
  const key = text.trim();
  if (key === '') {
    throw configError(`key file ${path} is empty`);
  }
  return key;
}

/**
 * Commander's `.env()` (cli.ts) fills a flag from its environment variable, so a flag value equal
 * to the variable is reported as coming from the environment: the value is the same either way.
 * `stored` is the config file's value and how to name it ("retries in /path/config.json").
 */
function pick(
  flag: string | undefined,
  flagName: string,
  env: NodeJS.ProcessEnv,
  envName: string,
  stored: { raw: unknown; label: string },
): { raw: unknown; origin: Origin } | undefined {
  const fromEnv = env[envName];
  if (flag !== undefined && flag !== fromEnv)
    return { raw: flag, origin: { source: 'flag', label: flagName } };
  if (fromEnv !== undefined && fromEnv !== '')
    return { raw: fromEnv, origin: { source: 'environment', label: envName } };
  if (stored.raw !== undefined && stored.raw !== null) {
    return { raw: stored.raw, origin: { source: 'config file', label: stored.label } };
  }
  return undefined;
}

/** The name of an HTTP header (a token: letters, digits and !#$%&'*+.^_`|~-). */
export function parseHeaderName(raw: unknown, origin: Origin): string {
  const name = String(raw).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
    throw invalid(origin, `must be the name of an HTTP header, got ${JSON.stringify(raw)}`);
  return name;
}

/** The credit header names a profile (or the environment) gives. */
function creditHeadersOf(
  ...picked: Array<{ raw: unknown; origin: Origin } | undefined>
): { charged?: string; remaining?: string } | undefined {
  const [charged, remaining] = picked.map((p) => (p ? parseHeaderName(p.raw, p.origin) : undefined));
  if (charged === undefined && remaining === undefined) return undefined;
  return { ...(charged ? { charged } : {}), ...(remaining ? { remaining } : {}) };
}

function setting<T>(
  picked: { raw: unknown; origin: Origin } | undefined,
  parse: (raw: unknown, o: Origin) => T,
  fallback: T,
): Setting<T> {
  if (!picked) return { value: fallback, source: 'default' };
  return { value: parse(picked.raw, picked.origin), source: picked.origin.source };
}

// ---- Profiles (docs/configuration.md) ----

/** The profile made of the config file's top-level settings: a single-profile file, unchanged. */
export const DEFAULT_PROFILE = 'default';
export const PROFILE_ENV = 'COMPANY_DATA_PROFILE';
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The profile in force, with what chose it. */
export interface ProfileChoice extends Setting<string> {
  /** "from --profile", "from COMPANY_DATA_PROFILE", "current_profile in /path/config.json"; none for the default. */
  why?: string;
}

export function parseProfileName(raw: unknown, origin: Origin): string {
  if (typeof raw === 'string' && PROFILE_NAME.test(raw)) return raw;
  throw invalid(
    origin,
    `a profile name is letters, digits, - and _ (at most 64, starting with a letter or digit), got ${JSON.stringify(raw)}`,
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The named profiles of the file (not the default one), checked for shape. */
function namedProfiles(file: ConfigFile | undefined, path: string): Record<string, ProfileMembers> {
  const profiles = file?.profiles;
  if (profiles === undefined) return {};
  if (!isObject(profiles))
    throw configError(`profiles in ${path} must be an object of named profiles; fix it or remove it`);
  for (const [name, members] of Object.entries(profiles)) {
    if (name === DEFAULT_PROFILE)
      throw configError(
        `profiles.default in ${path}: the default profile is the file's top-level settings; move its members to the top level`,
      );
    if (!isObject(members)) throw configError(`profiles.${name} in ${path} must be an object of settings`);
  }
  return profiles as Record<string, ProfileMembers>;
}

/** Every profile of the file, the default one first, the others in the file's order. */
export function profileNames(file: ConfigFile | undefined, path: string): string[] {
  return [DEFAULT_PROFILE, ...Object.keys(namedProfiles(file, path))];
}

/** The profile names of the config file for shell completion: never an error, at least "default". */
export async function readProfileNames(env: NodeJS.ProcessEnv): Promise<string[]> {
  const path = configFilePath(env);
  try {
    return profileNames(await readConfigFile(path, { checkPermissions: false }), path);
  } catch {
    return [DEFAULT_PROFILE];
  }
}

/** A profile's stored settings; undefined when the file has no profile of that name. */
export function storedProfile(
  file: ConfigFile | undefined,
  path: string,
  name: string,
): ProfileMembers | undefined {
  const named = namedProfiles(file, path);
  if (name === DEFAULT_PROFILE) {
    if (!file) return {};
    const { profiles: _profiles, current_profile: _current, ...members } = file;
    return members;
  }
  return Object.hasOwn(named, name) ? named[name] : undefined;
}

/** --profile, else COMPANY_DATA_PROFILE, else the file's current_profile (`config use`), else "default". */
export function chooseProfile(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv,
  file: ConfigFile | undefined,
  path: string,
): ProfileChoice {
  const picked = pick(flags.profile, '--profile', env, PROFILE_ENV, {
    raw: file?.current_profile,
    label: `current_profile in ${path}`,
  });
  if (!picked) return { value: DEFAULT_PROFILE, source: 'default' };
  return {
    value: parseProfileName(picked.raw, picked.origin),
    source: picked.origin.source,
    why: picked.origin.source === 'config file' ? picked.origin.label : `from ${picked.origin.label}`,
  };
}

/** Why a profile is in force, in words (doctor, `config list`). */
export function profileReason(source: SettingSource): string {
  switch (source) {
    case 'flag':
      return 'from --profile';
    case 'environment':
      return `from ${PROFILE_ENV}`;
    case 'config file':
      return 'chosen with `config use`';
    default:
      return "none chosen: the config file's top-level settings";
  }
}

/** A profile that does not exist: exit 2, naming the ones that do and how to create it. */
export function unknownProfile(name: string, names: string[], why?: string): Problem {
  const other =
    why === `from ${PROFILE_ENV}`
      ? `unset ${PROFILE_ENV} (or set it to one of those)`
      : why === 'from --profile'
        ? 'give --profile one of those'
        : 'choose one of those with `company-data config use <profile>`';
  return usageError(
    `there is no profile "${name}"${why ? ` (${why})` : ''}; the profiles are: ${names.join(', ')}`,
    `Create it with \`company-data config set-key --profile ${name}\` (the key from stdin), or ${other}; \`company-data config list\` lists them.`,
  );
}

/** The settings of the profile in force; an unknown profile is refused. */
function profileInForce(
  file: ConfigFile | undefined,
  path: string,
  choice: ProfileChoice,
): { members: ProfileMembers; label: (member: string) => string } {
  const members = storedProfile(file, path, choice.value);
  if (!members) throw unknownProfile(choice.value, profileNames(file, path), choice.why);
  const prefix = choice.value === DEFAULT_PROFILE ? '' : `profiles.${choice.value}.`;
  return { members, label: (member) => `${prefix}${member} in ${path}` };
}

/** The settings of the profile in force, read however the file is, for doctor; throws as resolveConfig. */
export function profileSettings(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv,
  file: ConfigFile | undefined,
  path: string,
): { profile: ProfileChoice; members: ProfileMembers } {
  const profile = chooseProfile(flags, env, file, path);
  return { profile, members: profileInForce(file, path, profile).members };
}

/** The file with one profile's settings replaced by `change(its settings)`; a new profile is added. */
export function updateProfile(
  file: ConfigFile,
  path: string,
  name: string,
  change: (members: ProfileMembers) => ProfileMembers,
): ConfigFile {
  const members = storedProfile(file, path, name) ?? {};
  if (name === DEFAULT_PROFILE) {
    const { profiles, current_profile } = file;
    return { ...change(members), current_profile, profiles };
  }
  return { ...file, profiles: { ...namedProfiles(file, path), [name]: change(members) } };
}

/** The API key of stored settings, when there is one. */
export function storedKey(members: ProfileMembers): string | undefined {
  return typeof members.api_key === 'string' && members.api_key.trim() !== ''
    ? members.api_key.trim()
    : undefined;
}

export async function resolveConfig(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv,
  stdoutIsTTY: boolean,
  options: { missingProfile?: 'refuse' | 'empty' } = {},
): Promise<Config> {
  const configPath = configFilePath(env);
  const file = await readConfigFile(configPath);
  const profile = chooseProfile(flags, env, file, configPath);
  // `config list` lists the profiles that exist even when the one chosen does not: it is where
  // the way out of that mistake is found.
  const missing =
    options.missingProfile === 'empty' && storedProfile(file, configPath, profile.value) === undefined;
  const { members, label } = missing
    ? { members: {} as ProfileMembers, label: (member: string) => member }
    : profileInForce(file, configPath, profile);
  const from = (flag: string | undefined, flagName: string, envName: string, member: keyof ProfileMembers) =>
    pick(flag, flagName, env, envName, { raw: members[member], label: label(String(member)) });

  const baseUrlPick = from(flags.baseUrl, '--base-url', 'COMPANY_DATA_BASE_URL', 'base_url');
  const baseUrl = baseUrlPick ? setting(baseUrlPick, parseBaseUrl, '') : undefined;

  let apiKey: Setting<string> | undefined;
  const fileKey = storedKey(members);
  if (flags.apiKeyFile !== undefined) {
    apiKey = { value: await readKeyFile(flags.apiKeyFile), source: 'flag' };
  } else if (env.COMPANY_DATA_API_KEY?.trim()) {
    apiKey = { value: env.COMPANY_DATA_API_KEY.trim(), source: 'environment' };
  } else if (fileKey) {
    apiKey = { value: fileKey, source: 'config file' };
  }

  const defaultFormat: Format = stdoutIsTTY ? 'table' : 'json';
  return {
    profile: { value: profile.value, source: profile.source, ...(missing ? { missing } : {}) },
    baseUrl,
    apiKey,
    authHeader: setting(
      from(flags.authHeader, '--auth-header', 'COMPANY_DATA_AUTH_HEADER', 'auth_header'),
      parseAuthHeader,
      'bearer',
    ),
    format: setting(
      from(flags.format, '--format', 'COMPANY_DATA_FORMAT', 'format'),
      parseFormat,
      defaultFormat,
    ),
    timeoutMs: setting(
      from(flags.timeout, '--timeout', 'COMPANY_DATA_TIMEOUT', 'timeout'),
      parseTimeoutMs,
      DEFAULT_TIMEOUT_SECONDS * 1000,
    ),
    retries: setting(
      from(flags.retries, '--retries', 'COMPANY_DATA_RETRIES', 'retries'),
      parseRetries,
      DEFAULT_RETRIES,
    ),
    storeConnections: setting(
      from(undefined, '', 'COMPANY_DATA_STORE_CONNECTIONS', 'store_connections'),
      parseStoreConnections,
      DEFAULT_STORE_CONNECTIONS,
    ),
    creditHeaders: creditHeadersOf(
      from(undefined, '', 'COMPANY_DATA_CREDITS_CHARGED_HEADER', 'credits_charged_header'),
      from(undefined, '', 'COMPANY_DATA_CREDITS_REMAINING_HEADER', 'credits_remaining_header'),
    ),
    allowInsecureHttp: Boolean(flags.allowInsecureHttp),
    csvRaw: Boolean(flags.csvRaw),
    configPath,
    cacheDir: cacheDirFor(env),
  };
}
