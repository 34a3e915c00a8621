// The store as a command sees it (ctx.store): opened on first use, closed when the command ends.
import { existsSync } from 'node:fs';
import type { SqliteStore } from './sqlite.js';

export interface StoreHandle {
  /** The file, or false with --no-store (nothing is read or written, not even the ledger). */
  readonly path: string | false;
  /** Opens the store (once); a problem naming the file when it cannot be used. */
  open(): Promise<SqliteStore>;
  /** Opens the store only if its file exists (a command that only reads creates nothing). */
  openIfExists(): Promise<SqliteStore | undefined>;
  /** The store if it was opened already. */
  readonly opened: SqliteStore | undefined;
}

export function storeHandle(path: string | false, cleanups: Array<() => unknown>): StoreHandle {
  let opening: Promise<SqliteStore> | undefined;
  let opened: SqliteStore | undefined;
  return {
    path,
    get opened() {
      return opened;
    },
    openIfExists() {
      return path !== false && existsSync(path) ? this.open() : Promise.resolve(undefined);
    },
    open() {
      if (path === false) return Promise.reject(new Error('the store is off (--no-store)'));
      opening ??= import('./sqlite.js').then(async ({ openSqliteStore }) => {
        opened = await openSqliteStore(path);
        cleanups.push(() => opened?.close());
        return opened;
      });
      return opening;
    },
  };
}
