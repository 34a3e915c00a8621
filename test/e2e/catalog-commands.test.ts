// products / fields / errors / me / config through the real binary against a real sandbox.
// Needs `npm run build` first (bin/company-data.js imports dist/). Runs that do not read the
// sandbox's request log are concurrent, to keep the file quick on two cores.
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { type RunResult, runCli } from '../helpers/cli.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let home: string;
let fullKey: string;

sandboxAndDirForTests('cd-e2e-catalogs-', { host: '127.0.0.1', companies: 2000 }, (s, d) => {
  sandbox = s;
  fullKey = s.keys.full;
  home = d;
});

interface Run {
  key?: string;
  env?: Record<string, string | undefined>;
  input?: string;
  /** A config home shared between runs (default: a fresh one, so nothing is cached or stored). */
  dir?: string;
}

function freshDir(): string {
  return mkdtempSync(join(home, 'run-'));
}

function cli(args: string[], run: Run = {}): Promise<RunResult> {
  const dir = run.dir ?? freshDir();
  return runCli(['--base-url', sandbox.url, ...args], {
    input: run.input,
    env: {
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      COMPANY_DATA_API_KEY: run.key,
      ...run.env,
    },
  });
}

const FORMATS = ['table', 'json', 'ndjson', 'csv'] as const;

/** What each public command must show in each format. */
const CHECKS: Record<'products' | 'fields' | 'errors', (format: string, r: RunResult) => void> = {
  products(format, r) {
    if (format === 'table') {
      // At 80 columns "credit units" wraps, and the lists and prose shorten (docs/terminal.md).
      expect(r.stdout).toMatch(/│ id\s+│ description\s+│ credit │ kind\s+│ fields\s+│\n│\s+│\s+│ units {2}│/);
      expect(r.stdout).toMatch(/│ leads\s+│.*│ 5\s+│ add-on/);
    } else if (format === 'csv') {
      const [header, ...rows] = parse(r.stdout) as string[][];
      expect(header).toEqual(['id', 'description', 'credit_units', 'kind', 'fields', 'bundles']);
      expect(rows.find((row) => row[0] === 'profile')?.[3]).toBe('default');
    } else {
      const items =
        format === 'json'
          ? JSON.parse(r.stdout)
          : r.stdout
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l));
      expect(items.map((p: { id: string }) => p.id)).toEqual(['profile', 'tech', 'leads']);
      expect(items[2]).toMatchObject({ credit_units: 5, add_on: true, default: false });
    }
  },
  fields(format, r) {
    if (format === 'table') {
      expect(r.stdout).toMatch(/│ country\s+│ profile │ enum \(\d+\)\s*│ yes/);
      expect(r.stdout).toMatch(/│ lead_email\s+│ leads\s+│ —/);
    } else if (format === 'csv') {
      const [header, ...rows] = parse(r.stdout) as string[][];
      expect(header.slice(0, 7)).toEqual([
        'name',
        'product',
        'type',
        'filter',
        'value_source',
        'values',
        'facet',
      ]);
      expect(rows.find((row) => row[0] === 'country')?.[6]).toBe('true');
    } else {
      const items =
        format === 'json'
          ? JSON.parse(r.stdout)
          : r.stdout
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l));
      expect(items).toHaveLength(12);
      const facets = items.filter((f: { facet: boolean }) => f.facet).map((f: { name: string }) => f.name);
      expect(facets.sort()).toEqual(['country', 'employee_range', 'primary_platform', 'site_category']);
    }
  },
  errors(format, r) {
    if (format === 'table') {
      expect(r.stdout.split('\n')[0]).toBe('Contract 2026-08-26 (application/problem+json)');
      expect(r.stdout).toMatch(/│ rate_limited\s+│ 429\s+│ yes\s+│/);
    } else if (format === 'csv') {
      const [header, ...rows] = parse(r.stdout) as string[][];
      expect(header).toEqual(['code', 'http_status', 'title', 'detail', 'retryable', 'charged']);
      expect(rows).toHaveLength(27);
    } else if (format === 'json') {
      const catalog = JSON.parse(r.stdout);
      expect(catalog.contract_version).toBe('2026-08-26');
      expect(catalog.errors).toHaveLength(27);
    } else {
      expect(r.stdout.trim().split('\n')).toHaveLength(27);
    }
  },
};

describe.each(Object.keys(CHECKS) as Array<keyof typeof CHECKS>)('%s (public)', (command) => {
  it.concurrent.each(FORMATS)('-o %s', async (format) => {
    const r = await cli(['-o', format, command]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    CHECKS[command](format, r);
  });
});

describe('public endpoints never receive the key', () => {
  it.each(['bearer', 'x-api-key'])('with --auth-header %s', async (header) => {
    const before = sandbox.requests().length;
    for (const command of ['products', 'fields', 'errors']) {
      const r = await cli(['--auth-header', header, '-o', 'json', command], { key: fullKey });
      expect(r.code).toBe(0);
    }
    const logged = sandbox.requests().slice(before);
    expect(logged.map((e) => e.path).sort()).toEqual(['/api/errors', '/api/fields', '/api/products']);
    for (const entry of logged) expect(entry.auth).toBeNull();
  });

  it('caches catalogs per base URL: a second run sends no request', async () => {
    const dir = freshDir();
    const count = () => sandbox.requests().filter((e) => e.path === '/api/products').length;
    const before = count();
    expect((await cli(['products'], { dir })).code).toBe(0);
    expect((await cli(['products'], { dir })).code).toBe(0);
    expect(count()).toBe(before + 1);
  });
});

describe('me', () => {
  it.concurrent.each(FORMATS)('-o %s', async (format) => {
    const r = await cli(['-o', format, 'me'], { key: fullKey });
    expect(r.code).toBe(0);
    if (format === 'table') {
      expect(r.stdout).toMatch(/^Account\n/);
      expect(r.stdout).toMatch(/│ plan\s+│ pro\s+│/);
      expect(r.stdout).toMatch(/│ balance\s+│ 1,000,000\s+│/);
      expect(r.stdout).toMatch(/│ capabilities\s+│ domains, search, breakdown, lookalike/);
    } else if (format === 'csv') {
      const [header, row] = parse(r.stdout) as string[][];
      expect(Object.fromEntries(header.map((h, i) => [h, row[i]]))).toMatchObject({
        plan: 'pro',
        balance: '1000000',
        capabilities: 'domains;search;breakdown;lookalike',
      });
    } else {
      expect(JSON.parse(r.stdout)).toMatchObject({ plan: 'pro', balance: 1_000_000, key_name: 'full' });
    }
    expect(r.stdout + r.stderr).not.toContain(fullKey);
  });

  it.each(['bearer', 'x-api-key'] as const)('sends the key with --auth-header %s', async (header) => {
    const before = sandbox.requests().length;
    const r = await cli(['--auth-header', header, '-o', 'json', 'me'], { key: sandbox.keys.free });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ plan: 'free', balance: 1000 });
    const logged = sandbox.requests().slice(before);
    expect(logged.map((e) => [e.path, e.auth, e.key_name])).toEqual([['/api/me', header, 'free']]);
  });

  it('without a key exits 3 with the invalid_api_key message, while public commands work', async () => {
    const r = await cli(['-o', 'table', 'me']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('invalid_api_key');
    expect(r.stderr).toMatch(/COMPANY_DATA_API_KEY|config set-key/);
    expect((await cli(['products'])).code).toBe(0);
  });

  it('with a wrong key exits 3, and the key is not echoed', async () => {
    const r = await cli(['me'], { key: 'cd_wrong_key_0000000000' });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stderr.trim().split('\n').at(-1) ?? '{}').code).toBe('invalid_api_key');
    expect(r.stderr).not.toContain('cd_wrong_key_0000000000');
  });
});

describe('config through the binary', () => {
  it('set-key from piped stdin, then me uses it; show redacts it', async () => {
    const dir = freshDir();
    const set = await cli(['config', 'set-key'], { dir, input: `${fullKey}\n` });
    expect(set.code).toBe(0);
    expect(set.stdout + set.stderr).not.toContain(fullKey);
    const path = join(dir, 'config', 'company-data', 'config.json');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8')).api_key).toBe(fullKey);

    expect((await cli(['me'], { dir })).code).toBe(0);
    const show = await cli(['-o', 'json', 'config', 'show'], { dir });
    expect(show.code).toBe(0);
    expect(show.stdout).not.toContain(fullKey);
    const rows = JSON.parse(show.stdout) as Array<{ setting: string; value: unknown; source: string }>;
    expect(rows.find((row) => row.setting === 'api-key')).toEqual({
      setting: 'api-key',
      value: 'cd_s…9c2e',
      source: 'config file',
    });
    expect(rows.find((row) => row.setting === 'base-url')?.source).toBe('flag');

    chmodSync(path, 0o644);
    const refused = await cli(['me'], { dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`chmod 600 ${path}`);
  });

  it('set-key refuses an empty key', async () => {
    const r = await cli(['config', 'set-key'], { input: '\n' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no API key');
  });

  it('--api-key-file reads the key; a group-readable one is refused', async () => {
    const file = join(freshDir(), 'key');
    writeFileSync(file, `${fullKey}\n`);
    chmodSync(file, 0o600);
    expect((await cli(['--api-key-file', file, 'me'])).code).toBe(0);
    chmodSync(file, 0o640);
    const r = await cli(['--api-key-file', file, 'me']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`chmod 600 ${file}`);
  });

  it('config path prints the file location', async () => {
    const dir = freshDir();
    const r = await cli(['config', 'path'], { dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${join(dir, 'config', 'company-data', 'config.json')}\n`);
  });
});

describe('server text with escape sequences (showcase escape-test.com)', () => {
  it.concurrent.each(['table', 'csv', 'json'] as const)(
    '-o %s: no ESC byte reaches stdout',
    async (format) => {
      const r = await cli(['-o', format, 'enrich', 'escape-test.com'], { key: fullKey });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('escape-test.com');
      expect(r.stdout).not.toContain('\x1b');
      expect(r.stdout).not.toContain('\x07');
      // JSON keeps the data, with the control characters escaped by JSON.stringify.
      if (format === 'json') expect(r.stdout).toContain('\\u001b');
    },
  );
});
