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

/** One row of the statement `saves` (sql.ts): an answer (or none: a settlement alone) and its settlement. */
export interface SaveRow {
  scope: number | null;
  domain: string | null;
  found: boolean | null;
  record: Record<string, unknown> | null;
  credits: number | null;
  bought_at: number | null;
  run: number | null;
  hold_id: number | null;
  hold_month: number | null;
  e_at: number;
  e_base: string;
  e_key: string;
  e_command: string;
  /** 0: nothing to record (rules.ts, recordable). */
  e_credits: number;
  e_outcome: string;
  e_month: number;
}

/** A settlement (and the answer saved with it) as a row of `saves`: settle once is judged there. */
export function saveRow(
  settlement: Settlement | undefined,
  answer?: { scope: number; domain: string; answer: StoredAnswer },
): SaveRow {
  const { reservation, entry } = settlement ?? {};
  const e = recordable(entry);
  const a = answer?.answer;
  return {
    scope: answer?.scope ?? null,
    domain: answer?.domain ?? null,
    found: a?.found ?? null,
    record: a?.record ?? null,
    credits: a?.credits ?? null,
    bought_at: a?.boughtAt ?? null,
    run: a?.run ?? null,
    hold_id: reservation?.id ?? null,
    hold_month: reservation ? counterMonth(reservation.at) : null,
    e_at: e?.at ?? 0,
    e_base: e?.baseUrl ?? '',
    e_key: e?.keyId ?? '',
    e_command: e?.command ?? '',
    e_credits: e?.credits ?? 0,
    e_outcome: e?.outcome ?? 'charged',
    e_month: counterMonth(e?.at ?? 0),
  };
}

/** Saves and settlements, in one statement; rows of one answer twice go in statements one after another. */
export async function saveRows(db: Runner, owner: string, rows: SaveRow[]): Promise<void> {
  let rest = rows;
  while (rest.length > 0) {
    // ON CONFLICT may not touch one row twice in a statement: a domain met again waits for the next.
    const seen = new Set<string>();
    const now: SaveRow[] = [];
    const later: SaveRow[] = [];
    for (const row of rest) {
      const key = row.domain === null ? undefined : `${row.scope}\n${row.domain}`;
      if (key !== undefined && seen.has(key)) later.push(row);
      else {
        if (key !== undefined) seen.add(key);
        now.push(row);
      }
    }
    await named(db, 'saves', [owner, JSON.stringify(now)]);
    rest = later;
  }
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
