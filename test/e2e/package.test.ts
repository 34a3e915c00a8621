// The package as a user gets it: `npm pack`, one global install into an empty prefix, then the
// installed bin run from outside the repository, directly and through a symlink.
// Packs the dist/ of `npm run build` (--ignore-scripts: `prepare` would rebuild dist/ in place
// under the other test files that are running the binary).
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ROOT } from '../helpers/cli.js';

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
const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The installed CLI, run as a user's shell would: the file itself (shebang), cwd outside the repo. */
async function installed(command: string, args: string[]) {
  const home = mkdtempSync(join(tmp, 'home-'));
  const env = cleanEnv({
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
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
      { cwd: tmp, timeout: NPM_TIMEOUT_MS },
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
    expect(paths).toContain('examples/companies.csv');
    for (const path of paths) {
      expect(path).toMatch(/^(bin\/|dist\/|examples\/|README\.md$|package\.json$|LICENSE)/);
      expect(path).not.toMatch(/^(src|test|scripts|bench|docs)\/|\.map$|\.ts$/);
    }
    // The bundle carries undici and the rest, about 0.4 MB compressed; its source map stays out.
    expect(tarball.size).toBeLessThan(800_000);
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
    'runs through npx from the tarball (no runtime dependencies to fetch)',
    async () => {
      const r = await installed('npx', [
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
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).results[0]).toMatchObject({ domain: 'globex.io', found: true });
    },
    NPM_TIMEOUT_MS,
  );
});
