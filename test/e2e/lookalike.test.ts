// `company-data lookalike`: the real binary against an in-process sandbox.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, runCli } from '../helpers/cli.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

const SEED = 'acme-shoes.com';
const LONELY = 'lonely-seed.com';

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  dir = await mkdtemp(join(tmpdir(), 'cd-lookalike-e2e-'));
});
afterAll(async () => {
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<RunResult> {
  return runCli(['--base-url', sandbox.url, ...args], {
    env: {
      // Wide enough that the table never has to cut the evidence summary.
      COLUMNS: '200',
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      LANG: 'C.UTF-8',
    },
  });
}

function lastSeq(): number {
  return sandbox.requests().at(-1)?.seq ?? 0;
}

function lookalikeRequests(since: number) {
  return sandbox.requests().filter((r) => r.seq > since && r.path.startsWith('/api/lookalike/'));
}

interface Candidate {
  rank: number;
  score: number;
  domain: string;
  evidence?: { shared_tech: string[]; same_site_category: boolean; same_country: boolean };
  [field: string]: unknown;
}

async function json(args: string[]): Promise<{ found: boolean; seed: string; results: Candidate[] }> {
  const r = await cli(['-o', 'json', 'lookalike', ...args]);
  expect(r.stderr).not.toMatch(/error|warning/);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

describe('lookalike', () => {
  it('returns ranked candidates without evidence unless asked', async () => {
    const since = lastSeq();
    const result = await json(['https://www.Acme-Shoes.com/', '-k', '5']);
    expect(result.found).toBe(true);
    expect(result.results.map((c) => c.rank)).toEqual([1, 2, 3, 4, 5]);
    const scores = result.results.map((c) => c.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const c of result.results) expect(c.evidence).toBeUndefined();
    // The seed went out normalised.
    const [request] = lookalikeRequests(since);
    expect(request.path).toBe(`/api/lookalike/${SEED}`);
    expect(new URLSearchParams(request.query).get('k')).toBe('5');
  });

  it('keeps the full evidence in JSON and summarises it in the table', async () => {
    const result = await json([SEED, '-k', '3', '--evidence']);
    for (const c of result.results) expect(Array.isArray(c.evidence?.shared_tech)).toBe(true);

    const table = await cli(['-o', 'table', 'lookalike', SEED, '-k', '3', '--evidence']);
    expect(table.code).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines.find((l) => l.includes('rank'))).toMatch(/rank.*domain.*score.*why/);
    const top = result.results[0];
    const topLine = lines.find((l) => l.includes(top.domain));
    expect(topLine).toBeDefined();
    expect(topLine).toContain(`${top.evidence?.shared_tech.length} shared tech (`);
    expect(table.stderr).toContain(`3 lookalikes of ${SEED}`);
    expect(table.stderr).toMatch(/Credits: charged 1/);
  });

  it('prints ndjson and csv candidates with the included fields', async () => {
    const ndjson = await cli(['-o', 'ndjson', 'lookalike', SEED, '-k', '4', '--include', 'domain,tech']);
    const rows = ndjson.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(Array.isArray(row.tech)).toBe(true);

    const csv = await cli([
      '-o',
      'csv',
      'lookalike',
      SEED,
      '-k',
      '4',
      '--include',
      'domain,country',
      '--evidence',
    ]);
    const [header, ...lines] = csv.stdout.trim().split('\n');
    expect(header).toBe('rank,domain,score,country,why');
    expect(lines).toHaveLength(4);
  });

  it('applies filters to the candidates', async () => {
    const result = await json([SEED, '-k', '10', '--filter', 'country=DE', '--include', 'domain,country']);
    expect(result.results.length).toBeGreaterThan(0);
    for (const c of result.results) expect(c.country).toBe('DE');
  });
});

describe('lookalike without candidates', () => {
  it.each([LONELY, 'no-such-company.example'])(
    'says so for %s, charges nothing and exits 0',
    async (seed) => {
      const before = sandbox.balances().full;
      const table = await cli(['-o', 'table', 'lookalike', seed]);
      expect(sandbox.balances().full).toBe(before);
      expect(table.code).toBe(0);
      expect(table.stdout).toBe('');
      expect(table.stderr).toContain(`no lookalikes available for ${seed}; nothing charged`);
    },
  );

  it('prints found: false in JSON', async () => {
    const r = await cli(['-o', 'json', 'lookalike', LONELY]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ found: false, seed: LONELY, results: [] });
  });
});

describe('lookalike checks', () => {
  it.each([
    [['not a domain'], 'Invalid seed domain'],
    [[SEED, '-k', '101'], '-k must be a whole number between 1 and 100'],
    [[SEED, '--include', 'lead_name'], 'enrichment-only'],
    [[SEED, '--filter', 'country=USA'], 'unknown value "USA" for filter `country`'],
  ])('refuses %j with exit 2 before any lookalike request', async (args, message) => {
    const since = lastSeq();
    const r = await cli(['-o', 'table', 'lookalike', ...args]);
    expect(r.stderr).toContain(message);
    expect(r.code).toBe(2);
    expect(lookalikeRequests(since)).toEqual([]);
  });
});
