// `company-data search`: the real binary against an in-process sandbox over loopback HTTP.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunResult, runCli } from '../helpers/cli.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  dir = await mkdtemp(join(tmpdir(), 'cd-search-e2e-'));
});
afterAll(async () => {
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  sandbox.faults.clear();
});

function cli(args: string[], input?: string): Promise<RunResult> {
  return runCli(['--base-url', sandbox.url, ...args], {
    input,
    env: {
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
    },
  });
}

/** Search requests the sandbox received since `since` (a log sequence number). */
function searchRequests(since: number) {
  return sandbox.requests().filter((r) => r.seq > since && r.path === '/api/search');
}

function lastSeq(): number {
  return sandbox.requests().at(-1)?.seq ?? 0;
}

type Row = Record<string, unknown>;

function json(r: RunResult): { total: number; rows: Row[] } {
  expect(r.stderr).not.toContain('error');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('search without exclusions (GET)', () => {
  it('sends filters as JSON text in the query and returns matching rows', async () => {
    const since = lastSeq();
    const result = json(
      await cli(['-o', 'json', 'search', 'shoes', '--filter', 'country=US', '--limit', '5']),
    );
    expect(result.rows.length).toBeGreaterThan(0);
    expect(result.rows.length).toBeLessThanOrEqual(5);
    expect(result.total).toBeGreaterThanOrEqual(result.rows.length);
    for (const row of result.rows) expect(row.country).toBe('US');
    const [request, ...more] = searchRequests(since);
    expect(more).toEqual([]);
    expect(request.method).toBe('GET');
    const query = new URLSearchParams(request.query);
    expect(JSON.parse(query.get('filters') ?? '')).toEqual({ country: ['US'] });
    expect(query.get('limit')).toBe('5');
  });

  it('merges --filter and --filters, unioning values', async () => {
    const since = lastSeq();
    const result = json(
      await cli([
        '-o',
        'json',
        'search',
        '--filter',
        'country=US',
        '--filters',
        '{"country":["GB","US"]}',
        '--limit',
        '50',
      ]),
    );
    expect(new Set(result.rows.map((r) => r.country))).toEqual(new Set(['US', 'GB']));
    const query = new URLSearchParams(searchRequests(since)[0].query);
    expect(JSON.parse(query.get('filters') ?? '')).toEqual({ country: ['US', 'GB'] });
  });

  it('prints ndjson, csv and a table with the included fields', async () => {
    const args = ['search', 'shoes', '--include', 'domain,tech', '--limit', '3'];
    const ndjson = await cli(['-o', 'ndjson', ...args]);
    expect(ndjson.code).toBe(0);
    const lines = ndjson.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(Object.keys(JSON.parse(line)).sort()).toEqual(['domain', 'tech']);

    const csv = await cli(['-o', 'csv', ...args]);
    const csvLines = csv.stdout.trim().split('\n');
    expect(csvLines[0]).toBe('domain,tech');
    expect(csvLines).toHaveLength(4);

    const table = await cli(['-o', 'table', ...args]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/domain\s.*tech/);
    expect(table.stderr).toMatch(/Showing 3 of [\d,]+ companies/);
    expect(table.stderr).toMatch(/Credits: charged 1/);
  });
  it('strips terminal escapes that a company name carries', async () => {
    const r = await cli(['-o', 'table', 'search', 'escape', '--limit', '5']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('escape-test.com');
    expect(r.stdout).toContain('Escape Test Corp');
    expect(r.stdout).not.toContain('\x1b');
  });
});

describe('search with exclusions (POST)', () => {
  it('excludes every domain of a CSV with URLs and duplicates', async () => {
    const before = json(await cli(['-o', 'json', 'search', 'shoes', '--limit', '10']));
    const victims = before.rows.slice(0, 3).map((r) => String(r.domain));
    expect(victims).toHaveLength(3);
    const csv = await file(
      'exclude.csv',
      [
        'name,website',
        `one,https://www.${victims[0]}/about?x=1`,
        `one again,${victims[0].toUpperCase()}`,
        `two,http://${victims[1]}`,
        `two again,${victims[1]}`,
        '',
      ].join('\n'),
    );
    const since = lastSeq();
    const r = await cli(
      ['-o', 'json', 'search', 'shoes', '--limit', '10', '--exclude', csv, '--exclude-domain', victims[2]],
      undefined,
    );
    const after = json(r);
    const domains = after.rows.map((row) => row.domain);
    for (const victim of victims) expect(domains).not.toContain(victim);
    // The rest of the first page is still there: only the exclusions went.
    for (const kept of before.rows.slice(3).map((row) => row.domain)) expect(domains).toContain(kept);
    expect(after.total).toBe(before.total - 3);
    expect(r.stderr).toContain('Excluding 3 domains (2 duplicates dropped).');
    const requests = searchRequests(since);
    expect(requests.map((q) => q.method)).toEqual(['POST']);
    expect(requests[0].content_type).toMatch(/^application\/json/);
    expect(requests[0].query).toBe('');
  });

  it('reads exclusions from stdin', async () => {
    const before = json(await cli(['-o', 'json', 'search', 'coffee', '--limit', '3']));
    const victim = String(before.rows[0].domain);
    const after = json(
      await cli(['-o', 'json', 'search', 'coffee', '--limit', '3', '--exclude', '-'], `${victim}\n`),
    );
    expect(after.rows.map((r) => r.domain)).not.toContain(victim);
  });

  it('refuses 20,001 exclusions without sending anything', async () => {
    const list = Array.from({ length: 20_001 }, (_, i) => `excluded-${i}.com`).join('\n');
    const path = await file('too-many.txt', `${list}\n`);
    const since = lastSeq();
    const r = await cli(['search', 'shoes', '--exclude', path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('20,001 unique exclusions; the service accepts at most 20,000');
    expect(r.stdout).toBe('');
    expect(sandbox.requests().filter((q) => q.seq > since)).toEqual([]);
  });

  it('refuses an exclusion that is not a domain, naming its line', async () => {
    const path = await file('bad.txt', 'good.com\nnot a domain\n');
    const since = lastSeq();
    const r = await cli(['-o', 'table', 'search', 'shoes', '--exclude', path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bad.txt line 2: "not a domain"');
    expect(searchRequests(since)).toEqual([]);
  });

  it('notes a first line read as a title that may be a mistyped domain, and searches', async () => {
    const path = await file('doubtful.txt', 'acme\ngood.com\n');
    const r = await cli(['-o', 'json', 'search', 'shoes', '--limit', '1', '--exclude', path]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('doubtful.txt, "acme", was read as the column\'s title');
  });
});

describe('checks before sending', () => {
  it.each([
    [['--filter', 'contry=US'], 'unknown filter `contry` (did you mean `country`?)'],
    [['--filter', 'tech=shopfy'], 'unknown value "shopfy" for filter `tech` (did you mean `shopify`?)'],
    [['--filters', '{"site_category":["fashon"]}'], '(did you mean `fashion`?)'],
    [['--include', 'lead_email'], 'enrichment-only'],
    [['--limit', '1001'], '--limit must be a whole number between 1 and 1000'],
  ])('refuses %j locally (exit 2, no search sent)', async (flags, message) => {
    const since = lastSeq();
    const r = await cli(['-o', 'table', 'search', 'shoes', ...flags]);
    expect(r.stderr).toContain(message);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(searchRequests(since)).toEqual([]);
  });

  it('maps a server invalid_filter to exit 2', async () => {
    sandbox.faults.add('invalid_filter', { path: '/api/search' });
    const r = await cli(['-o', 'table', 'search', 'shoes', '--filter', 'country=US']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('(invalid_filter, HTTP 400)');

    sandbox.faults.add('invalid_filter', { path: '/api/search' });
    const scripted = await cli(['-o', 'json', 'search', 'shoes', '--filter', 'country=US']);
    expect(scripted.code).toBe(2);
    expect(JSON.parse(scripted.stderr.trim().split('\n').at(-1) ?? '')).toMatchObject({
      code: 'invalid_filter',
      status: 400,
    });
  });

  it('explains search_limit_exceeded with what this search asked for', async () => {
    const words = 'one two three four five six seven eight nine ten eleven twelve thirteen';
    const r = await cli(['-o', 'table', 'search', words]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('search_limit_exceeded');
    expect(r.stderr).toContain('Narrow the search');
    expect(r.stderr).toContain('This search has 13 query words and 0 filter values.');
  });

  it('runs the example of its --help against --sandbox', async () => {
    const help = await runCli(['search', '--help']);
    expect(help.stdout).toContain(
      'company-data --sandbox search "shopify shoes" --filter country=US --limit 5',
    );
    const r = await runCli(
      ['--sandbox', '-o', 'json', 'search', 'shopify shoes', '--filter', 'country=US', '--limit', '5'],
      {
        env: { XDG_CONFIG_HOME: join(dir, 'config'), XDG_CACHE_HOME: join(dir, 'cache') },
      },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).rows.length).toBeGreaterThan(0);
  });
});

describe('another envelope from a server that is not the sandbox', () => {
  type Handler = (path: string) => unknown;
  async function withServer(handler: Handler, run: (url: string) => Promise<void>): Promise<void> {
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const body = path === '/api/fields' ? { fields: [] } : handler(path);
      res.writeHead(200, { 'content-type': 'application/json', 'x-credits-charged': '1' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      await run(`http://127.0.0.1:${port}`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }
  function at(url: string, args: string[]): Promise<RunResult> {
    return runCli(['--base-url', url, ...args], {
      env: { COMPANY_DATA_API_KEY: 'k', XDG_CONFIG_HOME: join(dir, 'c2'), XDG_CACHE_HOME: join(dir, 'x2') },
    });
  }

  it('shows rows found under another member name, with no total', async () => {
    await withServer(
      () => ({ companies: [{ domain: 'a.com', company_name: 'A' }], took_ms: 3 }),
      async (url) => {
        const r = await at(url, ['-o', 'table', 'search', 'shoes']);
        expect(r.code).toBe(0);
        expect(r.stdout).toContain('a.com');
        expect(r.stderr).toContain('Showing 1 of 1 company');
        const json = await at(url, ['-o', 'json', 'search', 'shoes']);
        expect(JSON.parse(json.stdout)).toEqual({
          took_ms: 3,
          total: 1,
          rows: [{ domain: 'a.com', company_name: 'A' }],
        });
      },
    );
  });

  it('prints an unrecognisable body as received, with a warning, and exits 0', async () => {
    await withServer(
      () => ({ message: 'a shape nobody expected', nested: { deep: true } }),
      async (url) => {
        for (const args of [
          ['search', 'shoes'],
          ['breakdown', 'country'],
          ['lookalike', 'acme.com'],
        ]) {
          const r = await at(url, ['-o', 'table', ...args]);
          expect(r.code).toBe(0);
          expect(r.stderr).toMatch(/warning: the \w+ response has no recognisable list/);
          expect(JSON.parse(r.stdout)).toEqual({
            message: 'a shape nobody expected',
            nested: { deep: true },
          });
        }
      },
    );
  });
});
