// The fleet's shared rate on a PostgreSQL store (docs/store.md, "The fleet's shared rate"): one row
// per service and key, on the database's clock, from which every host sharing the store takes its
// turns a few at a time (src/pace/shared.ts is the host's side). One UPDATE … RETURNING hands out
// `count` consecutive turns `1000 / rate` ms apart from the row's next free turn (or now, or the
// end of the fleet's pause, whichever is latest), so the turns of all hosts together are spaced
// at the rate, whatever the number of hosts. The same row keeps the fleet's pause (a Retry-After
// or an exhausted RateLimit header seen by one host) and a rate a refusal cut it to, which grows
// back by so many requests a second every second.
//
// The table is made on first use (CREATE TABLE IF NOT EXISTS under a transaction lock), not by the
// schema's version: it holds nothing a user keeps, and a store made by an earlier release gets it
// without an upgrade step.
import type pg from 'pg';
import type { Reserved, SharedRate } from '../../pace/shared.js';
import { inTransaction } from './connection.js';
import { LOCK_SPACE } from './schema.js';

/** The server's clock in epoch ms, with its fractions: turns are a few ms apart. */
const NOW = '(extract(epoch FROM clock_timestamp()) * 1000)::float8';

const TABLE = `CREATE TABLE IF NOT EXISTS rate_turns (
  base_url text NOT NULL,
  key_id text NOT NULL,
  next_ms float8 NOT NULL,
  start_ms float8 NOT NULL DEFAULT 0,
  paused_until_ms float8 NOT NULL DEFAULT 0,
  cut_rate float8,
  cut_at_ms float8,
  cut_growth float8,
  PRIMARY KEY (base_url, key_id)
)`;

/** The fleet's cut rate, grown back since the cut (at `now`); NULL without a cut. */
const grownCut = (now: string) => `(cut_rate + cut_growth * greatest(0, ${now} - cut_at_ms) / 1000)`;
/** The rate the turns are spaced at: the host's ($4), or the fleet's cut rate when lower. */
const RATE = `greatest(0.001, least($4::float8, coalesce(${grownCut('c.now')}, $4::float8)))`;
/** Where the turns handed out start: the next free turn, now, or the end of the pause. */
const START = 'greatest(next_ms, c.now, paused_until_ms)';

const RATE_SQL = {
  // One reading of the clock for the whole statement (c.now): the start and the spacing agree.
  rateReserve: `WITH c AS (SELECT ${NOW} AS now)
    UPDATE rate_turns SET start_ms = ${START}, next_ms = ${START} + $3 * 1000.0 / ${RATE}
    FROM c WHERE base_url = $1 AND key_id = $2
    RETURNING start_ms, 1000.0 / ${RATE} AS spacing_ms, paused_until_ms, c.now AS now_ms`,
  rateRow: 'INSERT INTO rate_turns (base_url, key_id, next_ms) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING',
  ratePause: `UPDATE rate_turns SET paused_until_ms = greatest(paused_until_ms, ${NOW} + $3)
    WHERE base_url = $1 AND key_id = $2`,
  // A cut only lowers the fleet's rate: the refusals of one burst, seen by several hosts, cut once.
  rateCut: `UPDATE rate_turns SET cut_rate = $3, cut_at_ms = ${NOW}, cut_growth = $4
    WHERE base_url = $1 AND key_id = $2 AND (cut_rate IS NULL OR ${grownCut(NOW)} > $3)`,
} as const;

interface ReservedRow {
  start_ms: number;
  spacing_ms: number;
  paused_until_ms: number;
  now_ms: number;
}

const run = <R extends pg.QueryResultRow>(pool: pg.Pool, name: keyof typeof RATE_SQL, values: unknown[]) =>
  pool.query<R>({ name, text: RATE_SQL[name], values });

/** The shared rate of the key `keyId` at the service `baseUrl`, kept in the store on `pool`. */
export function sharedRateOf(pool: pg.Pool, where: string, baseUrl: string, keyId: string): SharedRate {
  let made = false;
  /** The table and this key's row, made once per process (another host may have made them). */
  const make = async () => {
    await inTransaction(pool, async (db) => {
      await db.query(`SELECT pg_advisory_xact_lock(${LOCK_SPACE}, hashtext('rate_turns'))`);
      await db.query(TABLE);
    });
    await run(pool, 'rateRow', [baseUrl, keyId]);
    made = true;
  };
  const reserveOnce = async (count: number, rate: number) =>
    (await run<ReservedRow>(pool, 'rateReserve', [baseUrl, keyId, count, rate])).rows[0];
  return {
    where,
    async reserve(count, rate): Promise<Reserved> {
      let row: ReservedRow | undefined;
      try {
        row = await reserveOnce(count, rate);
      } catch (error) {
        // 42P01: no such table yet (a store that no host has paced on).
        if ((error as { code?: string }).code !== '42P01' || made) throw error;
      }
      if (row === undefined) {
        await make();
        row = await reserveOnce(count, rate);
        if (row === undefined) throw new Error('the rate_turns row of this key is missing');
      }
      return {
        startIn: Math.max(0, row.start_ms - row.now_ms),
        spacing: row.spacing_ms,
        pausedFor: Math.max(0, row.paused_until_ms - row.now_ms),
      };
    },
    async pause(ms) {
      await run(pool, 'ratePause', [baseUrl, keyId, ms]);
    },
    async cut(rate, growth) {
      await run(pool, 'rateCut', [baseUrl, keyId, rate, growth]);
    },
  };
}
