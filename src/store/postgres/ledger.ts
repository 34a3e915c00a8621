// Month holds and the ledger of a PostgreSQL store, inside the caller's transaction: a hold under
// the month's row lock, settle once, and the holds nobody will settle recorded as possibly charged.
// Each decision is src/store/rules.ts's; this file says it in statements.
import { entryToRecord, holdFits, lostEntry, recordable } from '../rules.js';
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
 * A hold of `owner` under `hold.cap` (rules.ts, holdFits): the month's row locked first, so that
 * two hosts never both take the last room; its id, or null when there is no room.
 */
export async function holdIn(db: Runner, owner: string, hold: HoldRequest): Promise<number | null> {
  if (hold.cap !== undefined) {
    await named(db, 'monthLock', [hold.keyId, hold.window.from]);
    await orphan(db, 'orphanKey', [owner, hold.keyId]);
    const values = [hold.keyId, hold.window.from, hold.window.to];
    const usage = (await named<{ spent: number; held: number }>(db, 'usage', values)).rows[0];
    if (!holdFits(usage, hold.amount, hold.cap)) return null;
  }
  const values = [hold.baseUrl, hold.keyId, owner, hold.amount, hold.command, hold.at];
  return (await named<{ id: number }>(db, 'holdPut', values)).rows[0].id;
}

/** Settle once (rules.ts, entryToRecord): the hold dropped by id and owner, then the entry. */
export async function settleIn(db: Runner, owner: string, settlement: Settlement): Promise<void> {
  const { reservation } = settlement;
  const ours = reservation ? (await named(db, 'holdSettle', [reservation.id, owner])).rowCount === 1 : true;
  const entry = entryToRecord(settlement, ours);
  if (entry) await putLedger(db, entry);
}

async function putLedger(db: Runner, entry: LedgerEntry): Promise<void> {
  const e = recordable(entry);
  if (e) await named(db, 'ledgerPut', [e.at, e.baseUrl, e.keyId, e.command, e.credits, e.outcome]);
}

/** Takes out the holds a statement names, and records each as possibly charged. */
export async function orphan(
  db: Runner,
  statement: 'orphanKey' | 'orphanAll' | 'orphanMine',
  values: unknown[],
): Promise<void> {
  for (const row of (await named<HeldRow>(db, statement, values)).rows) await putLedger(db, entryOf(row));
}

/**
 * The holds of owners that are gone become possibly-charged entries, and their claims are dropped:
 * gone by the same test as a takeover (rules.ts, ownerAlive).
 */
export async function dropLapsed(db: Runner, owner: string): Promise<void> {
  await orphan(db, 'orphanAll', [owner]);
  await named(db, 'lapsedClaims', [owner]);
}
