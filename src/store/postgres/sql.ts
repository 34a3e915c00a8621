// The statements of a PostgreSQL store, by name (each is prepared once per connection). Where a rule
// of src/store/rules.ts must be judged inside the database to hold across hosts (an owner's
// liveness, by the database's clock; the holds of a month) the SQL says what the rule says, and
// names it.
import type pg from 'pg';
import { LEASE_MS } from '../rules.js';
import { LOCK_SPACE } from './schema.js';

/** The server's clock in epoch ms (leases are judged by one clock for every host). */
const NOW = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/**
 * rules.ts's `ownerAlive` in SQL: `owner` (host, pid, 16 hex digits) is alive while its lease runs
 * and its advisory lock, keyed by the token, is held by a session of this database (an owner whose
 * session ended, killed or cut off, is gone at once).
 */
function aliveSql(owner: string, expires: string): string {
  const key = `('x' || split_part(${owner}, E'\\t', 3))::bit(64)::bigint`;
  return `(${owner} IS NOT NULL AND COALESCE(${expires} > ${NOW}, false) AND EXISTS (
    SELECT 1 FROM pg_catalog.pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
      AND l.classid = (${key} >> 32)::oid AND l.objid = (${key} & 4294967295)::oid))`;
}

/** Another owner's row that is gone: the one test of a takeover, a lost hold and a lapsed claim. */
const gone = (alias: string) =>
  `${alias}.owner <> $1 AND NOT ${aliveSql(`${alias}.owner`, `${alias}.expires_at`)}`;

/** The columns of a hold, for rules.ts's `lostEntry`. */
const HELD = 'r.at, r.base_url, r.key_id, r.command, r.amount';

/**
 * Settle once (rules.ts, entryToRecord), as common table expressions from parameter $o on ($o the
 * owner): the hold dropped by id and owner (a hold already turned into a possibly-charged entry is
 * no longer ours); the entry recorded when it has credits (recordable) and its hold, if any, was
 * still ours; the month's counter moved by both (counterMonth). Parameters after the owner: the
 * hold's id (null: none), the entry's at, base_url, key_id, command, credits (0: no entry) and
 * outcome, the entry's month and the hold's month.
 */
function settleCtes(o: number): string {
  const p = (i: number) => `$${o + i}`;
  return `h AS (DELETE FROM reservations WHERE id = ${p(1)}::bigint AND owner = ${p(0)} RETURNING key_id, amount),
    l AS (INSERT INTO ledger (at, base_url, key_id, command, credits, outcome)
      SELECT ${p(2)}::bigint, ${p(3)}::text, ${p(4)}::text, ${p(5)}::text, ${p(6)}::integer, ${p(7)}::text
      WHERE ${p(6)}::integer > 0 AND (${p(1)}::bigint IS NULL OR EXISTS (SELECT 1 FROM h))
      RETURNING key_id, credits),
    u AS (INSERT INTO month_usage AS m (key_id, month_from, spent, held)
      SELECT key_id, month_from, SUM(spent), SUM(held) FROM (
        SELECT key_id, ${p(9)}::bigint AS month_from, 0 AS spent, -amount AS held FROM h
        UNION ALL SELECT key_id, ${p(8)}::bigint, credits, 0 FROM l) AS d GROUP BY key_id, month_from
      ON CONFLICT (key_id, month_from) DO UPDATE SET spent = m.spent + EXCLUDED.spent, held = m.held + EXCLUDED.held)`;
}

export const SQL = {
  scopeGet: 'SELECT id FROM scopes WHERE base_url = $1 AND key_id = $2 AND selection = $3',
  scopePut:
    'INSERT INTO scopes (base_url, key_id, selection) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING id',
  answerGet: 'SELECT found, record, credits, bought_at, run FROM answers WHERE scope = $1 AND domain = $2',
  answerPut: `INSERT INTO answers (scope, domain, found, record, credits, bought_at, run)
    VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT (scope, domain) DO UPDATE SET found = EXCLUDED.found, record = EXCLUDED.record,
      credits = EXCLUDED.credits, bought_at = EXCLUDED.bought_at, run = EXCLUDED.run`,
  // Ours when there is no claim, when it is ours already, or when its owner is gone: the row lock
  // of ON CONFLICT makes a second host wait for the first and then see its claim.
  claimPut: `INSERT INTO claims AS c (scope, domain, owner, expires_at) VALUES ($1, $2, $3, ${NOW} + ${LEASE_MS})
    ON CONFLICT (scope, domain) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
    WHERE c.owner = $3 OR NOT ${aliveSql('c.owner', 'c.expires_at')}
    RETURNING 1`,
  claimDrop: 'DELETE FROM claims WHERE scope = $1 AND domain = $2 AND owner = $3',
  runLock: `SELECT pg_advisory_xact_lock(${LOCK_SPACE}, hashtext($1))`,
  runGet: `SELECT id, owner, started_at, detail, (owner <> $2 AND ${aliveSql('owner', 'expires_at')}) AS alive
    FROM runs WHERE fingerprint = $1 AND state = 'open' ORDER BY id DESC LIMIT 1 FOR UPDATE`,
  runTake: `UPDATE runs SET owner = $2, expires_at = ${NOW} + ${LEASE_MS} WHERE id = $1`,
  runAbandon: "UPDATE runs SET state = 'abandoned', owner = NULL, expires_at = NULL WHERE id = $1",
  runPut: `INSERT INTO runs (fingerprint, detail, state, owner, expires_at, started_at)
    VALUES ($1, $2, 'open', $3, ${NOW} + ${LEASE_MS}, $4) RETURNING id`,
  runEnd: 'UPDATE runs SET state = $1, owner = NULL, expires_at = NULL WHERE id = $2 AND owner = $3',
  liveRuns: `SELECT owner FROM runs WHERE state = 'open' AND owner IS NOT NULL AND owner <> $1
    AND ${aliveSql('owner', 'expires_at')} ORDER BY id`,
  ledgerPut:
    'INSERT INTO ledger (at, base_url, key_id, command, credits, outcome) VALUES ($1, $2, $3, $4, $5, $6)',
  // A hold against its month's counter (rules.ts, counterMonth and holdFits), in one statement: the
  // counter's row is created or locked, raised by the amount only when the hold fits under the cap
  // ($8; none: always), and the hold is written only when it was. The row lock orders every hold
  // of the key's month, on every host; the account is the key, whatever its base URL.
  // $1 base_url, $2 key_id, $3 owner, $4 amount, $5 command, $6 at, $7 month, $8 cap.
  holdPut: `WITH m AS (
      INSERT INTO month_usage AS m (key_id, month_from, spent, held)
      SELECT $2::text, $7::bigint, 0, $4::integer WHERE $8::bigint IS NULL OR $4::integer <= $8::bigint
      ON CONFLICT (key_id, month_from) DO UPDATE SET held = m.held + EXCLUDED.held
        WHERE $8::bigint IS NULL OR m.spent + m.held + EXCLUDED.held <= $8::bigint
      RETURNING 1)
    INSERT INTO reservations (base_url, key_id, owner, amount, expires_at, command, at)
    SELECT $1, $2, $3, $4, ${NOW} + ${LEASE_MS}, $5, $6 FROM m RETURNING id`,
  // Settling, alone (the answer saved with it: answerSave).
  settle: `WITH ${settleCtes(1)} SELECT 1`,
  // An answer saved, our claim dropped and its purchase settled, in one statement.
  // $1 scope, $2 domain, $3 found, $4 record, $5 credits, $6 bought_at, $7 run, then the settlement's.
  answerSave: `WITH a AS (INSERT INTO answers (scope, domain, found, record, credits, bought_at, run)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (scope, domain) DO UPDATE SET found = EXCLUDED.found, record = EXCLUDED.record,
        credits = EXCLUDED.credits, bought_at = EXCLUDED.bought_at, run = EXCLUDED.run),
    c AS (DELETE FROM claims WHERE scope = $1 AND domain = $2 AND owner = $8),
    ${settleCtes(8)} SELECT 1`,
  // The month's counter moved by what a statement of the client did (lost holds recorded).
  countAdd: `INSERT INTO month_usage AS m (key_id, month_from, spent, held) VALUES ($1, $2, $3, $4)
    ON CONFLICT (key_id, month_from) DO UPDATE SET spent = m.spent + EXCLUDED.spent, held = m.held + EXCLUDED.held`,
  countGet: 'SELECT spent, held FROM month_usage WHERE key_id = $1 AND month_from = $2',
  // The holds that nobody will settle, taken out for the ledger (rules.ts, lostEntry): of owners that
  // are gone (of one key, or all), and our own on closing.
  orphanKey: `DELETE FROM reservations r WHERE r.key_id = $2 AND ${gone('r')} RETURNING ${HELD}`,
  orphanAll: `DELETE FROM reservations r WHERE ${gone('r')} RETURNING ${HELD}`,
  orphanMine: `DELETE FROM reservations r WHERE r.owner = $1 RETURNING ${HELD}`,
  lostHolds: `SELECT ${HELD} FROM reservations r WHERE ${gone('r')} ORDER BY r.id`,
  // rules.ts: the ledger of the month, and the live holds that count in it (holdInMonth).
  usage: `SELECT
    (SELECT COALESCE(SUM(credits), 0) FROM ledger WHERE key_id = $1 AND at >= $2 AND at < $3) AS spent,
    (SELECT COALESCE(SUM(amount), 0) FROM reservations WHERE key_id = $1
      AND (at = 0 OR (at >= $2 AND at < $3))) AS held`,
  renew: `WITH c AS (UPDATE claims SET expires_at = ${NOW} + ${LEASE_MS} WHERE owner = $1),
    r AS (UPDATE runs SET expires_at = ${NOW} + ${LEASE_MS} WHERE owner = $1),
    h AS (UPDATE reservations SET expires_at = ${NOW} + ${LEASE_MS} WHERE owner = $1)
    SELECT 1`,
  dropClaims: 'DELETE FROM claims WHERE owner = $1',
  releaseRuns: 'UPDATE runs SET owner = NULL, expires_at = NULL WHERE owner = $1',
  lapsedClaims: `DELETE FROM claims c WHERE ${gone('c')}`,
} as const;

/** Each column of a spend group (rules.ts, SPEND_GROUP_COLUMNS) in PostgreSQL, in UTC. */
export const COLUMN_SQL: Record<string, string> = {
  month: "to_char(to_timestamp(at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM')",
  day: "to_char(to_timestamp(at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
  command: 'command',
  base_url: 'base_url',
  key: 'key_id',
};

export interface AnswerRow {
  found: boolean;
  record: Record<string, unknown> | null;
  credits: number;
  bought_at: number;
  run: number | null;
}

export interface HeldRow {
  at: number;
  base_url: string;
  key_id: string;
  command: string;
  amount: number;
}

/** A connection, or the pool (a statement standing alone). */
export type Runner = Pick<pg.ClientBase, 'query'>;

/** Runs the statement `name` of SQL with `values`. */
export function named<R extends pg.QueryResultRow = pg.QueryResultRow>(
  runner: Runner,
  name: keyof typeof SQL,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  return runner.query<R>({ name, text: SQL[name], values });
}
