// The file of a SQLite store: its tables and their version (PRAGMA user_version), the migrations
// from older versions, a new file made whole before it takes the store's name, and the problems of
// a file that cannot be used.
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, linkSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { Problem } from '../problem.js';
import { isWriteFailure, writeProblem } from '../write-failures.js';

/** The schema this release reads and writes (PRAGMA user_version). */
export const SCHEMA_VERSION = 3;
const BUSY_TIMEOUT_MS = 10_000;

/**
 * The month's counter (version 3): one row per key and calendar month (UTC), what the ledger holds
 * for it and the live holds sent in it (src/store/rules.ts, counterMonth).
 */
const MONTH_USAGE = `CREATE TABLE month_usage (
  key_id TEXT NOT NULL,
  month_from INTEGER NOT NULL,
  spent INTEGER NOT NULL DEFAULT 0,
  held INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, month_from)
) WITHOUT ROWID;`;

/** The first instant (epoch ms) of the UTC month of `at`: rules.ts's counterMonth in SQLite. */
const MONTH_OF_AT = "CAST(strftime('%s', at / 1000, 'unixepoch', 'start of month') AS INTEGER) * 1000";

const SCHEMA = `
CREATE TABLE scopes (
  id INTEGER PRIMARY KEY,
  base_url TEXT NOT NULL,
  key_id TEXT NOT NULL,
  selection TEXT NOT NULL,
  UNIQUE (base_url, key_id, selection)
);
CREATE TABLE answers (
  scope INTEGER NOT NULL,
  domain TEXT NOT NULL,
  found INTEGER NOT NULL,
  record TEXT,
  credits INTEGER NOT NULL,
  bought_at INTEGER NOT NULL,
  run INTEGER,
  PRIMARY KEY (scope, domain)
) WITHOUT ROWID;
CREATE TABLE claims (
  scope INTEGER NOT NULL,
  domain TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (scope, domain)
) WITHOUT ROWID;
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  fingerprint TEXT NOT NULL,
  detail TEXT NOT NULL,
  state TEXT NOT NULL,
  owner TEXT,
  expires_at INTEGER,
  started_at INTEGER NOT NULL
);
CREATE INDEX runs_open ON runs (fingerprint) WHERE state = 'open';
CREATE TABLE ledger (
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  base_url TEXT NOT NULL,
  key_id TEXT NOT NULL,
  command TEXT NOT NULL,
  credits INTEGER NOT NULL,
  outcome TEXT NOT NULL
);
CREATE INDEX ledger_key_at ON ledger (key_id, at);
CREATE TABLE reservations (
  id INTEGER PRIMARY KEY,
  base_url TEXT NOT NULL,
  key_id TEXT NOT NULL,
  owner TEXT NOT NULL,
  amount INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  command TEXT NOT NULL DEFAULT '',
  at INTEGER NOT NULL DEFAULT 0
);
${MONTH_USAGE}
`;

/**
 * From version 1: a reservation says which command took it and when, so that one whose process
 * is gone becomes a possibly-charged entry of the ledger, in its month, under its command.
 */
const MIGRATIONS: Record<number, string> = {
  1: `ALTER TABLE reservations ADD COLUMN command TEXT NOT NULL DEFAULT '';
ALTER TABLE reservations ADD COLUMN at INTEGER NOT NULL DEFAULT 0;`,
  // From version 2: the month's counter, built from the ledger and the holds. A hold of version 1
  // (sent when, unknown: it counted in every month) counts in the month of the upgrade.
  2: `${MONTH_USAGE}
UPDATE reservations SET at = CAST(strftime('%s', 'now') AS INTEGER) * 1000 WHERE at = 0;
INSERT INTO month_usage (key_id, month_from, spent, held)
  SELECT key_id, ${MONTH_OF_AT}, SUM(credits), 0 FROM ledger GROUP BY 1, 2;
INSERT INTO month_usage (key_id, month_from, spent, held)
  SELECT key_id, ${MONTH_OF_AT}, 0, SUM(amount) FROM reservations WHERE true GROUP BY 1, 2
  ON CONFLICT (key_id, month_from) DO UPDATE SET held = excluded.held;`,
};

/** A failure of SQLite as a problem naming the store's file: exit 8 for a refused write, else exit 2. */
export function storeProblem(path: string, error: unknown): Problem {
  if (error instanceof Problem) return error;
  if (isWriteFailure(error)) return writeProblem(error, path);
  const code = (error as { code?: string }).code;
  // SQLITE_ERROR at open: the tables are not the ones this schema version has (a damaged file,
  // or one some other program wrote).
  const notAStore = code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' || code === 'SQLITE_ERROR';
  return new Problem({
    code: 'store_unavailable',
    title: 'Cannot use the result store',
    detail: notAStore
      ? `${path} is not a company-data store (or is damaged)`
      : `${path}: ${(error as Error).message ?? String(error)}`,
    source: 'client',
    hint: notAStore
      ? `Move it aside with \`company-data store clear\` (it keeps the old file as ${path}.damaged-<time>), or give another file with --store <path>.`
      : 'Give another file with --store <path> (or COMPANY_DATA_STORE), or run with --no-store.',
    cause: error,
  });
}

/** The mark of a store found without its tables: its month caps cannot be trusted (ledgerLost). */
const LOST_TABLE = 'CREATE TABLE IF NOT EXISTS store_marks (name TEXT PRIMARY KEY, at INTEGER NOT NULL)';
const MARK_LOST = "INSERT OR REPLACE INTO store_marks (name, at) VALUES ('ledger_lost', ?)";

/**
 * A new store is made whole under another name and linked into place, so a store file without
 * tables is never one of ours being created: it was emptied. Paid data: 0600 from the start
 * (SQLite gives its -wal and -shm files the permissions of the database).
 */
function createIfMissing(path: string, Sqlite: typeof Database): void {
  if (existsSync(path)) return;
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  try {
    closeSync(openSync(draft, 'wx', 0o600));
    const db = new Sqlite(draft);
    try {
      // A rollback journal, not WAL, while it is a draft: every page is in the file itself when
      // it is linked into place (a WAL draft closed on a full disk keeps pages in its -wal file).
      // Opening it as the store turns WAL on.
      db.transaction(() => {
        db.exec(SCHEMA);
        db.pragma(`user_version = ${SCHEMA_VERSION}`);
      })();
    } finally {
      db.close();
    }
    try {
      linkSync(draft, path);
    } catch (error) {
      // Another process made it meanwhile (EEXIST): theirs is as good. A file system without
      // hard links: the file is made in place, as SQLite would.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') closeSync(openSync(path, 'a', 0o600));
    }
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${draft}${suffix}`, { force: true });
  }
}

/**
 * Opens the file at `path` (creating it, 0600, in a 0700 directory), its schema created or migrated
 * to this release's; a problem naming the file when it cannot be used.
 */
export async function openStoreFile(path: string): Promise<Database.Database> {
  const { default: Sqlite } = await import('better-sqlite3');
  let db: Database.Database;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    createIfMissing(path, Sqlite);
    db = new Sqlite(path, { timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    throw storeProblem(path, error);
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new Problem({
        code: 'store_too_new',
        title: 'The result store is newer than this company-data',
        detail: `${path} has schema version ${version}; this release understands version ${SCHEMA_VERSION} at most`,
        source: 'client',
        hint: 'Upgrade company-data, or give another file with --store <path> (or run with --no-store).',
      });
    }
    if (version < SCHEMA_VERSION) {
      db.transaction(() => {
        // A second process may have created or upgraded it between the check and the lock.
        let current = db.pragma('user_version', { simple: true }) as number;
        if (current === 0) {
          // A store this release creates has its tables before it takes the store's name
          // (createIfMissing): a file without them was emptied (cut to 0 bytes, overwritten), and
          // its ledger is lost. The mark stays until `store clear --ledger` (ledgerLost()).
          const tables = db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'").get() as {
            n: number;
          };
          db.exec(SCHEMA);
          if (tables.n === 0) {
            db.exec(LOST_TABLE);
            db.prepare(MARK_LOST).run(Date.now());
          }
          current = SCHEMA_VERSION;
        }
        for (; current < SCHEMA_VERSION; current++) db.exec(MIGRATIONS[current]);
        db.pragma(`user_version = ${SCHEMA_VERSION}`);
      }).immediate();
    }
    chmodSync(path, 0o600);
    return db;
  } catch (error) {
    db.close();
    throw storeProblem(path, error);
  }
}
