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
 * A hold against its month's counter (rules.ts, counterMonth and holdFits), in one statement: the
 * counter's row is created or locked, raised by the amount only when the hold fits under the cap
 * (none: always), and the hold is written only when it was. The row lock orders every hold of the
 * key's month, on every host; the account is the key, whatever its base URL. Its values: base_url,
 * key_id, owner, amount, command, at, the month, the cap (null: none).
 */
function holdSql([base, key, owner, amount, command, at, month, cap]: string[]): string {
  return `WITH m AS (
      INSERT INTO month_usage AS m (key_id, month_from, spent, held)
      SELECT ${key}::text, ${month}::bigint, 0, ${amount}::integer
      WHERE ${cap}::bigint IS NULL OR ${amount}::integer <= ${cap}::bigint
      ON CONFLICT (key_id, month_from) DO UPDATE SET held = m.held + EXCLUDED.held
        WHERE ${cap}::bigint IS NULL OR m.spent + m.held + EXCLUDED.held <= ${cap}::bigint
      RETURNING 1)
    INSERT INTO reservations (base_url, key_id, owner, amount, expires_at, command, at)
    SELECT ${base}, ${key}, ${owner}, ${amount}, ${NOW} + ${LEASE_MS}, ${command}, ${at} FROM m RETURNING id`;
}

/**
 * Claims on the domains of one scope, each in turn, with the month hold of each domain that is
 * ours to buy, as a function of the session (pg_temp: made by each connection of this release when
 * it opens, so that no release's function is another's), in one round trip for them all. For each
 * domain, as the store's claim() decides (src/store/postgres/store.ts says it for one): the claim
 * is ours when there is none, it is ours already, or its owner is gone (ownerAlive); then, in a
 * statement of its own (a new snapshot, so an answer saved by a host that held the claim until a
 * moment ago is seen), the answer: a fresh one (rules.ts, isFresh) is the result (and our claim is
 * dropped); else a claim of another live owner is busy; else the claim is ours, with its hold
 * (holdSql) when one is asked for; a hold id null then says the month had no room.
 */
export const CLAIM_FUNCTION = `CREATE FUNCTION pg_temp.company_data_claim(
  p_scope bigint, p_domains text[], p_owner text, p_found_since bigint, p_not_found_since bigint, p_run bigint,
  p_holds boolean[], p_base text, p_key text, p_amounts integer[], p_command text, p_ats bigint[],
  p_months bigint[], p_cap bigint)
RETURNS TABLE (o_domain text, o_state text, o_found boolean, o_record json, o_credits integer,
  o_bought_at bigint, o_run bigint, o_hold bigint)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  i integer;
  got boolean;
  a record;
BEGIN
  FOR i IN 1 .. COALESCE(array_length(p_domains, 1), 0) LOOP
    o_domain := p_domains[i];
    o_found := NULL; o_record := NULL; o_credits := NULL; o_bought_at := NULL; o_run := NULL; o_hold := NULL;
    got := NULL;
    INSERT INTO claims AS c (scope, domain, owner, expires_at)
      VALUES (p_scope, p_domains[i], p_owner, ${NOW} + ${LEASE_MS})
      ON CONFLICT (scope, domain) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
      WHERE c.owner = p_owner OR NOT ${aliveSql('c.owner', 'c.expires_at')}
      RETURNING true INTO got;
    SELECT x.found, x.record, x.credits, x.bought_at, x.run INTO a
      FROM answers x WHERE x.scope = p_scope AND x.domain = p_domains[i];
    IF FOUND AND ((p_run IS NOT NULL AND a.run = p_run)
        OR a.bought_at >= CASE WHEN a.found THEN p_found_since ELSE p_not_found_since END) THEN
      IF got THEN
        DELETE FROM claims WHERE scope = p_scope AND domain = p_domains[i] AND owner = p_owner;
      END IF;
      o_state := 'answered';
      o_found := a.found; o_record := a.record; o_credits := a.credits; o_bought_at := a.bought_at; o_run := a.run;
    ELSIF got IS NULL THEN
      o_state := 'busy';
    ELSE
      o_state := 'claimed';
      IF p_holds[i] THEN
        ${holdSql(['p_base', 'p_key', 'p_owner', 'p_amounts[i]', 'p_command', 'p_ats[i]', 'p_months[i]', 'p_cap'])} INTO o_hold;
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$fn$`;

export const SQL = {
  scopeGet: 'SELECT id FROM scopes WHERE base_url = $1 AND key_id = $2 AND selection = $3',
  scopePut:
    'INSERT INTO scopes (base_url, key_id, selection) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING id',
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
  holdPut: holdSql(['$1', '$2', '$3', '$4', '$5', '$6', '$7', '$8']),
  // The answers of many domains of one scope (find, batched: src/store/postgres/batches.ts).
  answersGet: `SELECT domain, found, record, credits, bought_at, run FROM answers
    WHERE scope = $1 AND domain = ANY($2::text[])`,
  // Claims on many domains, each with its hold (claimSql below), in one round trip.
  claimBatch: `SELECT * FROM pg_temp.company_data_claim($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
  // Answers saved, our claims on them dropped, and purchases settled (rules.ts, entryToRecord:
  // settle once), for many at once: $2 is a JSON array of SaveRow (ledger.ts), $1 the owner. Each
  // row's hold is dropped by id and owner (a hold already turned into a possibly-charged entry is
  // no longer ours); its entry is recorded when it has credits and its hold, if any, was still
  // ours; the months' counters move by both (counterMonth). A row without a domain settles only.
  saves: `WITH v AS (SELECT * FROM json_to_recordset($2::json) AS v(scope bigint, domain text,
      found boolean, record json, credits integer, bought_at bigint, run bigint, hold_id bigint,
      hold_month bigint, e_at bigint, e_base text, e_key text, e_command text, e_credits integer,
      e_outcome text, e_month bigint)),
    a AS (INSERT INTO answers (scope, domain, found, record, credits, bought_at, run)
      SELECT scope, domain, found, record, credits, bought_at, run FROM v WHERE domain IS NOT NULL
      ON CONFLICT (scope, domain) DO UPDATE SET found = EXCLUDED.found, record = EXCLUDED.record,
        credits = EXCLUDED.credits, bought_at = EXCLUDED.bought_at, run = EXCLUDED.run),
    c AS (DELETE FROM claims c USING v
      WHERE v.domain IS NOT NULL AND c.scope = v.scope AND c.domain = v.domain AND c.owner = $1),
    h AS (DELETE FROM reservations r USING v WHERE r.id = v.hold_id AND r.owner = $1
      RETURNING r.id, r.key_id, r.amount, v.hold_month),
    e AS (SELECT * FROM v WHERE e_credits > 0 AND (hold_id IS NULL OR hold_id IN (SELECT id FROM h))),
    l AS (INSERT INTO ledger (at, base_url, key_id, command, credits, outcome)
      SELECT e_at, e_base, e_key, e_command, e_credits, e_outcome FROM e),
    u AS (INSERT INTO month_usage AS m (key_id, month_from, spent, held)
      SELECT key_id, month_from, SUM(spent), SUM(held) FROM (
        SELECT key_id, hold_month AS month_from, 0 AS spent, -amount AS held FROM h
        UNION ALL SELECT e_key, e_month, e_credits, 0 FROM e) AS d GROUP BY key_id, month_from
      ON CONFLICT (key_id, month_from) DO UPDATE SET spent = m.spent + EXCLUDED.spent, held = m.held + EXCLUDED.held)
    SELECT 1`,
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
