// One result per domain for a batch: reuse before request, and a request only when the caps, the
// scheduler and the run's state all allow it.
//
// Reuse, in order: a lookup of this run still in flight (its promise), a recent result, the store
// (a fresh answer bought by this run, an earlier one, or another run meanwhile), a failure of this
// run (a small map). Only then a purchase (src/spend/purchase.ts): a scheduler slot; the domain
// acquired in one store transaction (a fresh answer, another run buying it: wait for its answer,
// or a claim of ours together with the hold of its worst case); the turn under --rate; the call
// with max_credits; the answer saved, the charge settled and recorded in one more transaction.
// Which failures stop or abort the run is src/spend/stops.ts's to say.

import type { DomainLookupOptions, EnrichQuery, EnrichResponse } from '../api/domains.js';
import { unreadableProblem } from '../api/unreadable.js';
import { THROTTLE_STATUSES } from '../http/retry.js';
import { isProblem, Problem } from '../problem.js';
import { domainBuyer } from '../spend/buy.js';
import type { Repriced } from '../spend/pricing.js';
import type { Purchase } from '../spend/purchase.js';
import { type Hold, isStoreProblem, type Purse } from '../spend/purse.js';
import { isUnavailable, type StopReason, stopReasonOf, verdictOf } from '../spend/stops.js';
import type { StoredAnswer } from '../store/types.js';
import type { Client } from '../types.js';
import type { RowResult } from './output.js';
import { type RunStore, rowOfStored } from './run-store.js';
import { createScheduler, type Scheduler, type Slot } from './scheduler.js';

export type { StopReason } from '../spend/stops.js';

export interface LookupOptions {
  client: Client;
  query: EnrichQuery;
  /** Credits one lookup may cost at most (sum of the selected products' units). */
  worstCase: number;
  /** The fields to keep; undefined keeps every field returned, `domain` first (src/batch/answer-columns.ts). */
  resultFields: readonly string[] | undefined;
  purse: Purse;
  scheduler: Scheduler;
  store: RunStore;
  /** A write to the store failed (a full disk): the run stops buying (src/batch/unwritable.ts). */
  onStoreFailure?: (problem: Problem) => void;
  /** Failed requests in a row that stop the run (too_many_failures). */
  maxConsecutiveFailures: number;
  /** Aborts requests still in flight when a drain takes too long, or when the run must abort. */
  signal?: AbortSignal;
  /**
   * Called once when the run must abort (`fatal` is set): the run then aborts `signal`, so that
   * no lookup still in flight holds the run up until its own timeout.
   */
  onAbort?: (problem: Problem) => void;
  /** Also called before each retry (the run passes the catalog-refresh hook of src/api/catalogs.ts). */
  onRetry?: NonNullable<DomainLookupOptions['onRetry']>;
  /** On max_credits_exceeded: the worst case after reading the catalog again (src/spend/pricing.ts). */
  reprice?: (refused: Problem, held: number) => Promise<Repriced>;
  /**
   * A found answer whose layout did not yield the fields asked for: the problem the run aborts with
   * (src/api/unreadable.ts, which also keeps the answer in a file). Without it, a plain one.
   */
  onUnreadable?: (domain: string, result: EnrichResponse['result']) => Problem;
  /** Fields the catalog types as whole numbers (src/api/catalog-views.ts `integerFields`). */
  integers?: ReadonlySet<string>;
}

export const DEFAULT_MAX_CONSECUTIVE_FAILURES = 25;
/** Failures of this run kept for duplicate rows; past it a duplicate of a failed domain is asked again (free). */
const MAX_REMEMBERED_FAILURES = 50_000;
/**
 * A run waiting for another run's answer to a domain looks again after 25 ms, then twice as long
 * each time up to a second: an answer that comes quickly is seen quickly, and one that takes long
 * (a slow service, a host that stalled) costs a look a second, not ten (docs/batch.md).
 */
const CLAIM_WAIT_FIRST_MS = 25;
const CLAIM_WAIT_MAX_MS = 1000;
/**
 * Recent results kept in memory: duplicates are often near each other, and each one answered
 * from here spares a read of the store. Bounded, so memory stays flat.
 */
const RECENT_RESULTS = 4096;

const STOP_DETAIL: Record<StopReason, string> = {
  budget_exhausted: 'not requested: the --budget of this run was reached',
  insufficient_credits: 'not requested: the balance ran out during this run',
  max_credits_exceeded: 'not requested: the service refused the --max-credits of this run',
  too_many_failures: 'not requested: the run stopped after too many consecutive failures',
  retry_after_too_long: 'not requested: the service asked to wait longer than company-data waits',
  charge_above_hold: 'not requested: an answer reported a charge above what was held for it',
  interrupted: 'not requested: the run was interrupted',
};

/** What one store transaction says of a domain: answered, another run's to buy, or ours (with its hold, when the caps had room). */
type Acquired =
  | { kind: 'answered'; answer: StoredAnswer }
  | { kind: 'busy' }
  | { kind: 'claimed'; hold: Hold | null };

/** The domain as a lookup takes it before its request: answered, another run's, or ours with its slot and hold. */
type Taken = Exclude<Acquired, { kind: 'claimed' }> | { kind: 'ours'; slot: Slot; hold: Hold };

function asProblem(error: unknown): Problem {
  if (isProblem(error)) return error;
  return new Problem({
    code: 'internal_bug',
    detail: error instanceof Error ? error.message : String(error),
    source: 'client',
    cause: error,
  });
}

export function errorResult(code: string, detail: string): RowResult {
  return {
    found: null,
    record: null,
    credits_charged: 0,
    bought_at: null,
    error_code: code,
    error_detail: detail,
  };
}

export class Lookups {
  private readonly inFlight = new Map<string, Promise<RowResult>>();
  private readonly failures = new Map<string, RowResult>();
  private readonly recent = new Map<string, RowResult>();
  /** The keys of `recent` in insertion order, as a ring: the oldest is evicted without an iterator. */
  private readonly recentKeys: string[] = [];
  private recentNext = 0;
  private readonly buy: ReturnType<typeof domainBuyer>;
  private readonly retryHook: NonNullable<DomainLookupOptions['onRetry']>;
  private readonly reprice: LookupOptions['reprice'];
  stopReason: StopReason | undefined;
  /** Set when the run must abort (exit 2 or 3): the problem to report. */
  fatal: Problem | undefined;
  requests = 0;
  balance: number | undefined;
  /** What one lookup may cost: the catalog's worst case, raised when the service says it costs more. */
  private worstCase: number;
  /** When the service said to come back (epoch ms), for a stop on `retry_after_too_long`. */
  retryAt: number | undefined;

  /** Claims taken before a slot, one per slot at most (a store whose claims are round trips). */
  private readonly ahead: Scheduler | undefined;

  constructor(private readonly options: LookupOptions) {
    const { scheduler } = options;
    this.ahead = options.store.claimsAhead ? createScheduler({ concurrency: scheduler.limit }) : undefined;
    this.worstCase = options.worstCase;
    this.retryHook = async (problem, attempt, delayMs) => {
      if (problem.code === 'rate_limited' || problem.status === 429) {
        scheduler.rateLimited(problem.retryAfterSeconds);
      } else if (problem.status !== undefined && THROTTLE_STATUSES.has(problem.status)) {
        // The rate is cut (src/batch/scheduler.ts); with Retry-After every worker pauses for it.
        scheduler.overloaded(problem.retryAfterSeconds, problem.status);
        await scheduler.resumed();
      }
      return options.onRetry?.(problem, attempt, delayMs);
    };
    const callOptions: DomainLookupOptions = {
      spinner: false,
      signal: options.signal,
      // The record is narrowed as it is read, so the store keeps what the output shows.
      fields: options.resultFields,
      integers: options.integers,
      onRetry: this.retryHook,
      pacesRefusals: () => scheduler.pacesRefusals(),
    };
    this.buy = domainBuyer({ client: options.client }, options.query, callOptions);
    if (options.reprice) {
      // Answers in flight refused at once ask once: one read of the catalog serves them all.
      const reprice = options.reprice;
      let asking: { held: number; price: Promise<Repriced> } | undefined;
      this.reprice = (refused, held) => {
        if (!asking || asking.held !== held) asking = { held, price: reprice(refused, held) };
        return asking.price.then((price) => {
          this.worstCase = Math.max(this.worstCase, price.worstCase);
          return price;
        });
      };
    }
  }

  /** Answers reused from the store (this run's before an interruption, an earlier run's, another's). */
  reused = 0;
  /** Answers bought that the store refused to keep (a full disk): a re-run buys them again. */
  unkept = 0;

  /**
   * The result for a domain, reused where possible. Never rejects for a row's own failure. A
   * value when it is known at once (most duplicates), else a promise: a batch asks for hundreds
   * of thousands, and each promise is garbage to collect.
   */
  resultFor(domain: string): RowResult | Promise<RowResult> {
    const pending = this.inFlight.get(domain);
    if (pending) return pending;
    const cached = this.recent.get(domain);
    if (cached) return cached;
    let stored: ReturnType<RunStore['find']>;
    try {
      stored = this.options.store.find(domain);
    } catch (error) {
      this.storeFailed(error);
      return this.stoppedResult();
    }
    if (stored instanceof Promise) {
      // A back end that answers later (a database): the entry is in the map before anything
      // awaits, so a duplicate met meanwhile waits for this lookup instead of starting its own.
      const lookup: Promise<RowResult> = stored
        .then(
          (answer) => (answer ? this.fromStore(domain, answer) : this.unknown(domain)),
          (error) => {
            this.storeFailed(error);
            return this.stoppedResult();
          },
        )
        .finally(() => {
          if (this.inFlight.get(domain) === lookup) this.inFlight.delete(domain);
        });
      this.inFlight.set(domain, lookup);
      return lookup;
    }
    if (stored) return this.fromStore(domain, stored);
    return this.unknown(domain);
  }

  private fromStore(domain: string, stored: StoredAnswer): RowResult {
    const row = rowOfStored(stored, this.options.store.runId);
    this.reused++;
    this.remember(domain, row);
    return row;
  }

  /**
   * The store refused a read or a write: without it a re-run would pay again, so stop paying. The
   * run stops sending as for an interrupt (onStoreFailure), and the answers in flight still come
   * in and are offered to the store, which may keep them or count them as not kept.
   */
  private storeFailed(error: unknown): void {
    const problem = asProblem(error);
    // A store that cannot be read (damaged, not a store) is no full disk: the run aborts with it
    // (exit 2, the remedy named), rather than asking for space night after night.
    if (problem.exitCode !== 8) this.abort(problem);
    else if (this.options.onStoreFailure) this.options.onStoreFailure(problem);
    else this.abort(problem);
  }

  /** Neither in flight nor stored: a failure of this run, the stop reason, or a request. */
  private unknown(domain: string): RowResult | Promise<RowResult> {
    const failed = this.failures.get(domain);
    if (failed) return failed;
    if (this.stopReason) return errorResult(this.stopReason, STOP_DETAIL[this.stopReason]);
    if (this.fatal) return errorResult(this.fatal.code, 'not requested: the run was aborted');
    // request() always passes an await before it ends (stopReason and fatal are clear here), so
    // the entry is in the map before request() removes it.
    const lookup = this.request(domain);
    // The entry stays until the store holds the result, so a duplicate never asks twice.
    this.inFlight.set(domain, lookup);
    return lookup;
  }

  /** Stops new requests; rows not yet requested get `reason`. The first reason wins. */
  stop(reason: StopReason): void {
    this.stopReason ??= reason;
    this.options.scheduler.stop();
    this.ahead?.stop();
    this.options.purse.wake();
  }

  /** The first problem wins; later ones change nothing (everything is already stopped). */
  private abort(problem: Problem): void {
    if (this.fatal) return;
    this.fatal = problem;
    this.options.scheduler.stop();
    this.ahead?.stop();
    this.options.purse.wake();
    this.options.onAbort?.(problem);
  }

  private readonly stopped = (): boolean => this.stopReason !== undefined || this.fatal !== undefined;

  private stoppedResult(): RowResult {
    if (this.fatal) return errorResult(this.fatal.code, 'not requested: the run was aborted');
    const reason = this.stopReason ?? 'interrupted';
    return errorResult(reason, STOP_DETAIL[reason]);
  }

  /**
   * One transaction: a fresh answer, another live run's claim, or a claim of ours with the hold
   * of the worst case (null when the caps have no room at this moment).
   */
  private async acquire(domain: string): Promise<Acquired> {
    const { store, purse } = this.options;
    if (this.stopped()) {
      const claim = await store.claim(domain);
      return claim.kind === 'claimed' ? { kind: 'claimed', hold: null } : claim;
    }
    const { claim, hold } = await purse.claimWith(this.worstCase, (request) => store.claim(domain, request));
    return claim.kind === 'claimed' ? { kind: 'claimed', hold } : claim;
  }

  /**
   * A slot, then the domain acquired in the store (SQLite in this process: a claim costs no round
   * trip). A claim of ours comes with its slot and its hold; undefined when the run stopped (or
   * the store failed, or no room came: the run then stops too).
   */
  private async slotThenClaim(domain: string): Promise<Taken | undefined> {
    const { scheduler } = this.options;
    const slot = scheduler.tryAcquire() ?? (await scheduler.acquire());
    if (!slot) return undefined;
    const got = await this.acquireOrFail(domain);
    const hold = got?.kind === 'claimed' ? await this.roomFor(domain, got.hold) : undefined;
    if (!hold) scheduler.release(slot, 'success');
    if (hold) return { kind: 'ours', slot, hold };
    return got?.kind === 'claimed' ? undefined : got;
  }

  /**
   * The domain acquired first, and the room for it, then a slot (a database server: the claim's
   * round trip overlaps the requests in flight rather than coming between one request's answer
   * and the next one's send). One claim per slot at most is taken ahead (`ahead`), so at most
   * `--concurrency` holds wait for a slot; a lookup waiting for room holds no slot, so the
   * requests that will free it can be sent. A run that stops meanwhile gives the claim and its
   * hold back: nothing was sent.
   */
  private async claimThenSlot(domain: string, ahead: Scheduler): Promise<Taken | undefined> {
    const { scheduler, purse } = this.options;
    const turn = ahead.tryAcquire() ?? (await ahead.acquire());
    if (!turn) return undefined;
    const got = await this.acquireOrFail(domain);
    const hold = got?.kind === 'claimed' ? await this.roomFor(domain, got.hold) : undefined;
    const slot = hold && (scheduler.tryAcquire() ?? (await scheduler.acquire()));
    ahead.release(turn, 'success');
    if (hold && slot) return { kind: 'ours', slot, hold };
    if (hold) {
      await purse.settle(hold, 0);
      this.releaseClaim(domain);
    }
    return got?.kind === 'claimed' ? undefined : got;
  }

  /** Stops the run (as for a failure of the store) once the store's claims are no longer ours. */
  private checkOwned(): void {
    try {
      this.options.store.assertOwned();
    } catch (error) {
      this.storeFailed(error);
    }
  }

  /** acquire(), with a failure of the store handled (the run stops buying): then undefined. */
  private async acquireOrFail(domain: string): Promise<Acquired | undefined> {
    try {
      return await this.acquire(domain);
    } catch (error) {
      this.storeFailed(error);
      return undefined;
    }
  }

  /**
   * The hold for a domain claimed: the one taken with the claim, else one once there is room
   * (answers in flight may free some: most cost less than their worst case). Without room the
   * run stops for its budget and the claim is given back: undefined.
   */
  private async roomFor(domain: string, held: Hold | null): Promise<Hold | undefined> {
    if (held) return held;
    let hold: Hold | null = null;
    try {
      hold = await this.options.purse.reserve(this.worstCase, this.stopped);
    } catch (error) {
      this.storeFailed(error);
    }
    if (hold) return hold;
    if (!this.stopped()) this.stop('budget_exhausted');
    this.releaseClaim(domain);
    return undefined;
  }

  private async request(domain: string): Promise<RowResult> {
    try {
      const { scheduler, purse } = this.options;
      let slot: Slot;
      let hold: Hold;
      // A slot and the domain: ours to buy, or answered meanwhile, or another run's to buy (its
      // answer is waited for without holding a slot).
      for (let waits = 0; ; waits++) {
        const taken = this.ahead
          ? await this.claimThenSlot(domain, this.ahead)
          : await this.slotThenClaim(domain);
        if (!taken) return this.stoppedResult();
        if (taken.kind === 'ours') {
          ({ slot, hold } = taken);
          break;
        }
        if (taken.kind === 'answered') return this.fromStore(domain, taken.answer);
        const wait = Math.min(CLAIM_WAIT_MAX_MS, CLAIM_WAIT_FIRST_MS * 2 ** waits);
        await new Promise<void>((resolve) => setTimeout(resolve, wait));
        if (this.stopped()) return this.stoppedResult();
      }
      // The turn in --rate: after the slot and the claim, before the send (a domain another run
      // answers takes no turn).
      const paced = scheduler.pace();
      if (paced) await paced;
      // A claim taken ahead may be older than the store's last failure: one no longer ours is not
      // bought (its answer could not be kept, and another host may be buying it).
      if (this.ahead && !this.stopped()) this.checkOwned();
      if (this.stopped()) {
        // Stopped while waiting for the turn: nothing was sent.
        await purse.settle(hold, 0);
        this.releaseClaim(domain);
        scheduler.release(slot, 'success');
        return this.stoppedResult();
      }
      this.requests++;
      // For --report: the requests this domain took, and how long (src/batch/report.ts).
      const sentAt = performance.now();
      let attempts = 1;
      const timed = (row: RowResult): RowResult =>
        Object.assign(row, { attempts, ms: Math.round(performance.now() - sentAt) });
      let bought: Purchase<EnrichResponse>;
      let record: Record<string, unknown> | null = null;
      /** The store's write of the answer and its settlement, once the answer is in hand. */
      let saving: Promise<void> | undefined;
      try {
        bought = await this.buy(domain, {
          purse,
          worstCase: this.worstCase,
          hold,
          onRetry: (problem, attempt, delayMs) => {
            attempts++;
            return this.beforeRetry(problem, attempt, delayMs);
          },
          reprice: this.reprice,
          // Written with the charge, in one transaction; the slot is given back while the store
          // writes (the next request need not wait for the commit), and this lookup ends once it
          // is committed: once the run has every row's result, every answer is in the store.
          along: ({ result }, charged, settlement) => {
            // An answer that could not be read is charged (in the ledger) but never kept: its
            // cells would be blank, and a re-run would reuse them.
            if (result.fieldsUnread) saving = this.options.store.settle(settlement);
            else {
              record = result.found ? this.recordOf(domain, result.record) : null;
              saving = this.options.store.save(
                domain,
                { found: result.found, record, credits: charged },
                settlement,
              );
            }
            // Its failure is read below, after the slot is given back.
            saving.catch(() => undefined);
            return Promise.resolve();
          },
          stopped: this.stopped,
        });
      } catch (error) {
        const balance = this.options.client.lastCredits?.remaining;
        if (typeof balance === 'number') this.balance = balance;
        // Failures are never stored: the next run (or a run waiting for this domain) asks again.
        this.releaseClaim(domain);
        return timed(this.failed(domain, error, slot));
      }
      const { response, charged } = bought;
      // A charge above the hold: the caps the run believed it held no longer hold.
      if (bought.unreadable?.aboveHold) this.stop('charge_above_hold');
      if (typeof response.credits.remaining === 'number') this.balance = response.credits.remaining;
      let unreadable: Problem | undefined;
      if (response.result.fieldsUnread) {
        // The first answer the run cannot read stops it before it buys more (exit 5).
        unreadable =
          this.options.onUnreadable?.(domain, response.result) ??
          unreadableProblem(domain, response.result, this.options.resultFields, undefined);
        this.releaseClaim(domain);
        this.abort(unreadable);
      }
      // Given back once the run knows whether to stop. In this process's store (SQLite) that is
      // before the answer is committed: the next request's claim commits with it or after it, so
      // the next request never goes before it. Where claims are taken ahead (a database server),
      // nothing orders them so: the slot is given back once the answer is committed, and a kill
      // then loses at most `--concurrency` answers, a stalled write stops the buying.
      if (!this.ahead) scheduler.release(slot, 'success');
      const storeError =
        bought.storeError ??
        (saving &&
          (await saving.then(
            () => undefined,
            (e: unknown) => e,
          )));
      if (this.ahead) scheduler.release(slot, 'success');
      if (unreadable)
        return timed({ ...errorResult(unreadable.code, unreadable.detail), credits_charged: charged });
      const row: RowResult = timed({
        found: response.result.found,
        record: response.result.found ? (record ?? this.recordOf(domain, response.result.record)) : null,
        credits_charged: charged,
        bought_at: null,
        error_code: null,
        error_detail: null,
      });
      if (storeError !== undefined) {
        this.unkept++;
        this.storeFailed(storeError);
        return row;
      }
      this.remember(domain, row);
      return row;
    } finally {
      this.inFlight.delete(domain);
    }
  }

  /** Before a retry: its turn in --rate (before its backoff; docs/batch.md), then the run's hooks. */
  private async beforeRetry(problem: Problem, attempt: number, delayMs: number): Promise<void> {
    await this.options.scheduler.pace();
    await this.retryHook(problem, attempt, delayMs);
  }

  /** Narrowed as it was read; else the whole record, with the requested domain as a narrowed one has it. */
  private recordOf(domain: string, record: Record<string, unknown>): Record<string, unknown> {
    return this.options.resultFields ? record : { domain, ...record };
  }

  private failed(domain: string, error: unknown, slot: Parameters<Scheduler['release']>[0]): RowResult {
    const { scheduler } = this.options;
    const problem = asProblem(error);
    if (isStoreProblem(problem)) {
      scheduler.release(slot, 'success');
      this.storeFailed(problem);
      return this.stoppedResult();
    }
    // A retry that found no room because the run stopped for another reason is that reason's row.
    if (problem.code === 'budget_exhausted' && this.stopped() && this.stopReason !== 'budget_exhausted') {
      scheduler.release(slot, 'success');
      return this.stoppedResult();
    }
    const row = errorResult(problem.code, problem.detail || problem.title);
    const verdict = verdictOf(problem);
    if (verdict === 'abort') {
      scheduler.release(slot, 'failure');
      this.abort(problem);
      return row;
    }
    if (verdict === 'stop') {
      scheduler.release(slot, 'failure');
      if (problem.retryAfterSeconds !== undefined)
        this.retryAt = Math.max(this.retryAt ?? 0, Date.now() + problem.retryAfterSeconds * 1000);
      this.stop(stopReasonOf(problem)!);
      return row;
    }
    // Only "the service is not answering" counts towards stopping the run.
    const unavailable = isUnavailable(problem);
    scheduler.release(slot, unavailable ? 'failure' : 'success');
    if (unavailable && scheduler.consecutiveFailures >= this.options.maxConsecutiveFailures) {
      this.stop('too_many_failures');
    }
    if (this.failures.size < MAX_REMEMBERED_FAILURES) this.failures.set(domain, row);
    return row;
  }

  private releaseClaim(domain: string): void {
    // A failed release is harmless: the claim's lease runs out on its own, and a failed write
    // shows on the next save.
    this.options.store.release(domain).catch(() => {});
  }

  private remember(domain: string, result: RowResult): void {
    if (this.recent.has(domain)) {
      this.recent.set(domain, result);
      return;
    }
    if (this.recentKeys.length < RECENT_RESULTS) this.recentKeys.push(domain);
    else {
      this.recent.delete(this.recentKeys[this.recentNext]);
      this.recentKeys[this.recentNext] = domain;
      this.recentNext = (this.recentNext + 1) % RECENT_RESULTS;
    }
    this.recent.set(domain, result);
  }
}
