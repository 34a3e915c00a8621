// Pacing: at most `rate` requests per second, shared by every caller of one pacer.
//
// Two rules decide when a turn is granted (docs/batch.md, "Pacing"):
//
// - **GCRA** (a token bucket with a small burst): turns are due every 1000 / rate ms, and a turn
//   may be granted up to TOLERANCE_MS (50 ms) before it is due. A timer that fires late, or an
//   event loop that was busy, grants the turns it owes at once, up to that, so the rate is held
//   rather than lost: the old bucket of one lost every late millisecond for good (66-78 % of the
//   rate at 200-400/s, issue 31).
// - **The window**: never more than `ceil(rate)` grants in any window of WINDOW_MS (one second
//   plus a margin for the jitter between leaving and arriving), wherever the window starts. A
//   ring of the last grant times checks it exactly. It bounds what the burst may add, so a
//   service counting fixed one-second windows (the sandbox's `--rate-limit`), sliding ones or a
//   bucket of its own never sees more than the rate, even at a `--rate` equal to its limit.
//
// On top of the rate given (the ceiling) the rate adapts (AIMD): a refusal without Retry-After
// (a gateway's 503, a 429) cuts it multiplicatively, every success raises it additively, back up
// to the ceiling. A pacer without a rate starts pacing at the first refusal, from the rate it
// measured. `holdFor` stops every grant for a while (a Retry-After), and `observe` takes the
// service's `RateLimit-Policy` / `RateLimit` headers (src/http/rate-limit-headers.ts).
//
// `take()` returns undefined when a grant is available at once, so a caller pacing a million
// requests makes no promise for the ones that need not wait.

import type { RateLimits } from './http/rate-limit-headers.js';

export type { RateLimits };

export interface PacerOptions {
  /** A monotonic clock in ms (default performance.now). */
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
  /** The window the rate is held over, in ms (default WINDOW_MS). */
  windowMs?: number;
}

/**
 * Requests per second: a number (0 or undefined: no pacing), or a function asked once, at the
 * first take(), for a rate known only later (the account's limit): takes wait for its answer,
 * and a failed answer means no pacing.
 */
export type RateSource = number | undefined | (() => Promise<number | undefined>);

export interface Pacer {
  /** The rate in force: undefined when not pacing, or while a deferred rate is not known yet. */
  readonly rate: number | undefined;
  /** The highest rate: the one given, or the service's policy when lower; undefined without one. */
  readonly ceiling: number | undefined;
  /** Waiting callers. */
  readonly waiting: number;
  /** Turns granted so far. */
  readonly granted: number;
  /** Times a refusal cut the rate. */
  readonly cuts: number;
  /** The window the rate is held over, in ms: WINDOW_MS, wider after overran(). */
  readonly windowMs: number;
  /**
   * Undefined when the caller may send now; else a promise resolved when it may (or when the
   * pacer stops), rejected with the signal's reason when `signal` aborts first.
   */
  take(signal?: AbortSignal): Promise<void> | undefined;
  /** No grant for the next `ms` (a Retry-After, for example). */
  holdFor(ms: number): void;
  /**
   * A refusal without Retry-After (a gateway's 503, a 429): the rate is cut by CUT_FACTOR, once
   * per `echoes` turns (the requests already on their way when it was cut bring echoes of the
   * same refusal). True when it cut.
   */
  refused(echoes?: number): boolean;
  /** An answer: an adapted rate grows back, by a few requests per second every second. */
  succeeded(): void;
  /**
   * A limiter refused a request this pacer let through (a 429 with Retry-After): the requests
   * reach the service with more jitter than the window allows for, so its margin beyond one
   * second doubles, up to MAX_WINDOW_MS, for the rest of the run.
   */
  overran(): void;
  /** The service's limits, from its response headers. */
  observe(limits: RateLimits): void;
  /** Every waiter is released now, and later takes return at once. */
  stop(): void;
}

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** The highest rate paced: one-millisecond timers cannot space requests more finely. */
export const MAX_RATE = 1000;
/**
 * The window of the rate: one second and 25 ms. The requests of any 1,025 ms hold at most the
 * rate, so a request that reaches the service up to 25 ms later than the one before it (a busy
 * event loop at either end) still cannot put one request too many into a window of one second.
 * It costs 2.4 % of the rate.
 */
export const WINDOW_MS = 1025;
/** The widest window `overran()` makes: a margin of 250 ms, 80 % of the rate. */
export const MAX_WINDOW_MS = 1250;
/**
 * The burst: a turn may go up to 50 ms before it is due, so a timer that fires late, or an event
 * loop that was busy, by up to 50 ms grants the turns it owes at once (at 1,000 a second a timer
 * is always a millisecond or more late, and a loaded machine's event loop lags tens of ms). Not
 * more: below 20 a second there is then no burst at all, and a service's processing spreads the
 * arrivals of a larger one into the next window of its own.
 */
const TOLERANCE_MS = 50;
/** A refusal cuts the rate to this share (AIMD's multiplicative decrease). */
export const CUT_FACTOR = 0.7;
/** Each second of successes adds this share of the rate at the last cut, at least one request a second. */
const GROWTH_SHARE = 0.05;
/** An adapted rate is never cut below this (one request every 2 s). */
const MIN_ADAPTED_RATE = 0.5;
/** The ring of grant times: enough for the window at MAX_RATE. */
const RING = 1024;

/**
 * A rate given on the command line: a number of requests per second up to MAX_RATE, decimals
 * allowed (0.5: one request every 2 s), or 0 for no pacing. Undefined when it is not one.
 */
export function parseRate(raw: string): number | undefined {
  const text = raw.trim();
  if (!/^(\d+\.?\d*|\.\d+)$/.test(text)) return undefined;
  const value = Number(text);
  return value <= MAX_RATE ? value : undefined;
}

/** The share of an account's reported limit a batch paces at by default (see docs/batch.md). */
export const ACCOUNT_LIMIT_SHARE = 0.9;

/** The default pace for an account's `rate_limit_per_second`: undefined when it reports none. */
export function paceForLimit(limit: unknown): number | undefined {
  const value = typeof limit === 'string' && limit.trim() !== '' ? Number(limit) : limit;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return undefined;
  // Rounded to a thousandth: 13 * 0.9 is 11.700000000000001 in floating point.
  const pace = Math.round(value * ACCOUNT_LIMIT_SHARE * 1000) / 1000;
  // Beyond what the pacer can space exactly, the scheduler's reaction to a 429 is left to act.
  return pace <= MAX_RATE ? pace : undefined;
}

export function createPacer(source: RateSource, options: PacerOptions = {}): Pacer {
  const now = options.now ?? (() => performance.now());
  const setTimer = options.setTimer ?? ((fn: () => void, ms: number) => setTimeout(fn, ms));
  const clearTimer = options.clearTimer ?? ((timer: unknown) => clearTimeout(timer as NodeJS.Timeout));
  let windowMs = options.windowMs ?? WINDOW_MS;

  /** The rate given (or known once a deferred rate answers). */
  let given: number | undefined;
  /** The service's policy (RateLimit-Policy), per second. */
  let policy: number | undefined;
  let policyWindow: { quota: number; ms: number } | undefined;
  /** The rate in force: the ceiling, or less after refusals. */
  let rate: number | undefined;
  let interval = 0;
  let tolerance = 0;
  let perWindow = 0;

  let pending = typeof source === 'function' ? source : undefined;
  let resolving = false;
  /** GCRA's theoretical arrival time: when the next turn is due. */
  let due = Number.NEGATIVE_INFINITY;
  /** No grant before this (holdFor). */
  let heldUntil = Number.NEGATIVE_INFINITY;
  const ring = new Float64Array(RING).fill(Number.NEGATIVE_INFINITY);
  let granted = 0;
  let firstGrantAt: number | undefined;
  let stopped = false;
  let timer: unknown;
  const queue: Waiter[] = [];

  // AIMD state.
  let cuts = 0;
  let cutAtGrant = Number.NEGATIVE_INFINITY;
  let echoWindow = 0;
  let growthPerSecond = 1;
  let lastGrowthAt: number | undefined;

  const ceiling = () => minimum(given, policy);

  const setRate = (value: number | undefined) => {
    rate = value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
    if (rate === undefined) return;
    interval = 1000 / rate;
    tolerance = TOLERANCE_MS;
    perWindow = Math.min(RING, Math.max(1, Math.ceil(rate)));
  };

  /** When the window (or a hold) lets the next turn go, whatever the rate says. */
  const gate = (): number => Math.max(ring[(granted - perWindow + RING * 2) % RING] + windowMs, heldUntil);
  /** The earliest time the next turn may be granted. */
  const earliest = (): number => Math.max(due - tolerance, gate());

  const grant = (at: number) => {
    due = Math.max(due, at) + interval;
    ring[granted % RING] = at;
    granted++;
  };

  const settle = (waiter: Waiter, reason?: unknown) => {
    waiter.signal?.removeEventListener('abort', waiter.onAbort!);
    if (reason === undefined) waiter.resolve();
    else waiter.reject(reason);
  };

  const releaseAll = () => {
    for (const waiter of queue.splice(0)) settle(waiter);
  };

  const pump = () => {
    if (stopped || (rate === undefined && !pending)) {
      granted += queue.length;
      releaseAll();
      return;
    }
    if (queue.length === 0 || timer !== undefined || rate === undefined) return;
    let at = now();
    while (queue.length > 0 && at >= earliest()) {
      grant(at);
      settle(queue.shift()!);
      at = now();
    }
    if (queue.length === 0) return;
    // A timer that keeps the process alive: a waiting request may be all a run has left.
    timer = setTimer(
      () => {
        timer = undefined;
        pump();
      },
      Math.max(1, Math.ceil(earliest() - now())),
    );
  };

  const resolve = (ask: () => Promise<number | undefined>) => {
    resolving = true;
    // Asking for the rate is a request too (GET /api/me, under the same limit): it takes the
    // first turn, and the first grant comes one interval after it.
    const askedAt = now();
    const known = (value: number | undefined) => {
      pending = undefined;
      resolving = false;
      given = typeof value === 'number' && value > 0 && Number.isFinite(value) ? value : undefined;
      if (rate === undefined || (given !== undefined && rate > given)) setRate(ceiling());
      if (rate !== undefined && given !== undefined) {
        ring[granted % RING] = askedAt;
        granted++;
        // The asking's own turn, and no burst owed for the wait: the first grant is one interval
        // after it.
        due = Math.max(due, askedAt + interval + tolerance);
      }
      pump();
    };
    Promise.resolve()
      .then(ask)
      .then(known, () => known(undefined));
  };

  if (typeof source === 'number') {
    given = source > 0 && Number.isFinite(source) ? source : undefined;
    setRate(given);
  }

  /** Requests per second granted lately: what a pacer without a rate was sending. */
  const measured = (at: number): number => {
    if (granted === 0 || firstGrantAt === undefined) return 1;
    const span = Math.min(1000, Math.max(100, at - firstGrantAt));
    return Math.max(1, (countSince(at - span) * 1000) / span);
  };

  return {
    get rate() {
      return rate;
    },
    get ceiling() {
      return ceiling();
    },
    get waiting() {
      return queue.length;
    },
    get granted() {
      return granted;
    },
    get cuts() {
      return cuts;
    },
    get windowMs() {
      return windowMs;
    },
    take(signal) {
      if (stopped) return undefined;
      if (!pending && rate === undefined) {
        // Not pacing: only noted, so that a first refusal knows the rate it cuts.
        const at = now();
        firstGrantAt ??= at;
        ring[granted % RING] = at;
        granted++;
        return undefined;
      }
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (!pending && queue.length === 0 && timer === undefined) {
        const at = now();
        if (at >= earliest()) {
          grant(at);
          return undefined;
        }
      }
      const waiting = new Promise<void>((resolve, reject) => {
        const waiter: Waiter = { resolve, reject, signal };
        if (signal) {
          waiter.onAbort = () => {
            const index = queue.indexOf(waiter);
            if (index !== -1) queue.splice(index, 1);
            settle(waiter, signal.reason);
          };
          signal.addEventListener('abort', waiter.onAbort, { once: true });
        }
        queue.push(waiter);
      });
      if (pending) {
        if (!resolving) resolve(pending);
      } else pump();
      return waiting;
    },
    holdFor(ms) {
      if (stopped || !(ms > 0)) return;
      heldUntil = Math.max(heldUntil, now() + ms);
      // The armed timer, if any, finds the hold when it fires and waits again.
    },
    refused(echoes = 0) {
      if (stopped || pending) return false;
      // The requests granted before the last cut were sent at the old rate: their refusals say
      // nothing new.
      if (granted - cutAtGrant < echoWindow) return false;
      const at = now();
      const from = rate ?? measured(at);
      setRate(Math.max(MIN_ADAPTED_RATE, Math.min(from, ceiling() ?? from) * CUT_FACTOR));
      // A lower rate spaces the turns from now: no burst owed from the old one.
      due = Math.max(due, at);
      growthPerSecond = Math.max(1, from * GROWTH_SHARE);
      lastGrowthAt = at;
      cutAtGrant = granted;
      echoWindow = Math.max(1, echoes);
      cuts++;
      return true;
    },
    succeeded() {
      if (rate === undefined || lastGrowthAt === undefined) return;
      const top = ceiling();
      if (top !== undefined && rate >= top) return;
      const at = now();
      // Additive increase: so many requests a second more for every second of answers.
      const next = rate + (growthPerSecond * (at - lastGrowthAt)) / 1000;
      lastGrowthAt = at;
      if (top === undefined && next > MAX_RATE) {
        // Adapted from no pacing at all: back to none once past what the pacer paces.
        rate = undefined;
        lastGrowthAt = undefined;
        granted += queue.length;
        releaseAll();
        return;
      }
      setRate(top === undefined ? next : Math.min(top, next));
    },
    overran() {
      windowMs = Math.min(MAX_WINDOW_MS, 1000 + (windowMs - 1000) * 2);
    },
    observe(limits) {
      if (stopped) return;
      const { quota, windowSeconds = 1, remaining, resetSeconds } = limits;
      if (quota !== undefined && quota > 0 && windowSeconds > 0) {
        const before = ceiling();
        policy = quota / windowSeconds;
        policyWindow = { quota, ms: windowSeconds * 1000 };
        const top = ceiling()!;
        // Lowered to the policy, or raised with it when the rate was the old ceiling.
        if (rate === undefined || rate > top || rate === before) {
          setRate(top);
          lastGrowthAt ??= now();
        }
      }
      // Nothing left in the window: hold until it resets, unless this pacer's own grants used
      // it up (then the window rule already holds the next turn). Someone else shares the key.
      if (remaining === 0 && resetSeconds !== undefined && resetSeconds > 0) {
        const at = now();
        const own = policyWindow ? countSince(at - policyWindow.ms) : 0;
        if (!policyWindow || own < policyWindow.quota)
          heldUntil = Math.max(heldUntil, at + resetSeconds * 1000);
      }
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimer(timer);
      timer = undefined;
      releaseAll();
    },
  };

  function countSince(from: number): number {
    let count = 0;
    for (let i = 1; i <= Math.min(granted, RING); i++) {
      if (ring[(granted - i + RING * 2) % RING] < from) break;
      count++;
    }
    return count;
  }
}

function minimum(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
