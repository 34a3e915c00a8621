// The package as a user gets it: `npm pack`, one global install into an empty prefix, then the
// installed bin run from outside the repository, directly and through a symlink.
// Packs the dist/ of `npm run build` (--ignore-scripts: `prepare` would rebuild dist/ in place
// under the other test files that are running the binary).
//
// better-sqlite3, the one native runtime dependency (pg is plain JavaScript), is an addon. Its install script runs
// prebuild-install, which downloads the addon built for this Node from the project's GitHub
// releases, and compiles SQLite from source with node-gyp only when that fails: minutes of CPU on
// a shared machine, and what happens where github.com cannot be reached (as in the test sandbox).
// The install here takes the addon the project's own install built, offered to prebuild-install
// as a local prebuild (npm_config_better_sqlite3_local_prebuilds, its documented way to skip the
// download): the same install script runs, unpacks it and compiles nothing.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ROOT } from '../helpers/cli.js';
import { KEYS } from '../helpers/command-cases.js';
import { cronEnvironment, readmeCrontab } from '../helpers/crontab.js';
import type { SandboxHandle } from '../helpers/sandbox.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { cannotRunHere } from '../helpers/skips.js';

const run = promisify(execFile);
const NPM_TIMEOUT_MS = 120_000;

interface PackFile {
  path: string;
  size: number;
}

let tmp: string;
let prefix: string;
let bin: string;
let tarball: { filename: string; size: number; files: PackFile[] };
const versionOf = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
const version = versionOf(ROOT);
/** The addon the project's install built (the version package-lock.json names). */
const SQLITE_DIR = join(ROOT, 'node_modules', 'better-sqlite3');
const sqliteVersion = versionOf(SQLITE_DIR);
/** Where the global install puts company-data's own dependency. */
const installedSqlite = () =>
  join(prefix, 'lib', 'node_modules', 'company-data', 'node_modules', 'better-sqlite3');
/** npm's environment for an install: prebuild-install finds the addon in `prebuilds`. */
let installEnv: NodeJS.ProcessEnv;

/**
 * A directory holding the project's built addon packed as prebuild-install names its download
 * (better-sqlite3-v<version>-node-v<ABI>-<platform>-<arch>.tar.gz, holding build/Release/).
 */
async function localPrebuilds(dir: string): Promise<string> {
  const prebuilds = join(dir, 'prebuilds');
  mkdirSync(prebuilds);
  const name = `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['-czf', join(prebuilds, name), '-C', SQLITE_DIR, 'build/Release/better_sqlite3.node']);
  return prebuilds;
}

/** The installed CLI, run as a user's shell would: the file itself (shebang), cwd outside the repo. */
async function installed(command: string, args: string[], extraEnv: Record<string, string> = {}) {
  const home = mkdtempSync(join(tmp, 'home-'));
  const env = cleanEnv({
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    ...extraEnv,
  });
  try {
    const { stdout, stderr } = await run(command, args, { cwd: tmp, env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

beforeAll(
  async () => {
    tmp = mkdtempSync(join(tmpdir(), 'cd-e2e-package-'));
    prefix = join(tmp, 'prefix');
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], {
      cwd: ROOT,
      timeout: NPM_TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
    });
    [tarball] = JSON.parse(packed.stdout) as (typeof tarball)[];
    installEnv = { ...process.env, npm_config_better_sqlite3_local_prebuilds: await localPrebuilds(tmp) };
    // The dependencies are in the npm cache already; the registry is only asked for a cache miss.
    await run(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        join(tmp, tarball.filename),
      ],
      { cwd: tmp, timeout: NPM_TIMEOUT_MS, env: installEnv },
    );
    bin = join(prefix, 'bin', 'company-data');
  },
  2 * NPM_TIMEOUT_MS + 10_000,
);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the tarball', () => {
  it('holds the runtime files only: bin, the bundle, examples, README and package.json', () => {
    const paths = tarball.files.map((f) => f.path);
    expect(paths).toContain('bin/company-data.js');
    expect(paths).toContain('dist/cli.cjs');
    expect(paths).toContain('dist/exceljs.cjs');
    expect(paths).toContain('examples/companies.csv');
    // The man page and the JSON Schemas of the output (issue 46).
    expect(paths).toContain('dist/company-data.1');
    expect(paths).toContain('schemas/search.json');
    for (const path of paths) {
      expect(path).toMatch(/^(bin\/|dist\/|examples\/|schemas\/|README\.md$|package\.json$|LICENSE)/);
      expect(path).not.toMatch(/^(src|test|scripts|bench|docs)\/|\.map$|\.ts$/);
    }
    // The bundle carries undici and the rest, about 0.4 MB compressed, and ExcelJS's bundle
    // (dist/exceljs.cjs, for workbooks) 0.3 MB more; the source maps stay out.
    expect(tarball.size).toBeLessThan(1_100_000);
  });
});

describe('the install', () => {
  it('puts better-sqlite3 beside the bundle, the version of the lockfile, from the prebuilt addon', () => {
    expect(versionOf(installedSqlite())).toBe(sqliteVersion);
    expect(existsSync(join(installedSqlite(), 'build', 'Release', 'better_sqlite3.node'))).toBe(true);
    // node-gyp's objects: what a compile from source leaves, and what this install must not cost.
    expect(existsSync(join(installedSqlite(), 'build', 'Release', 'obj.target'))).toBe(false);
  });
});

describe('the installed bin, run from outside the repository', () => {
  it('prints the version of package.json', async () => {
    const r = await installed(bin, ['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });

  it('enriches a showcase domain against the sandbox', async () => {
    const r = await installed(bin, ['--sandbox', 'enrich', 'acme-shoes.com', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).results[0]).toMatchObject({
      domain: 'acme-shoes.com',
      found: true,
      company_name: 'Acme Shoes',
    });
    expect(r.stderr).toMatch(/offline sandbox/);
  });

  it('runs the batch of examples/companies.csv, every row out in order', async () => {
    const input = join(tmp, 'companies.csv');
    copyFileSync(join(ROOT, 'examples', 'companies.csv'), input);
    const r = await installed(bin, [
      '--sandbox',
      'enrich',
      '--input',
      'companies.csv',
      '--output',
      'out.csv',
    ]);
    // The example holds invalid domains on purpose: their rows carry an error code (exit 6).
    expect(r.code).toBe(6);
    const rowsIn = parse(readFileSync(input), { columns: true, bom: true }) as Record<string, string>[];
    type Row = Record<string, string>;
    const rowsOut = parse(readFileSync(join(tmp, 'out.csv')), { columns: true, bom: true }) as Row[];
    expect(rowsOut).toHaveLength(rowsIn.length);
    expect(rowsOut.map((row) => row.website)).toEqual(rowsIn.map((row) => row.website));
    expect(rowsOut.find((row) => row.website === 'acme-shoes.com')).toMatchObject({ found: 'true' });
    expect(rowsOut.some((row) => row.error_code !== '')).toBe(true);
    // A first run on an empty store bought every answer it shows.
    expect(rowsOut.every((row) => row.bought_at === '')).toBe(true);
  });

  it('reads and writes a workbook: its library bundle ships and loads', async () => {
    copyFileSync(join(ROOT, 'examples', 'companies.xlsx'), join(tmp, 'companies.xlsx'));
    const r = await installed(bin, [
      '--sandbox',
      'enrich',
      '--input',
      'companies.xlsx',
      '--output',
      'out.xlsx',
      '--summary-json',
      'summary.json',
    ]);
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).not.toMatch(/DeprecationWarning/);
    const summary = JSON.parse(readFileSync(join(tmp, 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ rows: 25, status: 'done', output: 'out.xlsx' });
    expect(readFileSync(join(tmp, 'out.xlsx')).subarray(0, 2).toString('latin1')).toBe('PK');
  });

  it('works through a symlink, as a package manager or a user links it', async () => {
    const links = join(tmp, 'links');
    mkdirSync(links);
    symlinkSync(bin, join(links, 'cdata'));
    const r = await installed(join(links, 'cdata'), ['--sandbox', 'me', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ plan: 'pro' });
  });

  it(
    'runs through npx from the tarball (its runtime dependencies from the npm cache)',
    async () => {
      const local = {
        npm_config_better_sqlite3_local_prebuilds: installEnv.npm_config_better_sqlite3_local_prebuilds!,
      };
      const r = await installed(
        'npx',
        [
          '--yes',
          '--prefer-offline',
          '--package',
          join(tmp, tarball.filename),
          '--',
          'company-data',
          '--sandbox',
          'enrich',
          'globex.io',
          '-o',
          'json',
        ],
        local,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).results[0]).toMatchObject({ domain: 'globex.io', found: true });
    },
    NPM_TIMEOUT_MS,
  );
});

describe('the man page', () => {
  it('is installed with the package, where man finds it from PATH', () => {
    const page = join(prefix, 'share', 'man', 'man1', 'company-data.1');
    expect(existsSync(page)).toBe(true);
    const text = readFileSync(page, 'utf8');
    expect(text).toMatch(/^\.TH COMPANY-DATA 1 /);
    // Written from the declarations: every command, the environment and the exit codes.
    for (const section of ['.SH COMMANDS', '.SH ENVIRONMENT', '.SH EXIT STATUS', 'COMPANY_DATA_LOG_FORMAT'])
      expect(text).toContain(section);
  });

  it('`man company-data` renders it after the install, at 80 columns', async (context) => {
    const which = await installed('sh', ['-c', 'command -v man']);
    if (cannotRunHere('man', which.code === 0 ? undefined : 'no man here (apt-get install man-db)'))
      return context.skip();
    // man-db finds share/man beside each bin directory of PATH.
    const r = await installed('man', ['company-data'], {
      PATH: `${join(prefix, 'bin')}:/usr/bin:/bin`,
      MANWIDTH: '80',
      MANPAGER: 'cat',
      PAGER: 'cat',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^COMPANY-DATA\(1\)/);
    expect(r.stdout).toContain('company-data search [options] [query]');
    expect(r.stdout).toContain('--dry-run');
    for (const line of r.stdout.split('\n')) expect([...line].length).toBeLessThanOrEqual(80);
  });
});

describe("the README's crontab, run as cron runs it (env -i, cron's PATH)", () => {
  let sandbox: SandboxHandle;
  let scratch: string;
  sandboxAndDirForTests('cd-e2e-cron-', { host: '127.0.0.1', companies: 2000 }, (s, d) => {
    sandbox = s;
    scratch = d;
  });

  /** A fresh home with a `cron` profile holding `key`, and the job's folder with leads.csv. */
  async function cronUser(key: string): Promise<{ home: string; dir: string }> {
    const home = mkdtempSync(join(scratch, 'home-'));
    const dir = join(home, 'leads');
    mkdirSync(dir);
    copyFileSync(join(ROOT, 'examples', 'companies.csv'), join(dir, 'leads.csv'));
    const env = { HOME: home, XDG_CONFIG_HOME: '', XDG_STATE_HOME: '', XDG_CACHE_HOME: '' };
    await run('sh', ['-c', `printf '%s' '${key}' | '${bin}' --profile cron config set-key`], {
      env: cleanEnv(env),
    });
    await run(bin, ['--profile', 'cron', 'config', 'set', 'base-url', sandbox.url], { env: cleanEnv(env) });
    return { home, dir };
  }

  /**
   * The job line under `env -i` with cron's variables and the crontab's, the folder and the lock
   * file made the test's own, and PATH as the README says to write it: the directory that
   * `command -v company-data` prints (and node's) in place of the example's.
   */
  async function runJob(home: string, dir: string, options: { pathLine: boolean }) {
    const crontab = readmeCrontab();
    const variables = { ...cronEnvironment(home), ...crontab.variables };
    const examplePath = crontab.variables.PATH.split(':')[0];
    if (options.pathLine)
      variables.PATH = crontab.variables.PATH.replace(
        examplePath,
        `${join(prefix, 'bin')}:${dirname(process.execPath)}`,
      );
    else variables.PATH = cronEnvironment(home).PATH;
    const command = crontab.command
      .replace('cd /srv/leads', `cd '${dir}'`)
      .replace('/tmp/company-data.lock', join(dir, 'company-data.lock'));
    const assignments = Object.entries(variables).map(([name, value]) => `${name}=${value}`);
    try {
      const { stdout, stderr } = await run('env', ['-i', ...assignments, '/bin/sh', '-c', command], {
        timeout: 60_000,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  const STAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /;

  it('sets PATH and the log format: the batch runs (its exit 6 is no alert), every log line timestamped', async () => {
    expect(readmeCrontab().variables).toMatchObject({ COMPANY_DATA_LOG_FORMAT: 'timestamped' });
    const { home, dir } = await cronUser(KEYS.full);
    const r = await runJob(home, dir, { pathLine: true });
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    const log = readFileSync(join(dir, 'enrich.log'), 'utf8').trimEnd().split('\n');
    expect(log.length).toBeGreaterThan(0);
    for (const line of log) expect(line).toMatch(STAMP);
    // One time a line: the batch's own log lines do not add a second.
    for (const line of log) expect(line.replace(STAMP, '')).not.toMatch(STAMP);
    expect(log.at(-1)).toMatch(/Z Enriched: \d+ rows, \d+ unique domains \(\d+ found, \d+ not found/);
    expect(existsSync(join(dir, 'enriched.csv'))).toBe(true);
  });

  it('a refused key: the alert is the only output, and the log ends with the problem as one JSON line with its time', async () => {
    const { home, dir } = await cronUser('cd_not_a_key_1234');
    const r = await runJob(home, dir, { pathLine: true });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ ALERT company-data exit 3, see ${dir}/enrich\\.log\\n$`,
      ),
    );
    const log = readFileSync(join(dir, 'enrich.log'), 'utf8').trimEnd().split('\n');
    const problem = log.find((line) => line.startsWith('{'));
    expect(JSON.parse(problem ?? '')).toMatchObject({
      code: 'invalid_api_key',
      time: expect.stringMatching(/Z$/),
    });
    for (const line of log) expect(line.startsWith('{') || STAMP.test(line)).toBe(true);
    expect(log.at(-1)).toBe(r.stdout.trimEnd());
  });

  it("without the PATH line (cron's own PATH) the job cannot find company-data: flock's exit (69 or 127), and the alert says so", async () => {
    const { home, dir } = await cronUser(KEYS.full);
    const r = await runJob(home, dir, { pathLine: false });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Z ALERT company-data exit (69|127), see /);
    expect(readFileSync(join(dir, 'enrich.log'), 'utf8')).toContain('flock: failed to execute company-data');
  });
});
