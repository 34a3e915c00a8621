// Month holds and the ledger of a PostgreSQL store: a hold against its month's counter, settle
// once, and the holds nobody will settle recorded as possibly charged. Each decision is
// src/store/rules.ts's; this file says it in statements (src/store/postgres/sql.ts).
import { counterMonth, lostEntry, recordable } from '../rules.js';
import type { HoldRequest, LedgerEntry, Settlement, StoredAnswer } from '../types.js';
import { type AnswerRow, type HeldRow, named, type Runner } from './sql.js';

export function answerOf(row: AnswerRow): StoredAnswer {
  return {
    found: row.found,
    record: row.record,
    credits: row.credits,
    boughtAt: row.bought_at,
    run: row.run,
  };
}

/** A hold's possibly-charged entry (rules.ts, lostEntry). */
export function entryOf(r: HeldRow): LedgerEntry {
  return lostEntry(
    { at: r.at, baseUrl: r.base_url, keyId: r.key_id, command: r.command, amount: r.amount },
    Date.now(),
  );
}

/**
 * A hold of `owner` under `hold.cap` against its month's counter (rules.ts, holdFits), in one
 * statement that two hosts cannot both pass for the last room; its id, or null when there is none.
 */
export async function holdIn(db: Runner, owner: string, hold: HoldRequest): Promise<number | null> {
  const values = [
    hold.baseUrl,
    hold.keyId,
    owner,
    hold.amount,
    hold.command,
    hold.at,
    counterMonth(hold.at),
    hold.cap ?? null,
  ];
  return (await named<{ id: number }>(db, 'holdPut', values)).rows[0]?.id ?? null;
}

/**
 * The values of a settlement for the statements `settle` and `answerSave` (sql.ts, settleCtes), from
 * the owner on: settle once is judged inside the statement.
 */
export function settlementValues(owner: string, settlement: Settlement | undefined): unknown[] {
  const { reservation, entry } = settlement ?? {};
  const e = recordable(entry);
  return [
    owner,
    reservation?.id ?? null,
    e?.at ?? 0,
    e?.baseUrl ?? '',
    e?.keyId ?? '',
    e?.command ?? '',
    e?.credits ?? 0,
    e?.outcome ?? 'charged',
    counterMonth(e?.at ?? 0),
    counterMonth(reservation?.at ?? 0),
  ];
}

/** Settle once (rules.ts, entryToRecord), in one statement. */
export async function settleIn(db: Runner, owner: string, settlement: Settlement): Promise<void> {
  await named(db, 'settle', settlementValues(owner, settlement));
}

/** An entry with credits, counted in its month (inside the caller's transaction). */
async function putLedger(db: Runner, entry: LedgerEntry): Promise<void> {
  const e = recordable(entry);
  if (!e) return;
  await named(db, 'ledgerPut', [e.at, e.baseUrl, e.keyId, e.command, e.credits, e.outcome]);
  await named(db, 'countAdd', [e.keyId, counterMonth(e.at), e.credits, 0]);
}

/**
 * Takes out the holds a statement names, and records each as possibly charged: the counter's
 * `held` gives back what `spent` takes (inside the caller's transaction).
 */
export async function orphan(
  db: Runner,
  statement: 'orphanKey' | 'orphanAll' | 'orphanMine',
  values: unknown[],
): Promise<void> {
  for (const row of (await named<HeldRow>(db, statement, values)).rows) {
    await named(db, 'countAdd', [row.key_id, counterMonth(row.at), 0, -row.amount]);
    await putLedger(db, entryOf(row));
  }
}

/**
 * The holds of owners that are gone become possibly-charged entries, and their claims are dropped:
 * gone by the same test as a takeover (rules.ts, ownerAlive).
 */
export async function dropLapsed(db: Runner, owner: string): Promise<void> {
  await orphan(db, 'orphanAll', [owner]);
  await named(db, 'lapsedClaims', [owner]);
}
