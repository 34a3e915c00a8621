// The transactions of a PostgreSQL store, on a connection of its pool: READ COMMITTED (each rule
// takes the row locks it needs), retried when the server picked one as a deadlock's victim, and a
// connection that broke never handed back to the pool.
import type pg from 'pg';
import { connectionLost } from './errors.js';

/**
 * Runs `work` in one transaction. One that the server chose as a deadlock's victim (two hosts
 * turning the same lapsed holds into entries in another order, say) is run again, up to three
 * times in all.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(pool, work);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt === 3 || (code !== '40P01' && code !== '40001')) throw error;
    }
  }
}

async function once<T>(pool: pg.Pool, work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A checked-out connection that breaks between two statements emits 'error': the next
  // statement fails with it, and the process goes on.
  const ignore = () => undefined;
  client.on('error', ignore);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    client.removeListener('error', ignore);
    client.release();
    return result;
  } catch (error) {
    let broken = connectionLost(error);
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    client.removeListener('error', ignore);
    // A broken connection must not go back to the pool.
    client.release(broken ? (error as Error) : undefined);
    throw error;
  }
}

/** A client's socket, to reference or not (pg's Client has ref() and unref(); its types omit them). */
export function refOf(client: pg.Client): { ref?: () => void; unref?: () => void } {
  const stream = (client as unknown as { connection?: { stream?: { ref?: () => void; unref?: () => void } } })
    .connection?.stream;
  return { ref: stream?.ref?.bind(stream), unref: stream?.unref?.bind(stream) };
}
