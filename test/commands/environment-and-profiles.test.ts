// `help environment` (every variable the source reads, what it sets, what wins over it) and
// `config delete-profile` (issue 46), in-process with exact output; --log-format timestamped.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { environmentNames } from '../../src/environment.js';
import { ROOT } from '../helpers/cli.js';
import { type CommandCase, DIR, expectCase, KEYS, lines, usageLine } from '../helpers/command-cases.js';
import { FIXED_NOW, runInProcess } from '../helpers/in-process.js';

/** Every .ts file under src/. */
function sources(dir = join(ROOT, 'src')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('help environment', () => {
  it('lists every environment variable the source reads', () => {
    const read = new Set<string>();
    for (const file of sources()) {
      if (file.includes(`${join('src', 'sandbox')}`)) continue; // the sandbox server reads none of a user's
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\benv(?:\?)?\.([A-Z][A-Z0-9_]+)\b/g)) read.add(m[1]);
      for (const m of text.matchAll(/\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g)) read.add(m[1]);
      for (const m of text.matchAll(/fromEnv\('([A-Z][A-Z0-9_]+)'\)/g)) read.add(m[1]);
      for (const m of text.matchAll(/['"`](COMPANY_DATA_[A-Z_]+)['"`]/g)) read.add(m[1]);
    }
    expect(read.size).toBeGreaterThan(20);
    const listed = new Set(environmentNames());
    expect([...read].filter((name) => !listed.has(name)).sort()).toEqual([]);
  });

  it('prints them at 80 columns when piped, and as wide as the terminal says', async () => {
    const piped = await runInProcess(['help', 'environment'], { env: { COLUMNS: undefined } });
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe('');
    for (const line of piped.stdout.split('\n')) expect([...line].length).toBeLessThanOrEqual(80);
    expect(piped.stdout.split('\n').slice(0, 8)).toEqual([
      'Environment variables that company-data reads, what each sets and what wins over',
      'it.',
      '',
      'Settings (a flag wins over its variable; the variable over the config file; both',
      '  over defaults):',
      '  COMPANY_DATA_BASE_URL',
      '      the service root URL (--base-url wins)',
      '  COMPANY_DATA_API_KEY',
    ]);
    for (const name of environmentNames()) expect(piped.stdout).toContain(name);
    const wide = await runInProcess(['help', 'environment'], { tty: true, columns: 120 });
    expect(wide.stdout.split('\n')[0]).toBe(
      'Environment variables that company-data reads, what each sets and what wins over it.',
    );
  });

  it('is named at the end of the program help', async () => {
    const r = await runInProcess(['--help'], { env: { COLUMNS: undefined } });
    expect(r.stdout).toContain(
      'Environment variables: company-data help environment. Manual: man company-data.',
    );
  });
});

const CONFIG = 'config/company-data/config.json';
const CONFIG_FILE = `${DIR}/${CONFIG}`;
const json = (data: unknown) => `${JSON.stringify(data, null, 2)}\n`;
const THREE = {
  api_key: KEYS.full,
  current_profile: 'cron',
  profiles: { cron: { api_key: KEYS.free }, ci: { api_key: KEYS.restricted } },
};

const cases: CommandCase[] = [
  {
    name: 'delete-profile: the profile and its key go; the one in use leaves the default in force',
    argv: ['config', 'delete-profile', 'cron'],
    tty: false,
    files: { [CONFIG]: { text: json(THREE), mode: 0o600 } },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(
      `Deleted profile cron and its key cd_s…1a77 from ${CONFIG_FILE}.`,
      'It was the profile in use: the default profile is now in force.',
    ),
    wantFiles: {
      [CONFIG]: json({ api_key: KEYS.full, profiles: { ci: { api_key: KEYS.restricted } } }),
    },
    wantModes: { [CONFIG]: 0o600 },
  },
  {
    name: 'delete-profile of the last named profile: the file keeps its top-level settings only',
    argv: ['config', 'delete-profile', 'ci'],
    tty: false,
    env: { COMPANY_DATA_PROFILE: 'ci' },
    files: { [CONFIG]: { text: json({ api_key: KEYS.full, profiles: { ci: {} } }), mode: 0o600 } },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(
      `Deleted profile ci from ${CONFIG_FILE}.`,
      'COMPANY_DATA_PROFILE=ci is set here and now names no profile: unset it.',
    ),
    wantFiles: { [CONFIG]: json({ api_key: KEYS.full }) },
  },
  {
    name: 'delete-profile of a profile that does not exist: exit 2, the ones that do',
    argv: ['config', 'delete-profile', 'nightly'],
    tty: false,
    files: { [CONFIG]: { text: json(THREE), mode: 0o600 } },
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine(
      'there is no profile "nightly"; the profiles are: default, cron, ci',
      'Create it with `company-data config set-key --profile nightly` (the key from stdin), or choose one of those with `company-data config use <profile>`; `company-data config list` lists them.',
    ),
    wantFiles: { [CONFIG]: json(THREE) },
  },
  {
    name: 'delete-profile default: refused (the top-level settings), with what to do instead',
    argv: ['config', 'delete-profile', 'default'],
    tty: true,
    files: { [CONFIG]: { text: json(THREE), mode: 0o600 } },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      `  the default profile is the top-level settings of ${CONFIG_FILE}, not a profile that can be deleted`,
      '  Remove its settings one by one with `company-data config unset <name>`.',
    ),
    wantFiles: { [CONFIG]: json(THREE) },
  },
];

describe('config delete-profile', () => {
  it.each(cases)('$name', expectCase);
});

describe('--log-format timestamped', () => {
  const stamp = new Date(FIXED_NOW).toISOString().replace(/\.\d{3}Z$/, 'Z');
  it('starts every stderr line with the UTC time; a JSON problem line carries it as "time"', async () => {
    const text = await runInProcess(['--log-format', 'timestamped', 'config', 'delete-profile', 'nope'], {
      tty: true,
    });
    expect(text.code).toBe(2);
    for (const line of text.stderr.trimEnd().split('\n')) expect(line.startsWith(`${stamp} `)).toBe(true);
    const piped = await runInProcess(['config', 'delete-profile', 'nope'], {
      env: { COMPANY_DATA_LOG_FORMAT: 'timestamped' },
    });
    expect(JSON.parse(piped.stderr)).toMatchObject({ time: stamp, code: 'usage_error' });
  });

  it('a misspelt COMPANY_DATA_LOG_FORMAT is said once and plain lines follow', async () => {
    const r = await runInProcess(['config', 'delete-profile', 'default'], {
      tty: true,
      env: { COMPANY_DATA_LOG_FORMAT: 'stamped', NO_COLOR: '1' },
    });
    expect(r.stderr.split('\n')[0]).toBe(
      'warning: COMPANY_DATA_LOG_FORMAT="stamped" is not one of plain, timestamped; using plain.',
    );
    expect(r.stderr.split('\n')[1]).toBe('error: Usage error (usage_error)');
  });
});
