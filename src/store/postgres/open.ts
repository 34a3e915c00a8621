// Opening a PostgreSQL store: the connection that holds the store's advisory lock (its own, for the
// store's lifetime: while it is held, other hosts judge this process alive), the schema checked or
// created, and the pool that runs every statement.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { Problem } from '../../problem.js';
import { causeOf, unavailable } from './errors.js';
import { DEFAULT_SCHEMA, ensureSchema } from './schema.js';
import { PostgresStore } from './store.js';
import { targetOf, typesOf } from './target.js';

/** A statement stuck behind another host's lock fails after this, rather than hang the batch. */
const LOCK_TIMEOUT_MS = 15_000;
const STATEMENT_TIMEOUT_MS = 60_000;
/**
 * Connections a process opens, at most, unless told (store_connections): the one that holds its
 * lock, and one for its statements. A fleet's hosts then fit a server's max_connections by the
 * half of it (docs/store.md, "Connections").
 */
export const DEFAULT_CONNECTIONS = 2;
/**
 * How long a statement may wait for a connection of the pool that another statement is using:
 * longer than any statement may run, so that a slow statement fails by its own limit, and never
 * the one waiting behind it ("timeout exceeded when trying to connect").
 */
const POOL_WAIT_MS = STATEMENT_TIMEOUT_MS + 15_000;

/** The token of this store's owner: 16 hex digits that also key its advisory lock. */
function ownerToken(): string {
  const bytes = randomBytes(8);
  bytes[0] &= 0x7f; // a positive bigint, so that its halves compare as oids in pg_locks
  return bytes.toString('hex');
}

/**
 * Opens the store in `options.schema` (default `company_data`) of the database at `url`, creating
 * the schema on first use; a problem naming the URL (never its password) when it cannot be used.
 */
export async function openPostgresStore(
  url: string,
  options: { env: NodeJS.ProcessEnv; schema?: string; connections?: number },
): Promise<PostgresStore> {
  const connections = options.connections ?? DEFAULT_CONNECTIONS;
  const schema = options.schema ?? DEFAULT_SCHEMA;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`not a plain schema name: ${schema}`);
  const target = targetOf(url, options.env);
  const { default: driver } = await import('pg');
  const config: pg.ClientConfig = {
    ...target.config,
    types: typesOf(driver.types),
    options: `-c search_path=${schema}`,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    lock_timeout: LOCK_TIMEOUT_MS,
    // The client's own bound, for a server that no longer answers at all (a network cut off).
    query_timeout: STATEMENT_TIMEOUT_MS + 10_000,
  };
  // The connection that keeps this store's advisory lock: its own, for the store's lifetime.
  const lock = new driver.Client(config);
  lock.on('error', () => {
    // Seen by the store through `lost` (below); an error event must not end the process.
  });
  try {
    await lock.connect();
  } catch (error) {
    await lock.end().catch(() => undefined);
    throw unavailable(target.shown, causeOf(error, config, target.password, connections), error);
  }
  try {
    await ensureSchema(lock, schema, target.shown);
    let token = ownerToken();
    // A token another open store holds already (a one in 2^63 chance) is drawn again.
    while (
      !(await lock.query('SELECT pg_try_advisory_lock($1) AS ok', [BigInt(`0x${token}`).toString()])).rows[0]
        .ok
    ) {
      token = ownerToken();
    }
    const pool = new driver.Pool({
      ...config,
      // The lock's connection is one of the process's connections.
      max: connections - 1,
      connectionTimeoutMillis: POOL_WAIT_MS,
      idleTimeoutMillis: 30_000,
      allowExitOnIdle: true,
    });
    return new PostgresStore(target.shown, schema, pool, lock, token, target.password, connections);
  } catch (error) {
    await lock.end().catch(() => undefined);
    if (error instanceof Problem) throw error;
    throw unavailable(target.shown, causeOf(error, config, target.password, connections), error);
  }
}
