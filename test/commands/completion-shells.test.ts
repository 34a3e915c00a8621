// `company-data completion`: the scripts the command prints (main() in-process, piped), exercised
// in a real bash with COMP_WORDS as bash itself fills them.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashComplete } from '../helpers/bash-complete.js';
import { type InProcessResult as RunResult, runPiped } from '../helpers/in-process.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

let home: string;
let sandbox: SandboxHandle;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'cd-e2e-completion-'));
  sandbox = await startTestSandbox();
});

afterAll(async () => {
  await sandbox?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

function dirs(): { config: string; cache: string } {
  const dir = mkdtempSync(join(home, 'run-'));
  return { config: join(dir, 'config'), cache: join(dir, 'cache') };
}

function cli(args: string[], where = dirs(), env: Record<string, string> = {}): Promise<RunResult> {
  return runPiped(args, { env: { XDG_CONFIG_HOME: where.config, XDG_CACHE_HOME: where.cache, ...env } });
}

function shellExists(shell: string): boolean {
  return spawnSync(shell, ['-c', 'exit 0']).status === 0;
}

/** The command names `company-data --help` lists: cli.ts's table, which completion must cover. */
async function helpCommands(): Promise<string[]> {
  const help = await cli(['--help']);
  const section = help.stdout.split(/^Commands:$/m)[1].split(/^\S/m)[0];
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]).filter((name) => name !== 'help');
}

describe('bash', () => {
  let script: string;

  beforeAll(async () => {
    const r = await cli(['completion', 'bash']);
    expect(r.code).toBe(0);
    script = join(home, 'company-data.bash');
    writeFileSync(script, r.stdout);
  });

  it('is valid bash and registers itself for company-data', () => {
    expect(spawnSync('bash', ['-n', script]).status).toBe(0);
    const r = spawnSync('bash', ['--norc', '-c', `source '${script}'; complete -p company-data`], {
      encoding: 'utf8',
    });
    expect(r.stdout).toContain('-F _company_data company-data');
  });

  it.each([
    { words: ['company-data', 'en'], expected: ['enrich'] },
    { words: ['company-data', '-o', ''], expected: ['table', 'json', 'ndjson', 'csv'] },
    { words: ['company-data', '--format', '=', 'nd'], expected: ['ndjson'] },
    { words: ['company-data', 'me', '--auth-header', ''], expected: ['bearer', 'x-api-key'] },
    { words: ['company-data', '--sandbox', 'enrich', '--products', 'profile,t'], expected: ['profile,tech'] },
    { words: ['company-data', 'enrich', '--dry'], expected: ['--dry-run'] },
    { words: ['company-data', '-o', 'json', 'breakdown', 'emp'], expected: ['employee_range'] },
    { words: ['company-data', 'config', 'set'], expected: ['set-key', 'set'] },
    { words: ['company-data', 'completion', ''], expected: ['bash', 'zsh', 'fish'] },
    { words: ['company-data', 'api', 'P'], expected: ['POST', 'PUT', 'PATCH'] },
    { words: ['company-data', 'search', '--operator', ''], expected: ['and', 'or'] },
    // help takes a command name: the commands, never file names.
    { words: ['company-data', 'help', 'sp'], expected: ['spend'] },
    { words: ['company-data', 'help', 'co'], expected: ['config', 'completion'] },
    // --filter without a cached catalog: the documented facets as names, never file names.
    {
      words: ['company-data', 'search', '--filter', ''],
      expected: ['country=', 'site_category=', 'primary_platform=', 'employee_range='],
    },
  ])('$words completes to $expected', ({ words, expected }) => {
    expect(bashComplete(script, words)).toEqual(expected);
  });

  it('offers global options after a command, and each command its own', () => {
    const enrich = bashComplete(script, ['company-data', 'enrich', '--']);
    expect(enrich).toEqual(expect.arrayContaining(['--input', '--budget', '--base-url', '--format']));
    expect(enrich).not.toContain('--population');
    expect(bashComplete(script, ['company-data', 'breakdown', '--'])).toContain('--population');
  });

  it('says the product ids and facets are the documented defaults when nothing is cached', () => {
    expect(readFileSync(script, 'utf8')).toMatch(/^# Product ids and facet names: defaults: /m);
  });
});

describe('every shell', () => {
  it.each(['bash', 'zsh', 'fish'])('%s: the script names every command of --help', async (shell) => {
    const [commands, r] = await Promise.all([helpCommands(), cli(['completion', shell])]);
    expect(r.code).toBe(0);
    expect(commands.length).toBeGreaterThanOrEqual(13);
    for (const name of commands) expect(r.stdout).toMatch(new RegExp(`(^|[\\s':])${name}([\\s':]|$)`, 'm'));
    for (const format of ['table', 'json', 'ndjson', 'csv']) expect(r.stdout).toContain(format);
    expect(r.stdout).toContain('x-api-key');
    if (shell !== 'bash' && shellExists(shell)) {
      const file = join(home, `script.${shell}`);
      writeFileSync(file, r.stdout);
      expect(spawnSync(shell, ['-n', file]).status).toBe(0);
    }
  });

  it('refuses an unknown shell with a usage error', async () => {
    const r = await cli(['completion', 'powershell']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/bash, zsh, fish/);
  });

  it('works when the config file would stop other commands (mode 0644)', async () => {
    const where = dirs();
    mkdirSync(join(where.config, 'company-data'), { recursive: true });
    const file = join(where.config, 'company-data', 'config.json');
    writeFileSync(file, '{"base_url":"https://api.example.com"}');
    chmodSync(file, 0o644);
    const r = await cli(['completion', 'bash'], where);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('_company_data');
  });
});

describe('catalog values', () => {
  it('come from the cached catalogs, never from the network, and only as safe words', async () => {
    const where = dirs();
    const env = { COMPANY_DATA_BASE_URL: sandbox.url };
    for (const command of ['products', 'fields']) expect((await cli([command], where, env)).code).toBe(0);
    // Rewrite the cached products as a changed catalog would be, with one hostile id.
    const catalogs = join(where.cache, 'company-data', 'catalogs');
    const [dir] = readdirSync(catalogs);
    const file = join(catalogs, dir, 'products.json');
    const entry = JSON.parse(readFileSync(file, 'utf8'));
    entry.body.products.push(
      { id: 'zeta_addon', credit_units: 2 },
      { id: '$(touch pwned)', credit_units: 1 },
    );
    writeFileSync(file, JSON.stringify(entry));

    const before = sandbox.requests().length;
    const r = await cli(['completion', 'bash'], where, env);
    expect(r.code).toBe(0);
    expect(sandbox.requests().length).toBe(before);
    expect(r.stdout).toMatch(/^# Product ids and facet names: the cached catalogs in /m);
    expect(r.stdout).not.toContain('pwned');
    const script = join(home, 'cached.bash');
    writeFileSync(script, r.stdout);
    expect(bashComplete(script, ['company-data', 'enrich', '--products', 'profile,'])).toEqual([
      'profile,profile',
      'profile,tech',
      'profile,leads',
      'profile,zeta_addon',
    ]);
    // --filter offers the catalog's filter names, then an enumerated filter's values after "=".
    expect(bashComplete(script, ['company-data', 'search', '--filter', 'site_'])).toEqual(['site_category=']);
    expect(bashComplete(script, ['company-data', 'search', '--filter', 'employee_range', '=', ''])).toEqual([
      '1-10',
      '11-50',
      '51-200',
      '201-1000',
      '1001-5000',
      '5000+',
    ]);
    expect(bashComplete(script, ['company-data', 'lookalike', '--filter', 'country', '=', 'N'])).toEqual([
      'NL',
      'NO',
      'NZ',
    ]);
    // The fields catalog was cached too: --include offers field names.
    expect(bashComplete(script, ['company-data', 'search', '--include', 'lead_'])).toEqual([
      'lead_name',
      'lead_title',
      'lead_email',
    ]);
  });
});
