// A fleet on one key: four processes of the built binary with nothing local in common (their own
// HOME, XDG folders and working folder), one PostgreSQL store, overlapping inputs, against a
// sandbox that allows 100 requests a second per key in fixed one-second windows, answering in
// 20 ms. Each host alone would pace at 90 a second (90 % of the limit GET /api/me reports); four
// at once must share that rate through the store (src/pace/shared.ts, src/store/postgres/rate.ts),
// or the sandbox's request log shows seconds of up to 360 and 429s by the hundred. Counts are
// asserted, never times.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { hostIn } from '../helpers/hosts.js';
import { type Postgres, postgresMissing, startPostgres } from '../helpers/postgres.js';
import { nextRateWindow, sandboxAndDirForTests } from '../helpers/sandbox.js';

const LIMIT = 100;
const HOSTS = 4;
/** Host i reads the domains [i × STEP, i × STEP + ROWS): 4 × 300 rows, 600 distinct. */
const ROWS = 300;
const STEP = 100;

let sandbox: SandboxHandle;
let dir: string;
sandboxAndDirForTests('cd-fleet-rate-', { companies: 1000, rateLimit: LIMIT, latencyMs: 20 }, (s, d) => {
  sandbox = s;
  dir = d;
});

const missing = postgresMissing();
let server: Postgres;
beforeAll(async () => {
  if (!missing) server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const host = (name: string, store: string) => hostIn(join(dir, name), store, sandbox.url, sandbox.keys.full);

const companies = (from: number, to: number) =>
  sandbox.dataset.companies.slice(from, to).map((c) => c.domain);

/** How many of `entries` arrived in each second of the epoch (the sandbox's windows). */
function perSecond(entries: ReadonlyArray<{ at: number }>): number[] {
  const counts = new Map<number, number>();
  for (const { at } of entries)
    counts.set(Math.floor(at / 1000), (counts.get(Math.floor(at / 1000)) ?? 0) + 1);
  return [...counts.values()];
}

// Four processes on a loaded 2-core machine: 600 lookups at 90 a second take about 7 s.
describe.runIf(!missing)('a fleet of hosts on one key and one PostgreSQL store', { timeout: 60_000 }, () => {
  it('shares the key’s rate: no second above the limit, no 429, every domain bought once', async () => {
    const store = await server.createDatabase('fleet_rate');
    const hosts = Array.from({ length: HOSTS }, (_, i) => {
      const h = host(`h${i}`, store);
      const domains = companies(i * STEP, i * STEP + ROWS);
      // Every other host meets its domains backwards: hosts meet head on as well as side by side.
      writeFileSync(join(h.cwd, 'in.csv'), `domain\n${(i % 2 ? domains.reverse() : domains).join('\n')}\n`);
      return h;
    });
    const distinct = new Set(hosts.flatMap((_, i) => companies(i * STEP, i * STEP + ROWS)));
    expect(distinct.size).toBe(STEP * (HOSTS - 1) + ROWS);

    await nextRateWindow();
    const before = sandbox.balances().full;
    const firstSeq = sandbox.requests().at(-1)?.seq ?? 0;
    const results = await Promise.all(
      hosts.map((h) =>
        runCli(['-q', 'enrich', '--input', 'in.csv', '--output', 'out.csv'], { env: h.env, cwd: h.cwd }),
      ),
    );
    expect(results.map((r) => [r.code, r.stderr])).toEqual(hosts.map(() => [0, '']));

    // Every request with the key counts against the limit: GET /api/me of each host too.
    const log = sandbox.requests().filter((r) => r.seq > firstSeq && r.key_name !== null);
    const lookups = log.filter((r) => r.path.startsWith('/api/domains/'));
    expect(Math.max(...perSecond(log))).toBeLessThanOrEqual(LIMIT);
    expect(log.filter((r) => r.status === 429)).toEqual([]);
    // Bought once each: one answered lookup per distinct domain, and one credit each.
    const answered = lookups.filter((r) => r.status === 200).map((r) => r.path.slice('/api/domains/'.length));
    expect(answered.sort()).toEqual([...distinct].sort());
    expect(before - sandbox.balances().full).toBe(distinct.size);
    for (const h of hosts) {
      const rows = parse(readFileSync(join(h.cwd, 'out.csv')), { columns: true }) as Array<
        Record<string, string>
      >;
      expect(rows.map((row) => row.found)).toEqual(Array.from({ length: ROWS }, () => 'true'));
    }
    // The fleet kept the store's one row for the key, on the database's clock.
    const rows = await server.admin(
      'SELECT count(*)::int AS n FROM company_data.rate_turns',
      [],
      'fleet_rate',
    );
    expect(rows).toEqual([{ n: 1 }]);
  });

  // search --all, lookalike from many seeds and the MCP server pace through the same pacer
  // (src/rate-option.ts, pacerFor): three hosts of lookalike, each at 90 a second alone, 270 seeds.
  it('lookalike from many seeds shares it too: no second above the limit, no 429', async () => {
    const store = await server.createDatabase('fleet_rate_lookalike');
    const seeds = 90;
    const hosts = Array.from({ length: 3 }, (_, i) => {
      const h = host(`l${i}`, store);
      writeFileSync(
        join(h.cwd, 'seeds.csv'),
        `domain\n${companies(i * seeds, (i + 1) * seeds).join('\n')}\n`,
      );
      return h;
    });
    await nextRateWindow();
    const firstSeq = sandbox.requests().at(-1)?.seq ?? 0;
    const results = await Promise.all(
      hosts.map((h) =>
        runCli(['-q', 'lookalike', '--seeds', 'seeds.csv', '-k', '1', '-o', 'json'], {
          env: h.env,
          cwd: h.cwd,
        }),
      ),
    );
    expect(results.map((r) => [r.code, r.stderr])).toEqual(hosts.map(() => [0, '']));
    const log = sandbox.requests().filter((r) => r.seq > firstSeq && r.key_name !== null);
    expect(log.filter((r) => r.path.startsWith('/api/lookalike')).length).toBe(3 * seeds);
    expect(Math.max(...perSecond(log))).toBeLessThanOrEqual(LIMIT);
    expect(log.filter((r) => r.status === 429)).toEqual([]);
    const rows = await server.admin(
      'SELECT count(*)::int AS n FROM company_data.rate_turns',
      [],
      'fleet_rate_lookalike',
    );
    expect(rows).toEqual([{ n: 1 }]);
  });
});
