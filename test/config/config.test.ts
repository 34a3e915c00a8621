import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  profileNames,
  readProfileNames,
  redactKey,
  resolveConfig,
  updateProfile,
  writeConfigFile,
} from '../../src/config.js';
import { Problem } from '../../src/problem.js';

let home: string;
let env: NodeJS.ProcessEnv;
let configPath: string;

function writeConfig(data: unknown, mode = 0o600): void {
  mkdirSync(join(home, 'company-data'), { recursive: true, mode: 0o700 });
  writeFileSync(configPath, JSON.stringify(data));
  chmodSync(configPath, mode);
}

async function problemOf(promise: Promise<unknown>): Promise<Problem> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Problem) return error;
    throw error;
  }
  throw new Error('expected a Problem');
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'cd-config-'));
  env = { XDG_CONFIG_HOME: home, XDG_CACHE_HOME: join(home, 'cache') };
  configPath = join(home, 'company-data', 'config.json');
});

afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

describe('resolveConfig precedence', () => {
  it('uses defaults when nothing is set', async () => {
    const c = await resolveConfig({}, env, false);
    expect(c.baseUrl).toBeUndefined();
    expect(c.apiKey).toBeUndefined();
    expect(c.authHeader).toEqual({ value: 'bearer', source: 'default' });
    expect(c.format).toEqual({ value: 'json', source: 'default' });
    expect(c.timeoutMs).toEqual({ value: 30_000, source: 'default' });
    expect(c.retries).toEqual({ value: 3, source: 'default' });
    expect(c.configPath).toBe(configPath);
    expect(c.cacheDir).toBe(join(home, 'cache', 'company-data'));
  });

  it('defaults to a table on a terminal', async () => {
    expect((await resolveConfig({}, env, true)).format).toEqual({ value: 'table', source: 'default' });
  });

  it('config file < environment < flags, each with its source', async () => {
    writeConfig({
      base_url: 'https://file.example',
      api_key: 'file_key_123456',
      auth_header: 'x-api-key',
      format: 'csv',
      timeout: 5,
      retries: 1,
    });
    const fromFile = await resolveConfig({}, env, false);
    expect(fromFile.baseUrl).toEqual({ value: 'https://file.example', source: 'config file' });
    expect(fromFile.apiKey).toEqual({ value: 'file_key_123456', source: 'config file' });
    expect(fromFile.authHeader).toEqual({ value: 'x-api-key', source: 'config file' });
    expect(fromFile.format).toEqual({ value: 'csv', source: 'config file' });
    expect(fromFile.timeoutMs).toEqual({ value: 5000, source: 'config file' });
    expect(fromFile.retries).toEqual({ value: 1, source: 'config file' });

    const withEnv = {
      ...env,
      COMPANY_DATA_BASE_URL: 'https://env.example',
      COMPANY_DATA_API_KEY: 'env_key_1234567',
      COMPANY_DATA_FORMAT: 'ndjson',
      COMPANY_DATA_TIMEOUT: '0.5',
      COMPANY_DATA_RETRIES: '0',
    };
    const fromEnv = await resolveConfig({}, withEnv, false);
    expect(fromEnv.baseUrl).toEqual({ value: 'https://env.example', source: 'environment' });
    expect(fromEnv.apiKey).toEqual({ value: 'env_key_1234567', source: 'environment' });
    expect(fromEnv.format).toEqual({ value: 'ndjson', source: 'environment' });
    expect(fromEnv.timeoutMs).toEqual({ value: 500, source: 'environment' });
    expect(fromEnv.retries).toEqual({ value: 0, source: 'environment' });
    expect(fromEnv.authHeader.source).toBe('config file');

    const keyFile = join(home, 'key.txt');
    writeFileSync(keyFile, '  flag_key_abcdef\n', { mode: 0o600 });
    const fromFlags = await resolveConfig(
      { baseUrl: 'https://flag.example', apiKeyFile: keyFile, format: 'table', timeout: '2', retries: '4' },
      withEnv,
      false,
    );
    expect(fromFlags.baseUrl).toEqual({ value: 'https://flag.example', source: 'flag' });
    expect(fromFlags.apiKey).toEqual({ value: 'flag_key_abcdef', source: 'flag' });
    expect(fromFlags.format).toEqual({ value: 'table', source: 'flag' });
    expect(fromFlags.timeoutMs).toEqual({ value: 2000, source: 'flag' });
    expect(fromFlags.retries).toEqual({ value: 4, source: 'flag' });
  });

  it('attributes a flag that Commander filled from the environment to the environment', async () => {
    const c = await resolveConfig({ format: 'csv' }, { ...env, COMPANY_DATA_FORMAT: 'csv' }, false);
    expect(c.format).toEqual({ value: 'csv', source: 'environment' });
  });
});

describe('invalid settings name the setting and its source', () => {
  it.each([
    [{ format: 'xml' }, {}, 'usage_error', '--format'],
    [{ timeout: 'abc' }, {}, 'usage_error', '--timeout'],
    [{ timeout: '0' }, {}, 'usage_error', 'positive number'],
    [{ retries: '11' }, {}, 'usage_error', '--retries'],
    [{ retries: '-1' }, {}, 'usage_error', 'from 0 to 10'],
    [{}, { COMPANY_DATA_AUTH_HEADER: 'basic' }, 'config_error', 'COMPANY_DATA_AUTH_HEADER (environment)'],
    [{}, { COMPANY_DATA_TIMEOUT: '-3' }, 'config_error', 'COMPANY_DATA_TIMEOUT'],
    [{ baseUrl: 'ftp://x' }, {}, 'usage_error', '--base-url'],
  ])('%j %j -> %s mentioning %s', async (flags, extraEnv, code, mention) => {
    const p = await problemOf(resolveConfig(flags, { ...env, ...extraEnv }, false));
    expect(p.code).toBe(code);
    expect(p.exitCode).toBe(2);
    expect(p.detail).toContain(mention);
  });

  it('a bad value in the config file names the file', async () => {
    writeConfig({ retries: 99 });
    const p = await problemOf(resolveConfig({}, env, false));
    expect(p.code).toBe('config_error');
    expect(p.detail).toContain(`retries in ${configPath}`);
  });

  it('a config file that is not a JSON object is a config_error', async () => {
    mkdirSync(join(home, 'company-data'), { recursive: true });
    writeFileSync(configPath, '{not json', { mode: 0o600 });
    expect((await problemOf(resolveConfig({}, env, false))).code).toBe('config_error');
  });
});

describe('file permissions', () => {
  it('refuses a config file readable by others, and accepts 0600', async () => {
    writeConfig({ api_key: 'file_key_123456' }, 0o644);
    const p = await problemOf(resolveConfig({}, env, false));
    expect(p.code).toBe('config_error');
    expect(p.exitCode).toBe(2);
    expect(p.detail).toContain(`chmod 600 ${configPath}`);
    expect(p.message).not.toContain('file_key_123456');

    writeConfig({ api_key: 'file_key_123456' }, 0o600);
    expect((await resolveConfig({}, env, false)).apiKey?.value).toBe('file_key_123456');
  });

  it('refuses a key file readable by the group, and accepts 0600', async () => {
    const keyFile = join(home, 'key.txt');
    writeFileSync(keyFile, 'secret_key_value\n');
    chmodSync(keyFile, 0o640);
    const p = await problemOf(resolveConfig({ apiKeyFile: keyFile }, env, false));
    expect(p.code).toBe('config_error');
    expect(p.detail).toContain(`chmod 600 ${keyFile}`);
    expect(p.detail).not.toContain('secret_key_value');

    chmodSync(keyFile, 0o600);
    expect((await resolveConfig({ apiKeyFile: keyFile }, env, false)).apiKey).toEqual({
      value: 'secret_key_value',
      source: 'flag',
    });
  });

  it('a missing or empty key file is a config_error', async () => {
    expect((await problemOf(resolveConfig({ apiKeyFile: join(home, 'nope') }, env, false))).code).toBe(
      'config_error',
    );
    const empty = join(home, 'empty');
    writeFileSync(empty, '\n', { mode: 0o600 });
    expect((await problemOf(resolveConfig({ apiKeyFile: empty }, env, false))).detail).toContain('empty');
  });
});

describe('writeConfigFile', () => {
  it('creates the directory 0700 and the file 0600, leaving no temporary file', async () => {
    await writeConfigFile(configPath, { api_key: 'k_1234567890' });
    expect(statSync(join(home, 'company-data')).mode & 0o777).toBe(0o700);
    expect(statSync(configPath).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({ api_key: 'k_1234567890' });
    expect(readdirSync(join(home, 'company-data'))).toEqual(['config.json']);
  });

  it('replaces a world-readable file with a private one', async () => {
    writeConfig({ format: 'csv' }, 0o644);
    await writeConfigFile(configPath, { format: 'json' });
    expect(statSync(configPath).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({ format: 'json' });
  });
});

describe('profiles', () => {
  const FILE = {
    api_key: 'top_key_1234567',
    format: 'csv',
    current_profile: 'cron',
    profiles: { cron: { api_key: 'cron_key_123456', retries: 1 }, ci: { base_url: 'https://ci.example' } },
  };

  it('a flat file is the default profile, with every member as before', async () => {
    writeConfig({ api_key: 'top_key_1234567', base_url: 'https://file.example', retries: 2 });
    const c = await resolveConfig({}, env, false);
    expect(c.profile).toEqual({ value: 'default', source: 'default' });
    expect(c.apiKey).toEqual({ value: 'top_key_1234567', source: 'config file' });
    expect(c.baseUrl).toEqual({ value: 'https://file.example', source: 'config file' });
    expect(c.retries).toEqual({ value: 2, source: 'config file' });
  });

  it('--profile > COMPANY_DATA_PROFILE > current_profile > default, each with its source', async () => {
    writeConfig(FILE);
    const chosen = async (flags: { profile?: string }, extra: NodeJS.ProcessEnv = {}) =>
      (await resolveConfig(flags, { ...env, ...extra }, false)).profile;
    expect(await chosen({})).toEqual({ value: 'cron', source: 'config file' });
    expect(await chosen({}, { COMPANY_DATA_PROFILE: 'ci' })).toEqual({ value: 'ci', source: 'environment' });
    expect(await chosen({}, { COMPANY_DATA_PROFILE: '' })).toEqual({ value: 'cron', source: 'config file' });
    expect(await chosen({ profile: 'default' }, { COMPANY_DATA_PROFILE: 'ci' })).toEqual({
      value: 'default',
      source: 'flag',
    });
    writeConfig({ ...FILE, current_profile: undefined });
    expect(await chosen({})).toEqual({ value: 'default', source: 'default' });
  });

  it("a named profile's settings, and nothing of the top level's", async () => {
    writeConfig(FILE);
    const cron = await resolveConfig({}, env, false);
    expect(cron.apiKey).toEqual({ value: 'cron_key_123456', source: 'config file' });
    expect(cron.retries).toEqual({ value: 1, source: 'config file' });
    expect(cron.format).toEqual({ value: 'json', source: 'default' });
    const ci = await resolveConfig({ profile: 'ci' }, env, false);
    expect(ci.apiKey).toBeUndefined();
    expect(ci.baseUrl).toEqual({ value: 'https://ci.example', source: 'config file' });
    // Flags and the environment still win over the profile.
    const overridden = await resolveConfig(
      { retries: '4' },
      { ...env, COMPANY_DATA_API_KEY: 'env_key_1234567' },
      false,
    );
    expect(overridden.retries).toEqual({ value: 4, source: 'flag' });
    expect(overridden.apiKey).toEqual({ value: 'env_key_1234567', source: 'environment' });
  });

  it.each([
    [
      { profile: 'nope' },
      {},
      'there is no profile "nope" (from --profile); the profiles are: default, cron, ci',
    ],
    [{}, { COMPANY_DATA_PROFILE: 'nope' }, 'there is no profile "nope" (from COMPANY_DATA_PROFILE)'],
    // A name that Object.prototype has is no profile either.
    [{ profile: 'constructor' }, {}, 'there is no profile "constructor"'],
  ])('an unknown profile %j %j is a usage error (exit 2)', async (flags, extra, detail) => {
    writeConfig(FILE);
    const p = await problemOf(resolveConfig(flags, { ...env, ...extra }, false));
    expect(p.code).toBe('usage_error');
    expect(p.exitCode).toBe(2);
    expect(p.detail).toContain(detail);
    expect(p.hint).toContain('company-data config set-key --profile');
  });

  it('an unknown current_profile names the file; a bad name from the environment is a config_error', async () => {
    writeConfig({ current_profile: 'gone' });
    const p = await problemOf(resolveConfig({}, env, false));
    expect(p.detail).toBe(
      `there is no profile "gone" (current_profile in ${configPath}); the profiles are: default`,
    );
    const bad = await problemOf(resolveConfig({}, { ...env, COMPANY_DATA_PROFILE: 'a b' }, false));
    expect(bad.code).toBe('config_error');
    expect(bad.detail).toContain('COMPANY_DATA_PROFILE (environment): a profile name is');
  });

  it.each([
    [{ profiles: [] }, 'profiles in'],
    [{ profiles: { cron: 'key' } }, 'profiles.cron in'],
    [{ profiles: { default: {} } }, 'profiles.default in'],
  ])('a malformed %j is a config_error', async (data, mention) => {
    writeConfig(data);
    const p = await problemOf(resolveConfig({}, env, false));
    expect(p.code).toBe('config_error');
    expect(p.detail).toContain(mention);
  });

  it('profileNames: default first, then the file order; readProfileNames never fails', async () => {
    expect(profileNames(undefined, configPath)).toEqual(['default']);
    expect(profileNames(FILE, configPath)).toEqual(['default', 'cron', 'ci']);
    expect(await readProfileNames(env)).toEqual(['default']);
    writeConfig(FILE, 0o644);
    expect(await readProfileNames(env)).toEqual(['default', 'cron', 'ci']);
    writeConfig({ profiles: 3 });
    expect(await readProfileNames(env)).toEqual(['default']);
  });

  it('updateProfile changes one profile; writeConfigFile puts settings, current_profile, profiles in that order', async () => {
    const withKey = updateProfile(FILE, configPath, 'ci', (m) => ({ ...m, api_key: 'ci_key_12345678' }));
    expect(withKey.profiles?.ci).toEqual({ base_url: 'https://ci.example', api_key: 'ci_key_12345678' });
    expect(withKey.profiles?.cron).toEqual(FILE.profiles.cron);
    const top = updateProfile(FILE, configPath, 'default', ({ format: _f, ...rest }) => rest);
    await writeConfigFile(configPath, { ...top, retries: 3 });
    expect(Object.keys(JSON.parse(readFileSync(configPath, 'utf8')))).toEqual([
      'api_key',
      'retries',
      'current_profile',
      'profiles',
    ]);
    const added = updateProfile({}, configPath, 'new', () => ({ format: 'json' }));
    expect(added).toEqual({ profiles: { new: { format: 'json' } } });
  });
});

describe('redactKey', () => {
  it('shows the first and last four characters of a long key, nothing of a short one', () => {
    expect(redactKey('cd_sandbox_full_7f3a9c2e')).toBe('cd_s…9c2e');
    expect(redactKey('short')).toBe('***');
  });
});

describe('store connections (a PostgreSQL store)', () => {
  it('2 by default, the profile’s store_connections, the environment over it; outside 2..32 refused by origin', async () => {
    expect((await resolveConfig({}, env, false)).storeConnections).toEqual({ value: 2, source: 'default' });
    writeConfig({ store_connections: 4 });
    expect((await resolveConfig({}, env, false)).storeConnections).toEqual({
      value: 4,
      source: 'config file',
    });
    const withEnv = { ...env, COMPANY_DATA_STORE_CONNECTIONS: '3' };
    expect((await resolveConfig({}, withEnv, false)).storeConnections).toEqual({
      value: 3,
      source: 'environment',
    });
    const one = await problemOf(resolveConfig({}, { ...env, COMPANY_DATA_STORE_CONNECTIONS: '1' }, false));
    expect([one.code, one.detail]).toEqual([
      'config_error',
      `COMPANY_DATA_STORE_CONNECTIONS (environment): store connections must be a whole number from 2 (one holds the process's lock, one runs its statements) to 32, got "1"`,
    ]);
    writeConfig({ store_connections: 'many' });
    const bad = await problemOf(resolveConfig({}, env, false));
    expect(bad.detail).toBe(
      `store_connections in ${configPath}: store connections must be a whole number from 2 (one holds the process's lock, one runs its statements) to 32, got "many"`,
    );
  });
});
