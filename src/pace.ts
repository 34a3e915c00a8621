// Pacing: at most `rate` requests per second, shared by every caller of one pacer.
//
// A token bucket of capacity one (GCRA without tolerance): a grant is allowed when at least
// 1000 / rate ms have passed since the previous grant, so grants are never closer than that, and
// any window of one second, wherever it starts, holds at most `rate` of them (rounded up): a
// service's fixed one-second window (the sandbox's `--rate-limit`) or a sliding one. A larger
// bucket would let a burst through at the start of a window and overfill it. Time a caller lost
// (a late timer, a busy event loop) is not made up afterwards with a burst: pacing never goes
// above the rate, at worst slightly below it. Waiters are served in order, by one timer.
//
// `take()` returns undefined when a grant is available at once, so a caller pacing a million
// requests makes no promise for the ones that need not wait. docs/batch.md, "Pacing".

export interface PacerOptions {
  /** A monotonic clock in ms (default performance.now). */
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
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
  /** Waiting callers. */
  readonly waiting: number;
  /**
   * Undefined when the caller may send now; else a promise resolved when it may (or when the
   * pacer stops), rejected with the signal's reason when `signal` aborts first.
   */
  take(signal?: AbortSignal): Promise<void> | undefined;
  /** No grant for the next `ms` (a 429's Retry-After, for example). */
  holdFor(ms: number): void;
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

  let interval: number | undefined;
  let pending = typeof source === 'function' ? source : undefined;
  let resolving = false;
  if (typeof source === 'number') interval = intervalOf(source);
  /** The earliest time of the next grant. */
  let next = Number.NEGATIVE_INFINITY;
  let stopped = false;
  let timer: unknown;
  const queue: Waiter[] = [];

  const settle = (waiter: Waiter, reason?: unknown) => {
    waiter.signal?.removeEventListener('abort', waiter.onAbort!);
    if (reason === undefined) waiter.resolve();
    else waiter.reject(reason);
  };

  const releaseAll = () => {
    for (const waiter of queue.splice(0)) settle(waiter);
  };

  const pump = () => {
    if (stopped || interval === undefined) {
      releaseAll();
      return;
    }
    if (queue.length === 0 || timer !== undefined) return;
    const at = now();
    if (at >= next) {
      next = at + interval;
      settle(queue.shift()!);
      if (queue.length === 0) return;
    }
    // A timer that keeps the process alive: a waiting request may be all a run has left.
    timer = setTimer(
      () => {
        timer = undefined;
        pump();
      },
      Math.max(0, Math.ceil(next - now())),
    );
  };

  const resolve = (rate: () => Promise<number | undefined>) => {
    resolving = true;
    // Asking for the rate is a request too (GET /api/me, under the same limit): it takes the
    // first turn, and the first grant comes one interval after it.
    const askedAt = now();
    const known = (value: number | undefined) => {
      pending = undefined;
      resolving = false;
      interval = typeof value === 'number' ? intervalOf(value) : undefined;
      if (interval !== undefined) next = Math.max(next, askedAt + interval);
      pump();
    };
    Promise.resolve()
      .then(rate)
      .then(known, () => known(undefined));
  };

  return {
    get rate() {
      return interval === undefined ? undefined : 1000 / interval;
    },
    get waiting() {
      return queue.length;
    },
    take(signal) {
      if (stopped) return undefined;
      if (!pending && interval === undefined) return undefined;
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (!pending && queue.length === 0) {
        const at = now();
        if (at >= next) {
          next = at + interval!;
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
      next = Math.max(next, now() + ms);
      // The armed timer, if any, finds `next` later than it thought and waits again.
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimer(timer);
      timer = undefined;
      releaseAll();
    },
  };
}

function intervalOf(rate: number): number | undefined {
  return Number.isFinite(rate) && rate > 0 ? 1000 / rate : undefined;
}
