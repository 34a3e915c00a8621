// The prepared statements of a SQLite store, by name, and the rows they read.
import type Database from 'better-sqlite3';

export interface AnswerRow {
  found: number;
  record: string | null;
  credits: number;
  bought_at: number;
  run: number | null;
}

export interface Owned {
  owner: string;
  expires_at: number;
}

export interface HeldRow extends Owned {
  id: number;
  amount: number;
  command: string;
  at: number;
}

/** Every statement the store runs on its rows, prepared once when it opens. */
export function prepareStatements(db: Database.Database) {
  return {
    scopeGet: db.prepare<[string, string, string], { id: number }>(
      'SELECT id FROM scopes WHERE base_url = ? AND key_id = ? AND selection = ?',
    ),
    scopePut: db.prepare('INSERT OR IGNORE INTO scopes (base_url, key_id, selection) VALUES (?, ?, ?)'),
    answerGet: db.prepare<[number, string], AnswerRow>(
      'SELECT found, record, credits, bought_at, run FROM answers WHERE scope = ? AND domain = ?',
    ),
    answerPut: db.prepare(
      'INSERT OR REPLACE INTO answers (scope, domain, found, record, credits, bought_at, run) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    claimGet: db.prepare<[number, string], Owned>(
      'SELECT owner, expires_at FROM claims WHERE scope = ? AND domain = ?',
    ),
    claimPut: db.prepare(
      'INSERT OR REPLACE INTO claims (scope, domain, owner, expires_at) VALUES (?, ?, ?, ?)',
    ),
    claimDrop: db.prepare('DELETE FROM claims WHERE scope = ? AND domain = ? AND owner = ?'),
    othersClaims: db.prepare<[string], Owned & { scope: number; domain: string }>(
      'SELECT scope, domain, owner, expires_at FROM claims WHERE owner <> ?',
    ),
    runGet: db.prepare<[string], Owned & { id: number; started_at: number; detail: string }>(
      "SELECT id, owner, expires_at, started_at, detail FROM runs WHERE fingerprint = ? AND state = 'open' ORDER BY id DESC LIMIT 1",
    ),
    runTake: db.prepare('UPDATE runs SET owner = ?, expires_at = ? WHERE id = ?'),
    runPut: db.prepare(
      "INSERT INTO runs (fingerprint, detail, state, owner, expires_at, started_at) VALUES (?, ?, 'open', ?, ?, ?)",
    ),
    runAbandon: db.prepare(
      "UPDATE runs SET state = 'abandoned', owner = NULL, expires_at = NULL WHERE id = ?",
    ),
    runEnd: db.prepare(
      'UPDATE runs SET state = ?, owner = NULL, expires_at = NULL WHERE id = ? AND owner = ?',
    ),
    ledgerPut: db.prepare(
      'INSERT INTO ledger (at, base_url, key_id, command, credits, outcome) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    // The account is the key: a month is summed over every base URL the key was used through.
    ledgerSum: db.prepare<[string, number, number], { total: number | null }>(
      'SELECT SUM(credits) AS total FROM ledger WHERE key_id = ? AND at >= ? AND at < ?',
    ),
    reservations: db.prepare<[string], HeldRow & { base_url: string }>(
      'SELECT id, owner, expires_at, amount, command, at, base_url FROM reservations WHERE key_id = ?',
    ),
    allReservations: db.prepare<[], HeldRow & { base_url: string; key_id: string }>(
      'SELECT id, owner, expires_at, amount, command, at, base_url, key_id FROM reservations',
    ),
    ownReservations: db.prepare<[string], HeldRow & { base_url: string; key_id: string }>(
      'SELECT id, owner, expires_at, amount, command, at, base_url, key_id FROM reservations WHERE owner = ?',
    ),
    reservationPut: db.prepare(
      'INSERT INTO reservations (base_url, key_id, owner, amount, expires_at, command, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    reservationDrop: db.prepare('DELETE FROM reservations WHERE id = ?'),
    // By id and owner: a row id freed by an orphaned hold may already be another owner's.
    reservationSettle: db.prepare<[number, string], { amount: number; at: number; key_id: string }>(
      'DELETE FROM reservations WHERE id = ? AND owner = ? RETURNING amount, at, key_id',
    ),
    // The month's counter (rules.ts, counterMonth): one row per key and month, moved by each hold,
    // settle and lost hold in the same transaction.
    countGet: db.prepare<[string, number], { spent: number; held: number }>(
      'SELECT spent, held FROM month_usage WHERE key_id = ? AND month_from = ?',
    ),
    countAdd: db.prepare<[string, number, number, number]>(
      `INSERT INTO month_usage (key_id, month_from, spent, held) VALUES (?, ?, ?, ?)
       ON CONFLICT (key_id, month_from) DO UPDATE SET spent = spent + excluded.spent, held = held + excluded.held`,
    ),
    renewClaims: db.prepare('UPDATE claims SET expires_at = ? WHERE owner = ?'),
    renewRuns: db.prepare('UPDATE runs SET expires_at = ? WHERE owner = ?'),
    renewReservations: db.prepare('UPDATE reservations SET expires_at = ? WHERE owner = ?'),
    dropClaims: db.prepare('DELETE FROM claims WHERE owner = ?'),
    releaseRuns: db.prepare('UPDATE runs SET owner = NULL, expires_at = NULL WHERE owner = ?'),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
