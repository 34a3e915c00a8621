// Reading a PostgreSQL result store from the outside, as test/helpers/store.ts reads a SQLite file:
// the tables themselves, over a connection of the test's own (pg), never through the code under
// test. A connection per reading, so that nothing of the test stays in the database between runs.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { StoreReader } from './store.js';

/** The schema the CLI keeps its tables in when the store's URL names no other (docs/store.md). */
const SCHEMA = 'company_data';

/** How long the sessions of a finished or killed run may take to end before a reading gives up. */
const SESSIONS_END_MS = 30_000;

/**
 * Waits until no other session is connected to the database. A SIGKILLed run's server sessions
 * outlive it for a moment: one may still be committing what the process sent before it died, and
 * a reading taken before that commit would count an answer as lost that the store in fact kept.
 */
async function othersGone(client: pg.Client): Promise<void> {
  const started = Date.now();
  for (;;) {
    const { rows } = await client.query<{ state: string | null; query: string }>(
      "SELECT state, query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
    );
    if (rows.length === 0) return;
    if (Date.now() - started > SESSIONS_END_MS) {
      const open = rows.map((row) => `${row.state}: ${row.query}`).join('; ');
      throw new Error(
        `${rows.length} sessions of ended runs still open after ${SESSIONS_END_MS} ms: ${open}`,
      );
    }
    await sleep(20);
  }
}

/**
 * The rows of `sql` in the database at `url`, or undefined while `table` does not exist: a run
 * killed before it created the tables (they are created in one transaction) leaves none.
 */
async function rowsOf<T extends pg.QueryResultRow>(url: string, table: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await othersGone(client);
    const exists = await client.query<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [
      `${SCHEMA}.${table}`,
    ]);
    if (!exists.rows[0].ok) return undefined;
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Domains with a stored answer (any scope). */
export async function storedDomainsIn(url: string): Promise<Set<string>> {
  const rows = await rowsOf<{ domain: string }>(url, 'answers', `SELECT domain FROM ${SCHEMA}.answers`);
  return new Set((rows ?? []).map((row) => row.domain));
}

/** The state of the newest batch run ('open' while it can be continued, 'done' once complete). */
export async function lastRunStateIn(url: string): Promise<string | undefined> {
  const rows = await rowsOf<{ state: string }>(
    url,
    'runs',
    `SELECT state FROM ${SCHEMA}.runs ORDER BY id DESC LIMIT 1`,
  );
  return rows?.[0]?.state;
}

/** The database at `url` as a StoreReader. */
export function postgresReader(url: string): StoreReader {
  return {
    storedDomains: () => storedDomainsIn(url),
    lastRunState: () => lastRunStateIn(url),
  };
}
