// The SQL behind `spend` and `store info|prune|clear|export` on the PostgreSQL back end
// (PostgresStore's methods of the same names call these). The groups, buckets and limits are
// src/store/rules.ts's; the leases of owners that are gone are dealt with by the caller, in the
// same transaction.
import { exportedOf } from '../admin.js';
import { ageBounds, expiry, SPEND_GROUP_COLUMNS, spendSince } from '../rules.js';
import type {
  AnswerAges,
  Cleared,
  ExportedAnswer,
  Removed,
  SpendBy,
  SpendRow,
  StoreCounts,
} from '../types.js';
import { type AnswerRow, COLUMN_SQL, type Runner } from './sql.js';

const PAGE = 1000;

/** The ledger's charges since `since` (epoch ms, inclusive), one row per group, in group order. */
export async function spendRows(db: Runner, by: SpendBy, since: number | undefined): Promise<SpendRow[]> {
  const exprs = SPEND_GROUP_COLUMNS[by].map((column) => COLUMN_SQL[column]);
  const text = `SELECT ${SPEND_GROUP_COLUMNS[by].map((column, i) => `${exprs[i]} AS "${column}"`).join(', ')},
      COALESCE(SUM(CASE WHEN outcome = 'charged' THEN credits ELSE 0 END), 0) AS charged,
      COALESCE(SUM(CASE WHEN outcome = 'charged' THEN 0 ELSE credits END), 0) AS possibly_charged,
      COUNT(*) AS calls
    FROM ledger WHERE at >= $1 GROUP BY ${exprs.join(', ')}
    ORDER BY ${exprs.map((expr) => `${expr} COLLATE "C"`).join(', ')}`;
  return (await db.query<SpendRow>({ name: `spend_${by}`, text, values: [spendSince(since)] })).rows;
}

/** What the store holds at `now`: its tables' size in `schema`, and the answers by outcome and age. */
export async function counts(
  db: Runner,
  schema: string,
  now: number,
  ages: AnswerAges,
): Promise<StoreCounts> {
  const text = `SELECT
      (SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind = 'r') AS size_bytes,
      (SELECT version FROM schema_version) AS schema_version,
      COUNT(*) AS answers,
      COUNT(*) FILTER (WHERE found) AS found,
      COUNT(*) FILTER (WHERE bought_at > $2) AS d1,
      COUNT(*) FILTER (WHERE bought_at <= $2 AND bought_at > $3) AS d7,
      COUNT(*) FILTER (WHERE bought_at <= $3 AND bought_at > $4) AS d30,
      COUNT(*) FILTER (WHERE bought_at <= $4) AS older,
      COUNT(*) FILTER (WHERE CASE WHEN found THEN bought_at < $5 ELSE bought_at < $6 END) AS expired,
      (SELECT COUNT(*) FROM ledger) AS ledger_entries
    FROM answers`;
  const bounds = ageBounds(now);
  const limits = expiry(now, ages);
  const values = [schema, bounds.day, bounds.week, bounds.month, limits.found, limits.notFound];
  const row = (await db.query<Record<string, number>>({ name: 'counts', text, values })).rows[0];
  return {
    size_bytes: row.size_bytes,
    schema_version: row.schema_version ?? null,
    answers: row.answers,
    found: row.found,
    not_found: row.answers - row.found,
    age_under_1_day: row.d1,
    age_1_to_7_days: row.d7,
    age_7_to_30_days: row.d30,
    age_over_30_days: row.older,
    expired: row.expired,
    ledger_entries: row.ledger_entries,
  };
}

/** Removes the answers older than their age limit (inside the caller's transaction). */
export async function pruneAnswers(db: Runner, now: number, ages: AnswerAges): Promise<Removed> {
  const limits = expiry(now, ages);
  const drop = 'DELETE FROM answers WHERE found = $1 AND bought_at < $2';
  const found = (await db.query({ name: 'pruneAnswers', text: drop, values: [true, limits.found] })).rowCount;
  const notFound = (await db.query({ name: 'pruneAnswers', text: drop, values: [false, limits.notFound] }))
    .rowCount;
  return { found: found ?? 0, not_found: notFound ?? 0 };
}

/** Removes every stored answer (and the ledger too with `ledger`), inside the caller's transaction. */
export async function clearRows(db: Runner, ledger: boolean): Promise<Cleared> {
  const answers = (await db.query('DELETE FROM answers')).rowCount ?? 0;
  const entries = ledger ? ((await db.query('DELETE FROM ledger')).rowCount ?? 0) : 0;
  // The months' counters keep the live holds; what they had spent went with the ledger.
  if (ledger) await db.query('UPDATE month_usage SET spent = 0');
  return { answers, ledger_entries: entries };
}

interface ExportRow extends AnswerRow {
  domain: string;
  scope: number;
  base_url: string;
  key_id: string;
  selection: string;
}

/** Reads one statement's rows (the store runs it through its guard, which names the store). */
export type PageReader = (name: string, text: string, values: unknown[]) => Promise<ExportRow[]>;

/** Every stored answer, by domain then scope, read in pages. */
export async function* exported(read: PageReader): AsyncGenerator<ExportedAnswer> {
  const columns =
    'a.domain, a.scope, a.found, a.record, a.credits, a.bought_at, s.base_url, s.key_id, s.selection';
  for await (const row of pages(read, 'exportPage', columns, 'answers a JOIN scopes s ON s.id = a.scope')) {
    yield exportedOf(row);
  }
}

/** The record fields of every stored answer, in the order first met (domain, then scope). */
export async function recordFields(read: PageReader): Promise<string[]> {
  const seen = new Set<string>();
  for await (const row of pages(
    read,
    'fieldsPage',
    'a.domain, a.scope, a.record',
    'answers a',
    'a.record IS NOT NULL',
  )) {
    for (const key of Object.keys(row.record ?? {})) seen.add(key);
  }
  return [...seen];
}

/** Rows in pages of PAGE, by domain then scope (keyset: no transaction stays open meanwhile). */
async function* pages(
  read: PageReader,
  name: string,
  columns: string,
  from: string,
  where = 'true',
): AsyncGenerator<ExportRow> {
  const text = `SELECT ${columns} FROM ${from}
    WHERE ${where} AND (a.domain, a.scope) > ($1, $2) ORDER BY a.domain, a.scope LIMIT ${PAGE}`;
  let after: [string, number] = ['', -1];
  for (;;) {
    const rows = await read(name, text, after);
    yield* rows;
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1];
    after = [last.domain, last.scope];
  }
}
