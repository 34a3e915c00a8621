// Claims on domains, many in one round trip: the claim function of this release (sql.ts,
// CLAIM_FUNCTION), made in each session on its first claim, called with every domain asked for at
// one moment on one scope, freshness and purse (batches.ts groups them so), and its answer for one
// domain read back as the store's Claim.
import type pg from 'pg';
import { counterMonth } from '../rules.js';
import type { Claim, Freshness, HoldRequest } from '../types.js';
import { answerOf } from './ledger.js';
import { CLAIM_FUNCTION, named } from './sql.js';

/** What the function says of one domain. */
export interface ClaimRow {
  o_domain: string;
  o_state: 'answered' | 'busy' | 'claimed';
  o_found: boolean | null;
  o_record: Record<string, unknown> | null;
  o_credits: number | null;
  o_bought_at: number | null;
  o_run: number | null;
  o_hold: number | null;
}

export interface ClaimItem {
  domain: string;
  hold?: HoldRequest;
}

/**
 * The group of a claim: what one call of the function shares (the scope, the freshness, and what
 * the holds share: one purse's base URL, key, command and cap; each hold has its own amount and time).
 */
export function claimGroup(scope: number, f: Freshness, hold: HoldRequest | undefined): string {
  const holds = hold && [hold.baseUrl, hold.keyId, hold.command, hold.cap ?? null];
  return JSON.stringify([scope, f.foundSince, f.notFoundSince, f.run ?? null, holds]);
}

/** The sessions that have the claim function. */
const made = new WeakSet<pg.ClientBase>();

/** One call of the claim function for `items` of `group` (claimGroup), on `db`. */
export async function claimRows(
  db: pg.ClientBase,
  owner: string,
  group: string,
  items: ClaimItem[],
): Promise<ClaimRow[]> {
  if (!made.has(db)) {
    await db.query(CLAIM_FUNCTION);
    made.add(db);
  }
  const [scope, foundSince, notFoundSince, run] = JSON.parse(group) as [
    number,
    number,
    number,
    number | null,
  ];
  const first = items.find((item) => item.hold)?.hold;
  const { rows } = await named<ClaimRow>(db, 'claimBatch', [
    scope,
    items.map((item) => item.domain),
    owner,
    foundSince,
    notFoundSince,
    run,
    items.map((item) => item.hold !== undefined),
    first?.baseUrl ?? '',
    first?.keyId ?? '',
    items.map((item) => item.hold?.amount ?? 0),
    first?.command ?? '',
    items.map((item) => item.hold?.at ?? 0),
    items.map((item) => counterMonth(item.hold?.at ?? 0)),
    first?.cap ?? null,
  ]);
  return rows;
}

/**
 * The Claim a row says, before its hold is looked at: answered, busy, or claimed (the caller adds
 * the hold, or null when the month had no room).
 */
export function claimOf(row: ClaimRow): Claim {
  if (row.o_state === 'answered') {
    return {
      kind: 'answered',
      answer: answerOf({
        found: row.o_found!,
        record: row.o_record,
        credits: row.o_credits!,
        bought_at: row.o_bought_at!,
        run: row.o_run,
      }),
    };
  }
  return row.o_state === 'busy' ? { kind: 'busy' } : { kind: 'claimed' };
}
