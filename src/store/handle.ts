// The store as a command sees it (ctx.store): opened on first use, closed when the command ends,
// and the spend ledger fed by every charge the service reports through this invocation's client.
import { existsSync } from 'node:fs';
import { plural } from '../text.js';
import type { ApiResponse, Client, Config, IO, RequestOptions } from '../types.js';
import { baseOf, keyIdOf } from './location.js';
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

/**
 * A client that records each charge in the spend ledger once its answer is read: what the service
 * reported, with the time, the key's identity and the command. A store that cannot be written
 * costs a warning, not the answer the user paid for.
 */
export function ledgerClient(
  client: Client,
  store: StoreHandle,
  info: { config: Config; command: string; io: IO; now: () => number },
): Client {
  if (store.path === false) return client;
  const baseUrl = baseOf(info.config);
  const keyId = keyIdOf(info.config.apiKey?.value);
  let warned = false;
  const note = async (credits: number): Promise<void> => {
    try {
      const opened = await store.open();
      opened.record({ at: info.now(), baseUrl, keyId, command: info.command, credits, outcome: 'charged' });
    } catch (error) {
      if (warned) return;
      warned = true;
      const why = error instanceof Error ? error.message : String(error);
      info.io.warn(
        `warning: the spend ledger could not record a charge of ${plural(credits, 'credit')} (${why})`,
      );
    }
  };
  return {
    async request<T = unknown>(options: RequestOptions): Promise<ApiResponse<T>> {
      const response = await client.request<T>(options);
      const charged = response.credits.charged;
      if (typeof charged === 'number' && charged > 0) await note(charged);
      return response;
    },
    get lastCredits() {
      return client.lastCredits;
    },
    close: () => client.close(),
  };
}
