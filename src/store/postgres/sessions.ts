// Where a PostgreSQL store's statements run: the connection that holds the process's advisory
// lock when it is idle (it holds the lock and does nothing else, so with the pool's one connection
// a process runs two statements at once on its default two connections), else a connection of the
// pool. Transactions go to the pool alone (connection.ts, inTransaction), never to the lock's.
import type pg from 'pg';
import { refOf } from './connection.js';
import { connectionLost } from './errors.js';

/**
 * Which waiting statement gets the next free connection. A save first: until it commits, a kill
 * loses an answer that was paid for, and its slot waits for it (a batch takes its claims ahead of
 * its slots: docs/store.md, "Claims ahead"). Then a claim, which a request is waiting for; then
 * the rest (finds, which the batch asks far ahead).
 */
export enum Priority {
  Save = 0,
  Claim = 1,
  Other = 2,
}

export class Sessions {
  /** Whether a statement is on its way on the lock's connection. */
  private lockBusy = false;
  /** Statements on their way, at most one a connection (the lock's and the pool's). */
  private running = 0;
  /** Statements waiting for a connection, by priority (Priority): the first non-empty queue goes next. */
  private readonly queues: Array<Array<() => void>> = [[], [], []];

  constructor(
    private readonly pool: pg.Pool,
    private readonly lock: pg.Client,
    /** False once the lock's connection is gone or the store closes: the pool alone then. */
    private readonly lockUsable: () => boolean,
    /** Connections that run statements: the pool's and the lock's. */
    private readonly connections: number,
  ) {}

  /**
   * Runs one statement (or a few, each standing alone), when a connection is free, the waiting ones
   * by `priority`. One the server picked as a deadlock's victim (two hosts' saves moving the
   * counters of two months in another order) changed nothing: it runs again, three tries in all.
   */
  async run<T>(work: (db: pg.ClientBase) => Promise<T>, priority: Priority = Priority.Other): Promise<T> {
    if (this.running < this.connections) this.running++;
    else await new Promise<void>((resolve) => this.queues[priority].push(resolve));
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.once(work);
        } catch (error) {
          if (attempt === 3 || (error as { code?: string }).code !== '40P01') throw error;
        }
      }
    } finally {
      // The connection goes to the next waiting statement, if any.
      const next = this.queues.find((queue) => queue.length > 0)?.shift();
      if (next) next();
      else this.running--;
    }
  }

  private async once<T>(work: (db: pg.ClientBase) => Promise<T>): Promise<T> {
    if (!this.lockBusy && this.lockUsable()) {
      this.lockBusy = true;
      // Referenced while a statement is on its way: the process waits for its answer (the lock's
      // connection alone must not keep it alive).
      refOf(this.lock).ref?.();
      try {
        return await work(this.lock);
      } finally {
        this.lockBusy = false;
        if (this.lockUsable()) refOf(this.lock).unref?.();
      }
    }
    const db = await this.pool.connect();
    let broken: Error | undefined;
    try {
      return await work(db);
    } catch (error) {
      if (connectionLost(error)) broken = error as Error;
      throw error;
    } finally {
      // A broken connection must not go back to the pool.
      db.release(broken);
    }
  }
}
