// The fleet's shared rate in a PostgreSQL store (src/store/postgres/rate.ts) against a real server:
// stores on one schema stand for hosts. The row's arithmetic is read back exactly through the
// superuser (start_ms, next_ms, paused_until_ms are the database's clock), never timed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPacer } from '../../src/pace.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres.js';
import { type Postgres, postgresMissing, startPostgres } from '../helpers/postgres.js';

const BASE = 'https://api.example.com';

describe.runIf(!postgresMissing())('the shared rate of a PostgreSQL store', () => {
  let server: Postgres;
  let schemas = 0;
  const opened: PostgresStore[] = [];

  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
    await server?.stop();
  });

  async function hosts(n: number): Promise<{ stores: PostgresStore[]; schema: string }> {
    const schema = `r${++schemas}`;
    const stores: PostgresStore[] = [];
    for (let i = 0; i < n; i++) stores.push(await openPostgresStore(server.url, { env: {}, schema }));
    opened.push(...stores);
    return { stores, schema };
  }

  const row = async (schema: string, key = 'k1') =>
    (
      await server.admin<{
        start_ms: number;
        next_ms: number;
        paused_until_ms: number;
        cut_rate: number | null;
      }>(
        `SELECT start_ms, next_ms, paused_until_ms, cut_rate FROM ${schema}.rate_turns WHERE key_id = $1`,
        [key],
        'company',
      )
    )[0];

  it('hands out consecutive turns to the hosts, 1000/rate ms apart, from one row per service and key', async () => {
    const { stores, schema } = await hosts(2);
    const [a, b] = stores.map((store) => store.sharedRate(BASE, 'k1'));
    // A pause of a minute puts the next free turn well ahead of now: the turns are then exactly
    // where the row says, whatever the time between the statements.
    await a.reserve(1, 100);
    await a.pause(60_000);
    const first = await a.reserve(5, 100);
    expect(first.spacing).toBeCloseTo(10, 9);
    const afterA = await row(schema);
    expect(afterA.start_ms).toBe(afterA.paused_until_ms);
    expect(afterA.next_ms - afterA.start_ms).toBeCloseTo(50, 9);
    // The other host's turns follow on: at 50 a second, 20 ms apart.
    const second = await b.reserve(3, 50);
    expect(second.spacing).toBeCloseTo(20, 9);
    const afterB = await row(schema);
    expect(afterB.start_ms).toBe(afterA.next_ms);
    expect(afterB.next_ms - afterB.start_ms).toBeCloseTo(60, 9);
    // Both were told of the pause, and their turns start after it.
    for (const reserved of [first, second]) {
      expect(reserved.pausedFor).toBeGreaterThan(59_000);
      expect(reserved.startIn).toBeGreaterThanOrEqual(reserved.pausedFor);
    }
    // Another key, or the same key at another service, has a row of its own.
    await a.reserve(1, 100);
    await stores[0].sharedRate('https://other.example.com', 'k1').reserve(1, 100);
    await stores[0].sharedRate(BASE, 'k2').reserve(1, 100);
    const rows = await server.admin(
      `SELECT base_url, key_id FROM ${schema}.rate_turns ORDER BY 1, 2`,
      [],
      'company',
    );
    expect(rows).toEqual([
      { base_url: BASE, key_id: 'k1' },
      { base_url: BASE, key_id: 'k2' },
      { base_url: 'https://other.example.com', key_id: 'k1' },
    ]);
  });

  it('a cut slows every host and only ever lowers the fleet’s rate', async () => {
    const { stores, schema } = await hosts(2);
    const [a, b] = stores.map((store) => store.sharedRate(BASE, 'k1'));
    await a.reserve(1, 90);
    await a.cut(30, 1);
    // A second cut from the same burst, seen by the other host at a higher rate, changes nothing.
    await b.cut(63, 4.5);
    expect((await row(schema)).cut_rate).toBe(30);
    // The other host, pacing at 90, gets turns at the fleet's 30 a second (grown back a little
    // since: one request a second every second).
    const turns = await b.reserve(2, 90);
    expect(turns.spacing).toBeLessThanOrEqual(1000 / 30);
    expect(turns.spacing).toBeGreaterThan(1000 / 40);
    await b.cut(20, 1);
    expect((await row(schema)).cut_rate).toBe(20);
  });

  it('a pause one host’s pacer holds (a Retry-After) holds the other host’s turns until it ends', async () => {
    const { stores, schema } = await hosts(2);
    const [a, b] = stores.map((store) => createPacer(50, { shared: store.sharedRate(BASE, 'k1') }));
    try {
      await a.take();
      a.hold.holdFor(1500);
      const endsAt = performance.now() + 1500;
      // The pause reaches the row (told without being awaited).
      for (let tries = 0; (await row(schema)).paused_until_ms === 0 && tries < 500; tries++)
        await new Promise((resolve) => setTimeout(resolve, 5));
      expect((await row(schema)).paused_until_ms).toBeGreaterThan(0);
      // The other host's first turn comes after it, and that host holds the pause too (its
      // slots wait it out as well): counted from when it heard of it, never earlier.
      await b.take();
      expect(performance.now()).toBeGreaterThanOrEqual(endsAt);
      expect(b.hold.until).toBeGreaterThanOrEqual(endsAt);
    } finally {
      a.stop();
      b.stop();
    }
  });

  it('makes its table on first use, once, when hosts start at once on a store an earlier release made', async () => {
    const { stores, schema } = await hosts(4);
    const before = await server.admin(
      "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1 AND tablename = 'rate_turns'",
      [schema],
      'company',
    );
    expect(before).toEqual([{ n: 0 }]);
    const reserved = await Promise.all(stores.map((store) => store.sharedRate(BASE, 'k1').reserve(2, 100)));
    expect(reserved.map((r) => r.spacing)).toEqual([10, 10, 10, 10]);
    const rows = await server.admin(`SELECT count(*)::int AS n FROM ${schema}.rate_turns`, [], 'company');
    expect(rows).toEqual([{ n: 1 }]);
  });
});
