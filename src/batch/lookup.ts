// One result per domain for a batch: reuse before request, and a request only when the budget,
// the scheduler and the run's state all allow it.
//
// Reuse, in order: a lookup of this run still in flight (its promise), a recent result, the store
// (a fresh answer bought by this run, an earlier one, or another run meanwhile), a failure of this
// run (a small map). Only then a request: a scheduler slot, a claim on the domain in the store
// (another run buying it: wait for its answer), a budget reservation taken synchronously right
// before sending, the call, the answer stored, and the reservation settled with the actual charge. An attempt that may have been charged
// without an answer (src/http/outcome.ts) keeps its reservation, and its retry reserves again.
import {
  type DomainLookupOptions,
  domainLookup,
  type EnrichQuery,
  type EnrichResponse,
} from '../api/domains.js';
import { mayHaveBeenCharged } from '../http/outcome.js';
import { THROTTLE_STATUSES } from '../http/retry.js';
import { isProblem, Problem, SETUP_CODES } from '../problem.js';
import { type RunStore, rowOfStored } from '../store/run-store.js';
import type { Client } from '../types.js';
import type { Budget, Reservation } from './budget.js';
import type { RowResult } from './output.js';
import type { Scheduler, Slot } from './scheduler.js';

/** Why a run stopped sending requests while it still writes every row. */
export type StopReason =
  | 'budget_exhausted'
  | 'insufficient_credits'
  | 'max_credits_exceeded'
  | 'too_many_failures'
  | 'retry_after_too_long'
  | 'interrupted';

export interface LookupOptions {
  client: Client;
  query: EnrichQuery;
  /** Credits one lookup may cost at most (sum of the selected products' units). */
  worstCase: number;
  /** The fields to keep; undefined keeps every field returned, `domain` first (src/batch/answer-columns.ts). */
  resultFields: readonly string[] | undefined;
  budget: Budget;
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
  onAbort?: () => void;
  /** Also called before each retry (the run passes the catalog-refresh hook of src/api/catalogs.ts). */
  onRetry?: NonNullable<DomainLookupOptions['onRetry']>;
}

export const DEFAULT_MAX_CONSECUTIVE_FAILURES = 25;
/** Failures of this run kept for duplicate rows; past it a duplicate of a failed domain is asked again (free). */
const MAX_REMEMBERED_FAILURES = 50_000;
/** How often a run waiting for another run's answer to a domain looks again. */
const CLAIM_POLL_MS = 100;
/**
 * Recent results kept in memory: duplicates are often near each other, and each one answered
 * from here spares a read of the store. Bounded, so memory stays flat.
 */

const RECENT_RESULTS = 4096;

/** Codes for which every other row would fail the same way: the run aborts at once. */
const ABORT_CODES = new Set([
  'invalid_api_key',
  'api_key_restricted',
  'upgrade_required',
  'invalid_product',
  'invalid_field',
  'field_not_in_product',
  'product_without_visible_fields',
  'field_not_available_for_capability',
  'config_error',
  'insecure_http',
  // An untrusted certificate, a proxy that wants credentials or is down, a server without
  // HTTP/1.1: the same for every row.
  ...SETUP_CODES,
]);
// A Retry-After longer than the client sleeps holds for every row: the rest of the batch would only
// run into the same limit (the run says when to come back).
const STOP_CODES = new Set<StopReason>([
  'insufficient_credits',
  'max_credits_exceeded',
  'retry_after_too_long',
]);

const STOP_DETAIL: Record<StopReason, string> = {
  budget_exhausted: 'not requested: the --budget of this run was reached',
  insufficient_credits: 'not requested: the balance ran out during this run',
  max_credits_exceeded: 'not requested: the service refused the --max-credits of this run',
  too_many_failures: 'not requested: the run stopped after too many consecutive failures',
  retry_after_too_long: 'not requested: the service asked to wait longer than company-data waits',
  interrupted: 'not requested: the run was interrupted',
};

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
  private settleWaiters: Array<() => void> = [];
  private readonly lookup: ReturnType<typeof domainLookup>;
  private readonly retryHook: NonNullable<DomainLookupOptions['onRetry']>;
  stopReason: StopReason | undefined;
  /** Set when the run must abort (exit 2 or 3): the problem to report. */
  fatal: Problem | undefined;
  requests = 0;
  balance: number | undefined;
  /** When the service said to come back (epoch ms), for a stop on `retry_after_too_long`. */
  retryAt: number | undefined;

  constructor(private readonly options: LookupOptions) {
    const { scheduler } = options;
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
      onRetry: this.retryHook,
      pacesRefusals: () => scheduler.pacesRefusals(),
    };
    this.lookup = domainLookup({ client: options.client }, options.query, callOptions);
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
    if (stored) return this.fromStore(domain, stored);
    return this.unknown(domain);
  }

  private fromStore(domain: string, stored: NonNullable<ReturnType<RunStore['find']>>): RowResult {
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
    if (this.options.onStoreFailure) this.options.onStoreFailure(problem);
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
    this.wakeSettleWaiters();
  }

  /** The first problem wins; later ones change nothing (everything is already stopped). */
  private abort(problem: Problem): void {
    if (this.fatal) return;
    this.fatal = problem;
    this.options.scheduler.stop();
    this.wakeSettleWaiters();
    this.options.onAbort?.();
  }

  private wakeSettleWaiters(): void {
    const waiters = this.settleWaiters;
    this.settleWaiters = [];
    for (const wake of waiters) wake();
  }

  private stoppedResult(): RowResult {
    if (this.fatal) return errorResult(this.fatal.code, 'not requested: the run was aborted');
    const reason = this.stopReason ?? 'interrupted';
    return errorResult(reason, STOP_DETAIL[reason]);
  }

  /** A reservation, waiting for in-flight answers to free credits when that may help. */
  private reserve(): Reservation | null | Promise<Reservation | null> {
    // Most rows get one at once: no promise for them.
    if (this.stopReason || this.fatal) return null;
    return this.options.budget.tryReserve(this.options.worstCase) ?? this.reserveLater();
  }

  private async reserveLater(): Promise<Reservation | null> {
    const { budget, worstCase } = this.options;
    for (;;) {
      if (this.stopReason || this.fatal) return null;
      // Synchronous from the check to the reservation: no other worker can slip in between.
      const reservation = budget.tryReserve(worstCase);
      if (reservation) return reservation;
      if (budget.isExhaustedFor(worstCase) || budget.reserved === 0) {
        this.stop('budget_exhausted');
        return null;
      }
      await new Promise<void>((resolve) => this.settleWaiters.push(resolve));
    }
  }

  private async request(domain: string): Promise<RowResult> {
    try {
      const { scheduler, budget, worstCase } = this.options;
      let slot: Slot;
      // A slot, then the domain: ours to buy, or answered meanwhile, or another run's to buy (its
      // answer is waited for without holding a slot).
      for (;;) {
        const acquired = scheduler.tryAcquire() ?? (await scheduler.acquire());
        if (!acquired) return this.stoppedResult();
        slot = acquired;
        let claim: ReturnType<RunStore['claim']>;
        try {
          claim = this.options.store.claim(domain);
        } catch (error) {
          scheduler.release(slot, 'success');
          this.storeFailed(error);
          return this.stoppedResult();
        }
        if (claim.kind === 'claimed') break;
        scheduler.release(slot, 'success');
        if (claim.kind === 'answered') return this.fromStore(domain, claim.answer);
        await new Promise<void>((resolve) => setTimeout(resolve, CLAIM_POLL_MS));
        if (this.stopReason || this.fatal) return this.stoppedResult();
      }
      // The turn in --rate: after the slot and the claim, before the reservation and the send (a
      // domain another run answers takes no turn).
      const paced = scheduler.pace();
      if (paced) await paced;
      const reservation = this.reserve() ?? null;
      const reserved = reservation instanceof Promise ? await reservation : reservation;
      if (!reserved) {
        this.releaseClaim(domain);
        scheduler.release(slot, 'success');
        return this.stoppedResult();
      }
      this.requests++;
      const held = { reservation: reserved };
      let response: EnrichResponse;
      try {
        response = await this.lookup(domain, (problem, attempt, delayMs) =>
          this.beforeRetry(held, problem, attempt, delayMs),
        );
      } catch (error) {
        // Errors answered are never charged (spec, charging rule 4); an answer that never came may be.
        if (mayHaveBeenCharged(asProblem(error))) budget.settleUnknown(held.reservation);
        else budget.settle(held.reservation, 0);
        this.wakeSettleWaiters();
        const balance = this.options.client.lastCredits?.remaining;
        if (typeof balance === 'number') this.balance = balance;
        // Failures are never stored: the next run (or a run waiting for this domain) asks again.
        this.releaseClaim(domain);
        return this.failed(domain, error, slot);
      }
      const { result, credits } = response;
      // A response without a charge is assumed to have cost the worst case: the budget must hold.
      const charged = result.charged ?? credits.charged ?? worstCase;
      budget.settle(held.reservation, charged);
      if (this.settleWaiters.length > 0) this.wakeSettleWaiters();
      if (typeof credits.remaining === 'number') this.balance = credits.remaining;
      const row: RowResult = {
        found: result.found,
        record: result.found ? this.recordOf(domain, result.record) : null,
        credits_charged: charged,
        bought_at: null,
        error_code: null,
        error_detail: null,
      };
      try {
        // Committed before the slot is released: once the run sees nothing in flight, every
        // answer is in the store.
        this.options.store.save(domain, { found: row.found === true, record: row.record, credits: charged });
      } catch (error) {
        this.unkept++;
        scheduler.release(slot, 'success');
        this.storeFailed(error);
        return row;
      }
      scheduler.release(slot, 'success');
      this.remember(domain, row);
      return row;
    } finally {
      this.inFlight.delete(domain);
    }
  }

  /**
   * Before a retry: an attempt that may have been charged keeps its reservation, and the retry
   * needs one of its own. Without room the retry is not sent and the row gets the stop reason.
   */
  private async beforeRetry(
    held: { reservation: Reservation },
    problem: Problem,
    attempt: number,
    delayMs: number,
  ) {
    // A retry is a request: it takes its turn in --rate (before its backoff; docs/batch.md).
    await this.options.scheduler.pace();
    await this.retryHook(problem, attempt, delayMs);
    if (!mayHaveBeenCharged(problem)) return;
    this.options.budget.settleUnknown(held.reservation);
    this.wakeSettleWaiters();
    const next = this.reserve();
    const reservation = next instanceof Promise ? await next : next;
    if (reservation) {
      held.reservation = reservation;
      return;
    }
    const stopped = this.stoppedResult();
    const detail =
      stopped.error_code === 'budget_exhausted'
        ? 'not retried: the --budget of this run has no room left for another attempt (the last one may have been charged)'
        : stopped.error_detail!;
    throw new Problem({ code: stopped.error_code!, detail, source: 'client' });
  }

  /** Narrowed as it was read; else the whole record, with the requested domain as a narrowed one has it. */
  private recordOf(domain: string, record: Record<string, unknown>): Record<string, unknown> {
    return this.options.resultFields ? record : { domain, ...record };
  }

  private failed(domain: string, error: unknown, slot: Parameters<Scheduler['release']>[0]): RowResult {
    const { scheduler } = this.options;
    const problem = asProblem(error);
    const row = errorResult(problem.code, problem.detail || problem.title);
    if (ABORT_CODES.has(problem.code)) {
      scheduler.release(slot, 'failure');
      this.abort(problem);
      return row;
    }
    if (STOP_CODES.has(problem.code as StopReason)) {
      scheduler.release(slot, 'failure');
      if (problem.retryAfterSeconds !== undefined)
        this.retryAt = Math.max(this.retryAt ?? 0, Date.now() + problem.retryAfterSeconds * 1000);
      this.stop(problem.code as StopReason);
      return row;
    }
    // Only "the service is not answering" counts towards stopping the run; a 4xx about this one
    // domain says the service is up. A redirect is this row's error (one domain may be moved), but
    // a base URL that redirects every call must not fail the whole file row by row.
    const unavailable =
      problem.exitCode === 5 || problem.code === 'internal_bug' || problem.code === 'redirect_refused';
    scheduler.release(slot, unavailable ? 'failure' : 'success');
    if (unavailable && scheduler.consecutiveFailures >= this.options.maxConsecutiveFailures) {
      this.stop('too_many_failures');
    }
    if (this.failures.size < MAX_REMEMBERED_FAILURES) this.failures.set(domain, row);
    return row;
  }

  private releaseClaim(domain: string): void {
    try {
      this.options.store.release(domain);
    } catch {
      // The claim's lease runs out on its own; a failed write shows on the next save.
    }
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
