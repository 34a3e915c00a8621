// `company-data lookalike` over several seeds: the real binary against a sandbox. The fused list
// is checked against the seeds' own lists, fetched one by one and fused here by the rule of
// docs/lookalike.md; the seeds and the exclusions never come back; every row names its seeds;
// --budget holds in the sandbox's own books.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, runCli } from '../helpers/cli.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

// One another's lookalikes in every dataset (fashion, US, shopify), so their lists overlap and
// each seed is in the others' lists.
const SEEDS = ['acme-shoes.com', 'termarviozen.com', 'ionmimi-store.io'];
const K = 20;

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  dir = await mkdtemp(join(tmpdir(), 'cd-lookalike-seeds-e2e-'));
});
afterAll(async () => {
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

function cli(args: string[], input?: string): Promise<RunResult> {
  return runCli(['--base-url', sandbox.url, ...args], {
    input,
    env: {
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      LANG: 'C.UTF-8',
    },
  });
}

function lookalikeRequests(since: number) {
  return sandbox.requests().filter((r) => r.seq > since && r.path.startsWith('/api/lookalike/'));
}

function lastSeq(): number {
  return sandbox.requests().at(-1)?.seq ?? 0;
}

interface Candidate {
  rank: number;
  domain: string;
}

interface FusedRow {
  rank: number;
  domain: string;
  score: number;
  seed_count: number;
  similar_to: string[];
  seed_ranks: Record<string, number>;
}

/** One seed's own list, as the single-seed form prints it. */
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
    expect(r.stderr).toBe(`Excluding 2 domains.\n${K} lookalikes from 3 seeds\n`);
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
