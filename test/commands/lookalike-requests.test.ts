// `company-data lookalike`: main() in-process, piped, against a loopback sandbox, with one seed and with
// several (their fused list, the seeds and exclusions left out, --budget in the sandbox's books).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InProcessResult as RunResult, runPiped } from '../helpers/in-process.js';
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

function cli(args: string[], input?: string): Promise<RunResult> {
  return runPiped(['--base-url', sandbox.url, ...args], {
    input,
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

// Several seeds. These three are one another's lookalikes in every dataset (fashion, US,
// shopify), so their lists overlap and each seed is in the others' lists. The fused list is
// checked against the seeds' own lists, fetched one by one and fused here by the rule of
// docs/lookalike.md.
const SEEDS = ['acme-shoes.com', 'termarviozen.com', 'ionmimi-store.io'];
const K = 20;

interface FusedRow {
  rank: number;
  domain: string;
  score: number;
  seed_count: number;
  similar_to: string[];
  seed_ranks: Record<string, number>;
}

/** One seed's own list, as the one-seed form prints it. */
async function seedList(seed: string, k: number): Promise<Candidate[]> {
  const r = await cli(['-o', 'json', 'lookalike', seed, '-k', String(k)]);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout).results;
}

describe('lookalike over three seeds', () => {
  it("fuses the seeds by rank, leaves out the seeds and the exclusions, names each row's seeds", async () => {
    // Two of acme-shoes.com's own lookalikes are excluded: one from a CSV, one by --exclude-domain.
    const first = await seedList('acme-shoes.com', 10);
    const excluded = first
      .map((c) => c.domain)
      .filter((d) => !SEEDS.includes(d))
      .slice(0, 2);
    const exclusions = join(dir, 'customers.csv');
    await writeFile(exclusions, `website\nhttps://www.${excluded[0]}/\n`);

    const since = lastSeq();
    const r = await cli([
      '-o',
      'json',
      'lookalike',
      ...SEEDS,
      '-k',
      String(K),
      '--exclude',
      exclusions,
      '--exclude-domain',
      excluded[1],
    ]);
    expect(r.stderr).toBe(
      `Excluding 2 domains.\nLeft out 2 candidates on the exclusion list.\n${K} lookalikes from 3 seeds\n`,
    );
    expect(r.code).toBe(0);
    const document = JSON.parse(r.stdout) as {
      seeds: Array<{ seed: string; status: string }>;
      results: FusedRow[];
    };

    // One request per seed, each asking for k + seeds + exclusions.
    const ask = K + SEEDS.length + excluded.length;
    const requests = lookalikeRequests(since);
    expect(requests.map((q) => q.path).sort()).toEqual(SEEDS.map((s) => `/api/lookalike/${s}`).sort());
    for (const q of requests) expect(new URLSearchParams(q.query).get('k')).toBe(String(ask));
    expect(document.seeds.map((s) => [s.seed, s.status])).toEqual(SEEDS.map((s) => [s, 'found']));

    const rows = document.results;
    expect(rows).toHaveLength(K);
    expect(rows.map((row) => row.rank)).toEqual(rows.map((_, i) => i + 1));
    for (const row of rows) {
      expect(SEEDS).not.toContain(row.domain);
      expect(excluded).not.toContain(row.domain);
      expect(row.similar_to.length).toBeGreaterThan(0);
      expect(row.seed_count).toBe(row.similar_to.length);
      for (const seed of row.similar_to) expect(SEEDS).toContain(seed);
    }
    // Some candidate is shared, or the test would not show fusion at work.
    expect(rows.some((row) => row.seed_count >= 2)).toBe(true);

    // The same fusion, worked out here from each seed's own list.
    const lists = await Promise.all(SEEDS.map((seed) => seedList(seed, ask)));
    const left = new Set([...SEEDS, ...excluded]);
    const found = new Map<string, Array<{ seed: string; rank: number }>>();
    lists.forEach((list, i) => {
      for (const { domain, rank } of list) {
        if (left.has(domain)) continue;
        found.set(domain, [...(found.get(domain) ?? []), { seed: SEEDS[i], rank }]);
      }
    });
    const expected = [...found]
      .map(([domain, hits]) => {
        const ranks = hits.map((h) => h.rank).sort((a, b) => a - b);
        return { domain, hits, score: ranks.reduce((s, rank) => s + 1 / (60 + rank), 0), best: ranks[0] };
      })
      .sort(
        (a, b) =>
          b.score - a.score ||
          b.hits.length - a.hits.length ||
          a.best - b.best ||
          (a.domain < b.domain ? -1 : 1),
      )
      .slice(0, K);
    expect(rows.map((row) => row.domain)).toEqual(expected.map((e) => e.domain));
    expect(rows.map((row) => row.score)).toEqual(expected.map((e) => e.score));
    for (const [i, row] of rows.entries()) {
      const bestFirst = [...expected[i].hits].sort(
        (a, b) => a.rank - b.rank || SEEDS.indexOf(a.seed) - SEEDS.indexOf(b.seed),
      );
      expect(row.similar_to).toEqual(bestFirst.map((h) => h.seed));
      expect(row.seed_ranks).toEqual(Object.fromEntries(bestFirst.map((h) => [h.seed, h.rank])));
    }
  });

  it("keeps each seed's evidence with --evidence, under the seeds the row is similar to", async () => {
    const r = await cli(['-o', 'json', 'lookalike', ...SEEDS, '-k', '8', '--evidence']);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout).results as Array<
      FusedRow & { evidence: Record<string, Candidate['evidence']> }
    >;
    expect(rows).toHaveLength(8);
    for (const row of rows) {
      expect(Object.keys(row.evidence)).toEqual(row.similar_to);
      for (const evidence of Object.values(row.evidence))
        expect(Array.isArray(evidence?.shared_tech)).toBe(true);
    }
  });

  it('reads the seeds from stdin and writes CSV rows naming them', async () => {
    const r = await cli(
      ['-o', 'csv', 'lookalike', '--seeds', '-', '-k', '5'],
      `domain\n${SEEDS.join('\n')}\n`,
    );
    expect(r.code).toBe(0);
    const [header, ...rows] = r.stdout.trim().split('\n');
    expect(header).toBe('rank,domain,score,seed_count,similar_to,company_name,country,site_category');
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      const [, domain, , count, similar] = row.split(',');
      expect(SEEDS).not.toContain(domain);
      expect(similar.split(';')).toHaveLength(Number(count));
    }
  });

  it('--budget 2 buys two seeds, fuses them and exits 4', async () => {
    const since = lastSeq();
    const before = sandbox.balances().full;
    const r = await cli([
      '-o',
      'ndjson',
      'lookalike',
      ...SEEDS,
      '-k',
      '5',
      '--budget',
      '2',
      '--concurrency',
      '3',
    ]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('warning: --budget 2 reached: 1 seed not requested (ionmimi-store.io)');
    expect(before - sandbox.balances().full).toBe(2);
    expect(lookalikeRequests(since)).toHaveLength(2);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as FusedRow);
    expect(rows).toHaveLength(5);
    for (const row of rows) expect(row.similar_to.every((s) => s !== 'ionmimi-store.io')).toBe(true);
  });
});
