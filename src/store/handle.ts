// The store as a command sees it (ctx.store): opened on first use, closed when the command ends.
// A file path opens the SQLite back end; a postgres:// (or postgresql://) URL the PostgreSQL one,
// loaded only then.
import { existsSync } from 'node:fs';
import { isPostgresUrl, shownLocation } from './location.js';
import type { AnswerStore } from './types.js';

export interface StoreHandle {
  /**
   * Where the store is, as messages show it (a URL without its password), or false with
   * --no-store (nothing is read or written, not even the ledger).
   */
  readonly path: string | false;
  /** Opens the store (once); a problem naming the store when it cannot be used. */
  open(): Promise<AnswerStore>;
  /**
   * Opens the store only if it exists (a command that only reads creates no file). A database
   * always exists: its tables are made on first use.
   */
  openIfExists(): Promise<AnswerStore | undefined>;
  /** The store if it was opened already. */
  readonly opened: AnswerStore | undefined;
}

export interface HandleOptions {
  /** A --sandbox run: a database keeps its answers apart, in a schema of their own. */
  sandbox?: boolean;
  env: NodeJS.ProcessEnv;
  /** Connections to a database, at most (store_connections); its default otherwise. */
  connections?: number;
}

export function storeHandle(
  location: string | false,
  cleanups: Array<() => unknown>,
  options: HandleOptions,
): StoreHandle {
  let opening: Promise<AnswerStore> | undefined;
  let opened: AnswerStore | undefined;
  const database = location !== false && isPostgresUrl(location);
  const openStore = async (where: string): Promise<AnswerStore> => {
    if (!database) return (await import('./sqlite.js')).openSqliteStore(where);
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore(where, {
      env: options.env,
      schema: options.sandbox ? 'company_data_sandbox' : 'company_data',
      connections: options.connections,
    });
  };
  return {
    path: location === false ? false : shownLocation(location),
    get opened() {
      return opened;
    },
    openIfExists() {
      return location !== false && (database || existsSync(location))
        ? this.open()
        : Promise.resolve(undefined);
    },
    open() {
      if (location === false) return Promise.reject(new Error('the store is off (--no-store)'));
      opening ??= openStore(location).then((store) => {
        opened = store;
        cleanups.push(() => store.close());
        return store;
      });
      return opening;
    },
  };
}
