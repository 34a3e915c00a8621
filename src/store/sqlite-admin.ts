// The SQL behind `spend` and `store info|prune|clear|export` on the SQLite back end
// (SqliteStore's methods of the same names call these with its better-sqlite3 handle, inside the
// transaction they open). The groups, buckets and limits are src/store/rules.ts's.
import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { type ExportRow, exportedOf } from './admin.js';
import { ageBounds, expiry, SPEND_GROUP_COLUMNS, spendSince } from './rules.js';
import type {
  AnswerAges,
  Cleared,
  ExportedAnswer,
  Removed,
  SpendBy,
  SpendRow,
  StoreCounts,
} from './types.js';

/** Each column of a spend group (rules.ts, SPEND_GROUP_COLUMNS) in SQLite, in UTC. */
const COLUMN_SQL: Record<string, string> = {
  month: "strftime('%Y-%m', at / 1000, 'unixepoch')",
  day: "strftime('%Y-%m-%d', at / 1000, 'unixepoch')",
  command: 'command',
  base_url: 'base_url',
  key: 'key_id',
};

/** The ledger's charges since `since` (epoch ms, inclusive), one row per group, in group order. */
export function spendRows(db: Database.Database, by: SpendBy, since: number | undefined): SpendRow[] {
  const columns = SPEND_GROUP_COLUMNS[by];
  const names = columns.join(', ');
  const sql = `SELECT ${columns.map((column) => `${COLUMN_SQL[column]} AS ${column}`).join(', ')},
      SUM(CASE WHEN outcome = 'charged' THEN credits ELSE 0 END) AS charged,
      SUM(CASE WHEN outcome = 'charged' THEN 0 ELSE credits END) AS possibly_charged,
      COUNT(*) AS calls
    FROM ledger WHERE at >= ? GROUP BY ${names} ORDER BY ${names}`;
  return db.prepare(sql).all(spendSince(since)) as SpendRow[];
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** What the store holds at `now`. */
export function counts(path: string, db: Database.Database, now: number, ages: AnswerAges): StoreCounts {
  const c = db
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
    .get({ ...ageBounds(now), ...expiry(now, ages) }) as Record<
    'answers' | 'found' | 'd1' | 'd7' | 'd30' | 'older' | 'expired',
    number
  >;
  const ledger = (db.prepare('SELECT COUNT(*) AS n FROM ledger').get() as { n: number }).n;
  return {
    size_bytes: fileSize(path) + fileSize(`${path}-wal`),
    schema_version: db.pragma('user_version', { simple: true }) as number,
    answers: c.answers,
    found: c.found,
    not_found: c.answers - c.found,
    age_under_1_day: c.d1,
    age_1_to_7_days: c.d7,
    age_7_to_30_days: c.d30,
    age_over_30_days: c.older,
    expired: c.expired,
    ledger_entries: ledger,
  };
}

/**
 * Removes the answers older than their age limit (inside the caller's transaction, which has
 * dealt with the leases of owners that are gone). No VACUUM: SQLite reuses the freed pages for the
 * answers bought next.
 */
export function pruneAnswers(db: Database.Database, now: number, ages: AnswerAges): Removed {
  const limits = expiry(now, ages);
  const drop = db.prepare('DELETE FROM answers WHERE found = ? AND bought_at < ?');
  const found = drop.run(1, limits.found).changes;
  const notFound = drop.run(0, limits.notFound).changes;
  return { found, not_found: notFound };
}

/** Removes every stored answer (and the ledger too with `ledger`), inside the caller's transaction. */
export function clearRows(db: Database.Database, ledger: boolean): Cleared {
  const answers = db.prepare('DELETE FROM answers').run().changes;
  const entries = ledger ? db.prepare('DELETE FROM ledger').run().changes : 0;
  // The months' counters keep the live holds; what they had spent went with the ledger.
  if (ledger) db.prepare('UPDATE month_usage SET spent = 0').run();
  // Emptied on purpose: a ledger lost before is no longer a reason to refuse a month cap.
  const marks = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_marks'").get();
  if (ledger && marks) db.prepare("DELETE FROM store_marks WHERE name = 'ledger_lost'").run();
  return { answers, ledger_entries: entries };
}

/**
 * Gives the space of a cleared store back to the file system, quick once the answers are gone. A
 * VACUUM that cannot run (another process is writing) is skipped: the pages are reused later.
 */
export function vacuum(db: Database.Database): void {
  try {
    db.exec('VACUUM');
  } catch {
    // Busy: the pages are reused by later answers instead.
  }
}

/** Every stored answer, by domain then scope, read one at a time (a store may hold millions). */
export function* exported(db: Database.Database): Generator<ExportedAnswer> {
  const rows = db
    .prepare(
      `SELECT a.domain, a.found, a.record, a.credits, a.bought_at, s.base_url, s.key_id, s.selection
      FROM answers a JOIN scopes s ON s.id = a.scope ORDER BY a.domain, a.scope`,
    )
    .iterate() as IterableIterator<ExportRow>;
  for (const row of rows) yield exportedOf(row);
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
