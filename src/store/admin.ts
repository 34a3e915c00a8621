// The queries behind `company-data spend` and `store info|prune|clear|export`, on the store's
// better-sqlite3 handle. They read and delete; they never buy, claim or reserve anything, and a
// store that does not exist is reported as empty rather than created (existingStore).
import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { Problem, usageError } from '../problem.js';
import type { StoreHandle } from './handle.js';
import { DAY_MS } from './location.js';
import type { SqliteStore } from './sqlite.js';

/**
 * The store of a command that only inspects or removes: undefined when its file does not exist
 * (nothing is created to say it is empty); a usage error with --no-store.
 */
export async function existingStore(
  store: StoreHandle,
  command: string,
): Promise<{ path: string; opened: SqliteStore | undefined }> {
  const path = storeFile(store, command);
  return { path, opened: await store.openIfExists() };
}

/** The store's file; a usage error with --no-store, naming what `command` cannot do. */
export function storeFile(store: StoreHandle, command: string): string {
  if (store.path !== false) return store.path;
  throw usageError(
    `there is no store to ${command}: --no-store is given`,
    'Drop --no-store (the store is $XDG_STATE_HOME/company-data/store.db, or --store <path>).',
  );
}

// ---------------------------------------------------------------------------------------------
// spend

export const SPEND_GROUPS = ['month', 'day', 'command', 'key'] as const;
export type SpendBy = (typeof SPEND_GROUPS)[number];

export interface SpendTotal {
  /** Credits the service reported as charged. */
  charged: number;
  /** Credits of attempts whose answer never came: maybe charged, maybe not. */
  possibly_charged: number;
  /** Ledger entries: charged answers and unanswered attempts. */
  calls: number;
}

/** The columns naming a group, per --by. */
const GROUP_COLUMNS: Record<SpendBy, Array<[column: string, sql: string]>> = {
  month: [['month', "strftime('%Y-%m', at / 1000, 'unixepoch')"]],
  day: [['day', "strftime('%Y-%m-%d', at / 1000, 'unixepoch')"]],
  command: [['command', 'command']],
  key: [
    ['base_url', 'base_url'],
    ['key', 'key_id'],
  ],
};

export type SpendRow = SpendTotal & Record<string, string | number>;

/** The columns of `spend --by <by>`: the group's, then the sums. */
export function spendColumns(by: SpendBy): string[] {
  return [...GROUP_COLUMNS[by].map(([column]) => column), 'charged', 'possibly_charged', 'calls'];
}

/** The ledger's charges since `since` (epoch ms, inclusive), one row per group, in group order. */
export function spendRows(db: Database.Database, by: SpendBy, since: number | undefined): SpendRow[] {
  const groups = GROUP_COLUMNS[by];
  const names = groups.map(([column]) => column).join(', ');
  const sql = `SELECT ${groups.map(([column, expr]) => `${expr} AS ${column}`).join(', ')},
      SUM(CASE WHEN outcome = 'charged' THEN credits ELSE 0 END) AS charged,
      SUM(CASE WHEN outcome = 'charged' THEN 0 ELSE credits END) AS possibly_charged,
      COUNT(*) AS calls
    FROM ledger WHERE at >= ? GROUP BY ${names} ORDER BY ${names}`;
  return db.prepare(sql).all(since ?? Number.MIN_SAFE_INTEGER) as SpendRow[];
}

export function spendTotal(rows: readonly SpendTotal[]): SpendTotal {
  const total: SpendTotal = { charged: 0, possibly_charged: 0, calls: 0 };
  for (const row of rows) {
    total.charged += row.charged;
    total.possibly_charged += row.possibly_charged;
    total.calls += row.calls;
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// store info

export interface AnswerAges {
  /** Found answers older than this are expired (ms). */
  maxAgeMs: number;
  /** Not-found answers older than this are expired (ms). */
  notFoundMaxAgeMs: number;
}

export type StoreSummary = {
  path: string;
  exists: boolean;
  /** The database file and its write-ahead log. */
  size_bytes: number;
  schema_version: number | null;
  answers: number;
  found: number;
  not_found: number;
  age_under_1_day: number;
  age_1_to_7_days: number;
  age_7_to_30_days: number;
  age_over_30_days: number;
  /** What `store prune` removes under `ages`. */
  expired: number;
  ledger_entries: number;
};

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** What the store holds at `now`; zeros (and no schema) for a store that does not exist. */
export function storeSummary(
  path: string,
  db: Database.Database | undefined,
  now: number,
  ages: AnswerAges,
): StoreSummary {
  const size = fileSize(path) + fileSize(`${path}-wal`);
  const counts = db
    ? (db
        .prepare(
          `SELECT COUNT(*) AS answers,
            IFNULL(SUM(found = 1), 0) AS found,
            IFNULL(SUM(bought_at > @day), 0) AS d1,
            IFNULL(SUM(bought_at <= @day AND bought_at > @week), 0) AS d7,
            IFNULL(SUM(bought_at <= @week AND bought_at > @month), 0) AS d30,
            IFNULL(SUM(bought_at <= @month), 0) AS older,
            IFNULL(SUM(CASE WHEN found = 1 THEN bought_at < @found ELSE bought_at < @notFound END), 0) AS expired
          FROM answers`,
        )
        .get({
          day: now - DAY_MS,
          week: now - 7 * DAY_MS,
          month: now - 30 * DAY_MS,
          ...expiry(now, ages),
        }) as Record<'answers' | 'found' | 'd1' | 'd7' | 'd30' | 'older' | 'expired', number>)
    : { answers: 0, found: 0, d1: 0, d7: 0, d30: 0, older: 0, expired: 0 };
  const ledger = db ? (db.prepare('SELECT COUNT(*) AS n FROM ledger').get() as { n: number }).n : 0;
  return {
    path,
    exists: db !== undefined,
    size_bytes: size,
    schema_version: db ? (db.pragma('user_version', { simple: true }) as number) : null,
    answers: counts.answers,
    found: counts.found,
    not_found: counts.answers - counts.found,
    age_under_1_day: counts.d1,
    age_1_to_7_days: counts.d7,
    age_7_to_30_days: counts.d30,
    age_over_30_days: counts.older,
    expired: counts.expired,
    ledger_entries: ledger,
  };
}

/** The instants before which answers are expired (bought strictly earlier). */
function expiry(now: number, ages: AnswerAges): { found: number; notFound: number } {
  return { found: now - ages.maxAgeMs, notFound: now - ages.notFoundMaxAgeMs };
}

// ---------------------------------------------------------------------------------------------
// store prune and store clear

export interface Removed {
  found: number;
  not_found: number;
}

/**
 * Removes the answers older than their age limit, and the claims and month reservations whose
 * lease ran out (their owners are gone: a live owner renews its lease every few seconds), in one
 * transaction. No VACUUM: SQLite reuses the freed pages for the answers bought next.
 */
export function pruneAnswers(db: Database.Database, now: number, ages: AnswerAges): Removed {
  const limits = expiry(now, ages);
  return db
    .transaction((): Removed => {
      const drop = db.prepare('DELETE FROM answers WHERE found = ? AND bought_at < ?');
      const found = drop.run(1, limits.found).changes;
      const notFound = drop.run(0, limits.notFound).changes;
      dropLapsedLeases(db);
      return { found, not_found: notFound };
    })
    .immediate();
}

/** Leases are written with the real clock (src/store/sqlite.ts), so they are judged by it. */
function dropLapsedLeases(db: Database.Database): void {
  const realNow = Date.now();
  db.prepare('DELETE FROM claims WHERE expires_at <= ?').run(realNow);
  db.prepare('DELETE FROM reservations WHERE expires_at <= ?').run(realNow);
}

export interface Cleared {
  answers: number;
  ledger_entries: number;
}

/**
 * Removes every stored answer (and the ledger too with `ledger`), then gives the space back to
 * the file system with VACUUM, which is quick once the answers are gone. A VACUUM that cannot run
 * (another process is writing) is skipped: the answers are removed all the same.
 */
export function clearAnswers(db: Database.Database, ledger: boolean): Cleared {
  const cleared = db
    .transaction((): Cleared => {
      const answers = db.prepare('DELETE FROM answers').run().changes;
      const entries = ledger ? db.prepare('DELETE FROM ledger').run().changes : 0;
      dropLapsedLeases(db);
      return { answers, ledger_entries: entries };
    })
    .immediate();
  try {
    db.exec('VACUUM');
  } catch {
    // Busy: the pages are reused by later answers instead.
  }
  return cleared;
}

export function countRows(db: Database.Database, table: 'answers' | 'ledger'): number {
  return (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
}

// ---------------------------------------------------------------------------------------------
// store export

/** One stored answer as `store export` writes it: the purchase, its scope, and the record. */
export interface ExportedAnswer {
  domain: string;
  found: boolean;
  bought_at: string;
  credits: number;
  base_url: string;
  key: string;
  products: string[] | null;
  include: string[] | null;
  max_credits: number | null;
  record: Record<string, unknown> | null;
}

/** The columns of an export before the record's fields. */
export const EXPORT_COLUMNS = [
  'domain',
  'found',
  'bought_at',
  'credits',
  'base_url',
  'key',
  'products',
  'include',
  'max_credits',
] as const;

interface ExportRow {
  domain: string;
  found: number;
  record: string | null;
  credits: number;
  bought_at: number;
  base_url: string;
  key_id: string;
  selection: string;
}

/** Every stored answer, by domain then scope, read one at a time (a store may hold millions). */
export function* exportedAnswers(db: Database.Database): Generator<ExportedAnswer> {
  const rows = db
    .prepare(
      `SELECT a.domain, a.found, a.record, a.credits, a.bought_at, s.base_url, s.key_id, s.selection
      FROM answers a JOIN scopes s ON s.id = a.scope ORDER BY a.domain, a.scope`,
    )
    .iterate() as IterableIterator<ExportRow>;
  for (const row of rows) {
    const selection = JSON.parse(row.selection) as {
      products: string[] | null;
      include: string[] | null;
      max_credits: number | null;
    };
    yield {
      domain: row.domain,
      found: row.found === 1,
      bought_at: new Date(row.bought_at).toISOString(),
      credits: row.credits,
      base_url: row.base_url,
      key: row.key_id,
      products: selection.products,
      include: selection.include,
      max_credits: selection.max_credits,
      record: row.record === null ? null : (JSON.parse(row.record) as Record<string, unknown>),
    };
  }
}

/** The record fields of every stored answer, in the order they are first met (for CSV columns). */
export function recordFields(db: Database.Database): string[] {
  const seen = new Set<string>();
  const rows = db
    .prepare('SELECT record FROM answers WHERE record IS NOT NULL ORDER BY domain, scope')
    .pluck()
    .iterate() as IterableIterator<string>;
  for (const record of rows) for (const key of Object.keys(JSON.parse(record))) seen.add(key);
  return [...seen];
}

/**
 * `store clear` and `prune` remove answers that a batch in progress counts on (it reads back what
 * it bought for the duplicates of a domain): while a live run holds the store, they are refused.
 */
export function refuseWhileRunsLive(store: SqliteStore, command: string): void {
  const owners = store.liveRuns();
  if (owners.length === 0) return;
  throw new Problem({
    code: 'store_busy',
    title: 'A batch is using the store',
    detail: `${owners.join(', ')} ${owners.length === 1 ? 'is running a batch' : 'are running batches'} on ${store.path}; ${command} would make ${owners.length === 1 ? 'it' : 'them'} pay again for answers already bought`,
    source: 'client',
  });
}

/**
 * A store that cannot be read (damaged pages, not a store) is moved aside, with its -wal and -shm
 * files, so that the next command starts a new one; nothing is deleted. Returns the new name.
 */
export async function moveAside(path: string, now: number): Promise<string> {
  const { rename } = await import('node:fs/promises');
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const aside = `${path}.damaged-${stamp}`;
  for (const suffix of ['', '-wal', '-shm']) {
    await rename(`${path}${suffix}`, `${aside}${suffix}`).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  return aside;
}
