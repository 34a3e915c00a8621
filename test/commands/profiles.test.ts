// Profiles, in-process against a real sandbox over loopback, a run after another on one config
// directory: each profile's own key reaches the service, `config use` changes the default,
// --profile and COMPANY_DATA_PROFILE override it, and a config file written before profiles
// existed keeps working unchanged.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashComplete } from '../helpers/bash-complete.js';
import { type InProcessResult as RunResult, runInProcess } from '../helpers/in-process.js';
import { clearRequestLog, readRequestLog, type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let home: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  home = mkdtempSync(join(tmpdir(), 'cd-e2e-profiles-'));
});

afterAll(async () => {
  await sandbox?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

interface Setup {
  dir: string;
  configFile: string;
  cli(args: string[], options?: { env?: Record<string, string>; input?: string }): Promise<RunResult>;
}

/** A fresh config directory; the environment names no key and no service. */
function setup(): Setup {
  const dir = mkdtempSync(join(home, 'run-'));
  const env = { XDG_CONFIG_HOME: join(dir, 'config'), XDG_CACHE_HOME: join(dir, 'cache') };
  return {
    dir,
    configFile: join(dir, 'config', 'company-data', 'config.json'),
    cli: (args, options = {}) =>
      runInProcess(args, { env: { ...env, ...options.env }, stdin: options.input }),
  };
}

async function ok(run: Promise<RunResult>): Promise<RunResult> {
  const r = await run;
  expect(r.code, r.stderr).toBe(0);
  return r;
}

/** The sandbox's name of the key a `me` call was answered for. */
async function keyName(s: Setup, args: string[], env: Record<string, string> = {}): Promise<string> {
  const r = await ok(s.cli([...args, 'me', '-o', 'json'], { env }));
  return (JSON.parse(r.stdout) as { key_name: string }).key_name;
}

/** Two profiles on the sandbox: the default one with the full key, cron with the free key. */
async function twoProfiles(): Promise<Setup> {
  const s = setup();
  await ok(s.cli(['config', 'set-key'], { input: `${sandbox.keys.full}\n` }));
  await ok(s.cli(['config', 'set', 'base-url', sandbox.url]));
  await ok(s.cli(['config', 'set-key', '--profile', 'cron'], { input: `${sandbox.keys.free}\n` }));
  await ok(s.cli(['--profile', 'cron', 'config', 'set', 'base-url', sandbox.url]));
  return s;
}

describe('two profiles with different sandbox keys', () => {
  it('answer `me` for different keys, each sending only its own key', async () => {
    const s = await twoProfiles();
    expect(JSON.parse(readFileSync(s.configFile, 'utf8'))).toEqual({
      api_key: sandbox.keys.full,
      base_url: sandbox.url,
      profiles: { cron: { api_key: sandbox.keys.free, base_url: sandbox.url } },
    });
    expect(statSync(s.configFile).mode & 0o777).toBe(0o600);

    await clearRequestLog(sandbox.url);
    expect(await keyName(s, [])).toBe('full');
    expect(await keyName(s, ['--profile', 'cron'])).toBe('free');
    const me = (await readRequestLog(sandbox.url)).filter((e) => e.path === '/api/me');
    expect(me.map((e) => e.key_name)).toEqual(['full', 'free']);
  });

  it('`config use` switches the default; --profile and COMPANY_DATA_PROFILE override it, the flag first', async () => {
    const s = await twoProfiles();
    const use = await ok(s.cli(['config', 'use', 'cron']));
    expect(use.stderr).toBe(`Now using profile cron (current_profile in ${s.configFile}).\n`);
    expect(JSON.parse(readFileSync(s.configFile, 'utf8')).current_profile).toBe('cron');

    expect(await keyName(s, [])).toBe('free');
    expect(await keyName(s, ['--profile', 'default'])).toBe('full');
    expect(await keyName(s, [], { COMPANY_DATA_PROFILE: 'default' })).toBe('full');
    expect(await keyName(s, ['--profile', 'cron'], { COMPANY_DATA_PROFILE: 'default' })).toBe('free');
    // The key from the environment still wins over the profile's, as every setting does.
    expect(await keyName(s, [], { COMPANY_DATA_API_KEY: sandbox.keys.restricted })).toBe('restricted');

    await ok(s.cli(['config', 'use', 'default']));
    expect(JSON.parse(readFileSync(s.configFile, 'utf8')).current_profile).toBeUndefined();
    expect(await keyName(s, [])).toBe('full');
  });

  it('`config list` piped, `config show` and doctor name the profile in force and why', async () => {
    const s = await twoProfiles();
    const list = await ok(s.cli(['config', 'list'], { env: { COMPANY_DATA_PROFILE: 'cron' } }));
    const profile = (name: string, active: boolean, key: string) => ({
      profile: name,
      active,
      'api-key': key,
      'base-url': sandbox.url,
      'auth-header': null,
      format: null,
      timeout: null,
      retries: null,
    });
    expect(list.stdout).toBe(
      `${JSON.stringify([profile('default', false, 'cd_s…9c2e'), profile('cron', true, 'cd_s…1a77')], null, 2)}\n`,
    );
    expect(list.stderr).toBe('In force: cron (from COMPANY_DATA_PROFILE).\n');
    expect(list.stdout + list.stderr).not.toContain(sandbox.keys.free);

    const show = await ok(s.cli(['--profile', 'cron', 'config', 'show']));
    expect(JSON.parse(show.stdout).slice(0, 3)).toEqual([
      { setting: 'profile', value: 'cron', source: 'flag' },
      { setting: 'base-url', value: sandbox.url, source: 'config file' },
      { setting: 'api-key', value: 'cd_s…1a77', source: 'config file' },
    ]);

    const doctor = await ok(s.cli(['--profile', 'cron', 'doctor']));
    const checks = (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; message: string }> }).checks;
    expect(checks.find((c) => c.name === 'profile')?.message).toBe('cron (from --profile)');
    expect(checks.find((c) => c.name === 'key')?.message).toBe(
      'valid (from config file, plan free, balance 1,000)',
    );
  });

  it('an unknown profile: exit 2 with the profiles there are and how to create it', async () => {
    const s = await twoProfiles();
    const r = await s.cli(['--profile', 'nightly', '-o', 'table', 'me']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toBe(
      [
        'error: Usage error (usage_error)',
        '  there is no profile "nightly" (from --profile); the profiles are: default, cron',
        '  Create it with `company-data config set-key --profile nightly` (the key from stdin), or give --profile one of those; `company-data config list` lists them.',
        '',
      ].join('\n'),
    );
  });
});

describe('a config file from before profiles', () => {
  it('loads unchanged as the default profile, and keeps its members when a profile is added', async () => {
    const s = setup();
    mkdirSync(join(s.dir, 'config', 'company-data'), { recursive: true, mode: 0o700 });
    // Literally what `config set-key` and `config set base-url` wrote before profiles existed.
    const old = `{\n  "api_key": "${sandbox.keys.restricted}",\n  "base_url": "${sandbox.url}"\n}\n`;
    writeFileSync(s.configFile, old, { mode: 0o600 });

    expect(await keyName(s, [])).toBe('restricted');
    const show = await ok(s.cli(['config', 'show']));
    expect(JSON.parse(show.stdout)[0]).toEqual({ setting: 'profile', value: 'default', source: 'default' });
    const list = await ok(s.cli(['config', 'list']));
    expect(JSON.parse(list.stdout).map((p: { profile: string }) => p.profile)).toEqual(['default']);
    // Reading never rewrites it.
    expect(readFileSync(s.configFile, 'utf8')).toBe(old);

    await ok(s.cli(['config', 'set-key', '--profile', 'cron'], { input: sandbox.keys.free }));
    const text = readFileSync(s.configFile, 'utf8');
    // The old members stay first and as they were: a company-data from before profiles reads
    // this file exactly as before (it ignores `profiles`).
    expect(text.startsWith(old.slice(0, old.lastIndexOf('"\n}')))).toBe(true);
    expect(JSON.parse(text)).toEqual({
      api_key: sandbox.keys.restricted,
      base_url: sandbox.url,
      profiles: { cron: { api_key: sandbox.keys.free } },
    });
    expect(await keyName(s, [])).toBe('restricted');
  });
});

describe('bash completion', () => {
  it('offers the profile names for --profile and config use', async () => {
    const s = await twoProfiles();
    const r = await ok(s.cli(['completion', 'bash']));
    const script = join(s.dir, 'company-data.bash');
    writeFileSync(script, r.stdout);
    const complete = (words: string[]) => bashComplete(script, words);
    expect(complete(['company-data', '--profile', ''])).toEqual(['default', 'cron']);
    expect(complete(['company-data', 'me', '--profile', 'c'])).toEqual(['cron']);
    expect(complete(['company-data', 'config', 'use', ''])).toEqual(['default', 'cron']);
  });
});
