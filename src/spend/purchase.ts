// The one purchase path. Every request that can charge (a domain lookup, a search or breakdown, a
// lookalike, `api` on those endpoints) goes through purchase():
//
//   reserve  the worst case against every cap in force (src/spend/purse.ts);
//   send     domain lookups carry max_credits = what was reserved, so the service itself refuses
//            (max_credits_exceeded, not charged) a price above what the client holds; on that
//            refusal the catalog is read again and the new worst case reserved once;
//   settle   with the charge the service reported, or, when the outcome is unknown (a timeout
//            after sending, a reset, a truncated answer, a gateway's 502 or 504), with the whole
//            hold as possibly charged; a retry of such an attempt reserves again;
//   record   every charge and every possibly-charged attempt in the ledger (the purse does it in
//            the same transaction as the settle, and, for a batch, as the answer's save).
import { mayHaveBeenCharged } from '../http/outcome.js';
import { isProblem, Problem } from '../problem.js';
import type { Settlement } from '../store/types.js';
import type { RequestOptions } from '../types.js';
import { type Reported, readCharge } from './charges.js';
import type { Repriced } from './pricing.js';
import { credits, type Hold, type Purse } from './purse.js';

export type OnRetry = NonNullable<RequestOptions['onRetry']>;

export interface PurchaseSpec<R> {
  purse: Purse;
  /** The most the request can cost, as the catalog (or the largest charge seen) says. */
  worstCase: number;
  /** A hold the caller took already (a batch takes it with its claim on the domain). */
  hold?: Hold;
  /** Sends the request; `maxCredits` is what is held (a domain lookup sends it as max_credits). */
  send(maxCredits: number, onRetry: OnRetry): Promise<R>;
  /**
   * What the answer reports of its cost (src/spend/charges.ts reads it the safe way: no figure is
   * the whole hold; a figure that cannot be right is possibly charged).
   */
  reported(response: R): Reported;
  /** The request carries its hold as max_credits (a domain lookup): a charge above it cannot be right. */
  backed?: boolean;
  /** The caller's own hook before a retry (pacing, a catalog being refreshed). */
  onRetry?: OnRetry;
  /**
   * On max_credits_exceeded: the worst case after reading the catalog again. It throws when the
   * answer cannot be bought (the price passed --max-credits, or the catalog still understates it).
   */
  reprice?(refused: Problem, heldAmount: number): Promise<Repriced>;
  /** The store write that belongs with the settle (the batch's save), in one transaction. */
  along?(response: R, charged: number, settlement: Settlement | undefined): Promise<void>;
  /** True once the caller stops: a reservation still waiting gives up. */
  stopped?(): boolean;
  /**
   * The operation's stop (Ctrl-C, an MCP client's cancel, a closed stdin): once it fires no
   * purchase starts and no retry is sent; a request already sent is left to settle and be recorded.
   */
  signal?: AbortSignal;
}

export interface Purchase<R> {
  response: R;
  /** What counts against the caps: the charge read, or what is kept as possibly charged. */
  charged: number;
  /**
   * The answer's charge could not be read as a whole number within the hold: `charged` is kept as
   * possibly charged. `aboveHold`: a run of many requests stops (chargeAboveHold).
   */
  unreadable?: { why: string; aboveHold: boolean };
  /** The settle (with `along`) failed in the store: the answer was bought but not kept. */
  storeError?: unknown;
}

/** Why a retry was not sent: the caps have no room for another attempt after one that may have been charged. */
const NOT_RETRIED = ' (not retried: the last attempt may have been charged)';

/** The problem of a purchase not started (or not retried) because its operation was stopped. */
export function stoppedProblem(
  detail = 'stopped before this request was sent; nothing was charged for it',
): Problem {
  return new Problem({ code: 'interrupted', title: 'Stopped', detail, source: 'client' });
}

export async function purchase<R>(spec: PurchaseSpec<R>): Promise<Purchase<R>> {
  const { purse, signal } = spec;
  const stopped = () => signal?.aborted === true || spec.stopped?.() === true;
  if (signal?.aborted) {
    if (spec.hold) await purse.settle(spec.hold, 0);
    throw stoppedProblem();
  }
  // A stop while this purchase waits for room ends the wait.
  const wake = () => purse.wake();
  signal?.addEventListener('abort', wake, { once: true });
  try {
    return await purchaseHeld(spec, spec.worstCase, stopped);
  } finally {
    signal?.removeEventListener('abort', wake);
  }
}

async function purchaseHeld<R>(
  spec: PurchaseSpec<R>,
  worstCase: number,
  stopped: () => boolean,
): Promise<Purchase<R>> {
  const { purse, signal } = spec;
  let amount = worstCase;
  let first: Hold | null = spec.hold ?? (await purse.reserve(amount, stopped));
  let repriced: Repriced | undefined;
  for (;;) {
    if (!first) throw signal?.aborted ? stoppedProblem() : purse.refusal(amount, repriced?.change);
    const held = { hold: first };
    let response: R;
    try {
      response = await spec.send(held.hold.amount, async (problem, attempt, delayMs) => {
        // Stopped: the attempt that failed is the last; its hold settles as the failure says.
        if (signal?.aborted) throw problem;
        await spec.onRetry?.(problem, attempt, delayMs);
        if (!mayHaveBeenCharged(problem)) return;
        await purse.settleUnknown(held.hold);
        const again = await purse.reserve(amount, stopped);
        if (!again && signal?.aborted) throw problem;
        if (!again) throw purse.refusal(amount, NOT_RETRIED);
        held.hold = again;
      });
    } catch (error) {
      if (!held.hold.settled) {
        if (isProblem(error) && mayHaveBeenCharged(error)) await purse.settleUnknown(held.hold);
        else await purse.settle(held.hold, 0);
      }
      if (isProblem(error) && error.code === 'max_credits_exceeded' && spec.reprice && !repriced) {
        repriced = await spec.reprice(error, held.hold.amount);
        amount = repriced.worstCase;
        first = await purse.reserve(amount, stopped);
        continue;
      }
      throw error;
    }
    const reported = spec.reported(response);
    const reading = readCharge(reported, held.hold.amount, spec.backed);
    purse.observeBalance(reported.remaining, reading.credits);
    const charged = reading.credits;
    const along = spec.along;
    const save = along && ((settlement: Settlement | undefined) => along(response, charged, settlement));
    const bought: Purchase<R> = { response, charged };
    try {
      if (reading.kind === 'charged') {
        if (reading.note) purse.note(reading.note);
        await purse.settle(held.hold, charged, save);
      } else {
        bought.unreadable = { why: reading.why, aboveHold: reading.aboveHold };
        purse.note(
          `the charge cannot be read (${reading.why}): ${credits(charged)} kept as possibly charged`,
        );
        await purse.settleUnknown(held.hold, charged, save);
      }
    } catch (storeError) {
      return { ...bought, storeError };
    }
    return bought;
  }
}
