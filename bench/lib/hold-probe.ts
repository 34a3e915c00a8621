// The time of a month hold against a store whose month already holds `rows` ledger entries: the
// store's own code (src/store/), bundled by bench/lib/stores.mjs into the scratch directory and
// called from the bench's process. The rows are written the way a million settles would leave
// them (the ledger, and the month's counter beside it), then `holds` holds under a cap are taken
// and settled one after another; the time of each hold is returned.
import { openPostgresStore } from '../../src/store/postgres.js';
import { counterMonth } from '../../src/store/rules.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { AnswerStore, HoldRequest } from '../../src/store/types.js';

const KEY = 'benchkey';

/** The month's ledger of `rows` entries of 1 credit, and its counter, written at once. */
async function fill(store: AnswerStore, rows: number, now: number, sql: (text: string) => Promise<void>) {
  const month = counterMonth(now);
  await sql(`INSERT INTO ledger (at, base_url, key_id, command, credits, outcome)
    SELECT ${month} + (i % 1000), 'http://bench', '${KEY}', 'enrich', 1, 'charged' FROM ${
      store.backend === 'postgres'
        ? `generate_series(1, ${rows}) AS g(i)`
        : `(WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ${rows}) SELECT i FROM g)`
    }`);
  await sql(`INSERT INTO month_usage (key_id, month_from, spent, held) VALUES ('${KEY}', ${month}, ${rows}, 0)
    ON CONFLICT (key_id, month_from) DO UPDATE SET spent = excluded.spent`);
}

/**
 * Milliseconds of each of `holds` holds (each settled before the next) on a store of `rows`
 * ledger entries this month: a SQLite file at `path`, or the database at `url`.
 */
export async function holdTimes(options: {
  where: { path: string } | { url: string };
  rows: number;
  holds: number;
}): Promise<number[]> {
  const now = Date.now();
  let store: AnswerStore;
  let sql: (text: string) => Promise<void>;
  if ('path' in options.where) {
    const sqlite = await openSqliteStore(options.where.path);
    store = sqlite;
    sql = async (text) => {
      sqlite.db.exec(text);
    };
  } else {
    const pg = await openPostgresStore(options.where.url, { env: {} });
    store = pg;
    const { default: driver } = await import('pg');
    const outside = new driver.Client({ connectionString: options.where.url });
    await outside.connect();
    sql = async (text) => {
      await outside.query(`SET search_path = company_data; ${text}`);
    };
    const close = store.close.bind(store);
    store.close = async () => {
      await outside.end();
      await close();
    };
  }
  try {
    await fill(store, options.rows, now, sql);
    const hold: HoldRequest = {
      baseUrl: 'http://bench',
      keyId: KEY,
      amount: 3,
      cap: options.rows + 1_000_000,
      command: 'enrich',
      at: now,
    };
    const times: number[] = [];
    for (let i = 0; i < options.holds; i++) {
      const started = performance.now();
      const reservation = await store.reserve(hold);
      times.push(performance.now() - started);
      if (!reservation) throw new Error('a hold under a cap with room was refused');
      await store.settle({ reservation, entry: { ...hold, credits: 1, outcome: 'charged' } });
    }
    return times;
  } finally {
    await store.close();
  }
}
