// The values the store's tests write through its interface, on any back end: a scope, freshness
// that takes every answer, a month hold of 3 under a cap of 10 (sent in January 1970: the month
// [0, JAN_END)), an answer, a charge.
import type { HoldRequest, LedgerEntry, StoredAnswer } from '../../src/store/types.js';

export const scope = {
  baseUrl: 'b',
  keyId: 'k',
  products: undefined,
  include: undefined,
  maxCredits: undefined,
};
export const fresh = { foundSince: 0, notFoundSince: 0 };

/** The end of the month of `hold` (January 1970, UTC), and the month after. */
export const JAN_END = Date.UTC(1970, 1, 1);
export const FEB_END = Date.UTC(1970, 2, 1);

export const hold: HoldRequest = {
  baseUrl: 'https://api.example.com',
  keyId: 'k1',
  amount: 3,
  cap: 10,
  command: 'enrich',
  at: 1_000,
};

export function answer(boughtAt: number, found = true, run: number | null = null): StoredAnswer {
  return { found, record: found ? { domain: 'x', name: 'X' } : null, credits: found ? 1 : 0, boughtAt, run };
}

export function charge(credits: number, at = 1_000, command = 'enrich'): LedgerEntry {
  return { at, baseUrl: hold.baseUrl, keyId: hold.keyId, command, credits, outcome: 'charged' };
}
