// Reading a result store from the outside, as the end-to-end tests check what a run kept: the
// file itself, through SQLite, never through the code under test.
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';

/** Domains with a stored answer (any scope). */
export function storedDomains(path: string): Set<string> {
  if (!existsSync(path)) return new Set();
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    // A run killed between creating the file and its first transaction leaves it without tables.
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'answers'").get()) return new Set();
    const rows = db.prepare('SELECT domain FROM answers').all() as Array<{ domain: string }>;
    return new Set(rows.map((row) => row.domain));
  } finally {
    db.close();
  }
}

/** When the newest stored answer was bought (milliseconds since the epoch). */
export function newestBoughtAt(path: string): number {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT MAX(bought_at) FROM answers').pluck().get() as number | null) ?? 0;
  } finally {
    db.close();
  }
}

/** The spend ledger's charged credits in all. */
export function ledgerTotal(path: string): number {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare("SELECT SUM(credits) AS total FROM ledger WHERE outcome = 'charged'").get() as {
      total: number | null;
    };
    return row.total ?? 0;
  } finally {
    db.close();
  }
}

/** SQLite's own check of the file: 'ok' when every page and index is whole. */
export function integrityOf(path: string): string {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return (db.pragma('integrity_check', { simple: true }) as string) ?? '';
  } finally {
    db.close();
  }
}

/** The state of the newest batch run ('open' while it can be continued, 'done' once complete). */
export function lastRunState(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT state FROM runs ORDER BY id DESC LIMIT 1').get() as
      | { state: string }
      | undefined;
    return row?.state;
  } finally {
    db.close();
  }
}

/** A result store read from the outside between runs, whatever its back end (test/soak/runs.ts). */
export interface StoreReader {
  /** Domains with a stored answer (any scope). */
  storedDomains(): Promise<Set<string>>;
  /** The state of the newest batch run, undefined before the first. */
  lastRunState(): Promise<string | undefined>;
}

/** The SQLite file at `path` as a StoreReader (test/helpers/store-postgres.ts reads a database). */
export function sqliteReader(path: string): StoreReader {
  return {
    storedDomains: async () => storedDomains(path),
    lastRunState: async () => lastRunState(path),
  };
}
