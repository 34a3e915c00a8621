// Pacing: at most `rate` requests per second, shared by every caller of one pacer.
//
// The pacer is a few named parts (docs/batch.md, "Pacing"), put together here with the line of
// waiting callers and the one timer that lets them go:
//
// - **GCRA** (src/pace/gcra.ts) spaces the turns 1000 / rate ms apart, with a burst of 50 ms so
//   that a late timer or a busy event loop costs no rate.
// - **The window** (src/pace/window.ts): never more than `ceil(rate)` grants in any 1,025 ms,
//   wherever the window starts, so a service counting fixed or sliding one-second windows never
//   sees more than the rate.
// - **AIMD** (src/pace/aimd.ts): on top of the rate given (the ceiling), a refusal without
//   Retry-After cuts the rate and answers raise it again. A pacer without a rate starts pacing at
//   the first refusal, from the rate it measured.
// - **The hold** (src/pace/hold.ts): the one place a pause is held. A Retry-After (the batch's
//   scheduler writes it) and a RateLimit header saying nothing is left stop every grant until it
//   ends; the scheduler reads the same hold for its slots.
// - **The service's policy** (src/pace/policy.ts): `RateLimit-Policy` lowers the ceiling.
// - **The fleet's turns** (src/pace/shared.ts), on a shared store only: a grant also needs one of
//   the turns the store hands out to every host on the key, so the fleet shares one rate; a pause
//   or a cut seen here is told to the fleet, and the fleet's pause is held here.
//
// `take()` returns undefined when a grant is available at once, so a caller pacing a million
// requests makes no promise for the ones that need not wait.

import type { RateLimits } from './http/rate-limit-headers.js';
import { createAimd } from './pace/aimd.js';
import { createGcra } from './pace/gcra.js';
import { createHold, type Hold } from './pace/hold.js';
import { exhaustedFor, policyOf, type ServicePolicy } from './pace/policy.js';
import { MAX_RATE, positiveRate } from './pace/rate.js';
import { createFleetTurns, type SharedRate } from './pace/shared.js';
import { createWaiters } from './pace/waiters.js';
import { createGrantWindow } from './pace/window.js';

export { CUT_FACTOR } from './pace/aimd.js';
export { ACCOUNT_LIMIT_SHARE, MAX_RATE, paceForLimit, parseRate } from './pace/rate.js';
export { MAX_WINDOW_MS, WINDOW_MS } from './pace/window.js';
export type { Hold, RateLimits, SharedRate };
export { createHold };

export interface PacerOptions {
  /** A monotonic clock in ms (default performance.now). */
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
  /** The window the rate is held over, in ms (default WINDOW_MS). */
  windowMs?: number;
  /** The fleet's turns, on a store that hosts share: every grant takes one (src/pace/shared.ts). */
  shared?: SharedRate;
  /** Says once how the fleet's turns go (`-v`). */
  note?: (line: string) => void;
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
  /** The pause every grant waits out, on this pacer's clock; a scheduler's slots wait it out too. */
  readonly hold: Hold;
  /**
   * Undefined when the caller may send now; else a promise resolved when it may (or when the
   * pacer stops), rejected with the signal's reason when `signal` aborts first.
   */
  take(signal?: AbortSignal): Promise<void> | undefined;
  /** No grant for the next `ms` (a Retry-After, for example): `hold.holdFor` while pacing goes on. */
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

export function createPacer(source: RateSource, options: PacerOptions = {}): Pacer {
  const now = options.now ?? (() => performance.now());
  const setTimer = options.setTimer ?? ((fn: () => void, ms: number) => setTimeout(fn, ms));
  const clearTimer = options.clearTimer ?? ((timer: unknown) => clearTimeout(timer as NodeJS.Timeout));

  const gcra = createGcra();
  const grants = createGrantWindow(options.windowMs);
  const aimd = createAimd();
  const fleet = options.shared
    ? createFleetTurns(options.shared, {
        now,
        answered: () => pump(),
        paused: (at) => hold.holdUntil(at),
        note: options.note,
      })
    : undefined;
  const hold = createHold(now, fleet ? (ms) => fleet.pause(ms) : undefined);
  const waiters = createWaiters();

  /** The rate given (or known once a deferred rate answers). */
  let given: number | undefined;
  /** The service's policy (RateLimit-Policy). */
  let policy: ServicePolicy | undefined;
  /** The rate in force: the ceiling, or less after refusals. */
  let rate: number | undefined;
  let pending = typeof source === 'function' ? source : undefined;
  let resolving = false;
  /** When a pacer without a rate granted its first turn: what it measures its rate from. */
  let firstGrantAt: number | undefined;
  let stopped = false;
  let timer: unknown;

  const ceiling = () => minimum(given, policy?.perSecond);

  const setRate = (value: number | undefined) => {
    rate = positiveRate(value);
    if (rate === undefined) return;
    gcra.space(rate);
    grants.fit(rate);
  };

  /**
   * The earliest time the next turn may be granted: the spacing, the window and the hold, then the
   * fleet's next turn (+Infinity when none is held yet: asked for, and its answer pumps).
   */
  const earliest = (at: number): number => {
    const local = Math.max(gcra.earliest(), grants.opensAt(), hold.until);
    return fleet && local <= at ? Math.max(local, fleet.nextDue(at)) : local;
  };

  /**
   * The rate the fleet's turns are spaced at: the rate held over the window, as this pacer's own
   * turns are (at most `rate` in any `grants.ms`), so a fleet keeps the margin one host keeps.
   */
  const fleetRate = (): number => (rate! * 1000) / grants.ms;

  const grant = (at: number) => {
    gcra.grant(at);
    grants.record(at);
    if (!fleet) return;
    fleet.use();
    // The next turns asked for before they are needed (fleet.ask decides how many, if any).
    fleet.ask(() => waiters.length, fleetRate());
  };

  const pump = () => {
    if (stopped || (rate === undefined && !pending)) {
      grants.skip(waiters.releaseAll());
      return;
    }
    if (waiters.length === 0 || timer !== undefined || rate === undefined) return;
    let at = now();
    while (waiters.length > 0 && at >= earliest(at)) {
      grant(at);
      waiters.releaseFirst();
      at = now();
    }
    if (waiters.length === 0) return;
    // Turns for those still waiting, unless a pause is on (turns taken now would be stale by its end).
    if (fleet && hold.until <= at) fleet.ask(() => waiters.length, fleetRate());
    const next = earliest(at);
    if (next === Number.POSITIVE_INFINITY) return;
    // A timer that keeps the process alive: a waiting request may be all a run has left.
    timer = setTimer(
      () => {
        timer = undefined;
        pump();
      },
      Math.max(1, Math.ceil(next - now())),
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
      given = positiveRate(value);
      if (rate === undefined || (given !== undefined && rate > given)) setRate(ceiling());
      if (rate !== undefined && given !== undefined) {
        // The asking's own turn, and no burst owed for the wait.
        grants.record(askedAt);
        gcra.takenAt(askedAt);
      }
      pump();
    };
    Promise.resolve()
      .then(ask)
      .then(known, () => known(undefined));
  };

  if (typeof source === 'number') {
    given = positiveRate(source);
    setRate(given);
  }

  /** Requests per second granted lately: what a pacer without a rate was sending. */
  const measured = (at: number): number => {
    if (grants.granted === 0 || firstGrantAt === undefined) return 1;
    const span = Math.min(1000, Math.max(100, at - firstGrantAt));
    return Math.max(1, (grants.countSince(at - span) * 1000) / span);
  };

  return {
    get rate() {
      return rate;
    },
    get ceiling() {
      return ceiling();
    },
    get waiting() {
      return waiters.length;
    },
    get granted() {
      return grants.granted;
    },
    get cuts() {
      return aimd.cuts;
    },
    get windowMs() {
      return grants.ms;
    },
    hold,
    take(signal) {
      if (stopped) return undefined;
      if (!pending && rate === undefined) {
        // Not pacing: only noted, so that a first refusal knows the rate it cuts.
        const at = now();
        firstGrantAt ??= at;
        grants.record(at);
        return undefined;
      }
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (!pending && waiters.length === 0 && timer === undefined) {
        const at = now();
        if (at >= earliest(at)) {
          grant(at);
          return undefined;
        }
      }
      const waiting = waiters.join(signal);
      if (pending) {
        if (!resolving) resolve(pending);
      } else pump();
      return waiting;
    },
    holdFor(ms) {
      // The armed timer, if any, finds the hold when it fires and waits again.
      if (!stopped) hold.holdFor(ms);
    },
    refused(echoes = 0) {
      if (stopped || pending) return false;
      const at = now();
      const next = aimd.cut(rate ?? measured(at), ceiling(), at, grants.granted, echoes);
      if (next === undefined) return false;
      setRate(next);
      // A lower rate spaces the turns from now: no burst owed from the old one.
      gcra.restartAt(at);
      fleet?.cut(next, aimd.growthPerSecond);
      return true;
    },
    succeeded() {
      if (rate === undefined || !aimd.growing) return;
      const top = ceiling();
      if (top !== undefined && rate >= top) return;
      const next = aimd.grow(rate, now());
      if (top === undefined && next > MAX_RATE) {
        // Adapted from no pacing at all: back to none once past what the pacer paces.
        rate = undefined;
        aimd.stopGrowing();
        grants.skip(waiters.releaseAll());
        return;
      }
      setRate(top === undefined ? next : Math.min(top, next));
    },
    overran() {
      grants.widen();
    },
    observe(limits) {
      if (stopped) return;
      const stated = policyOf(limits);
      if (stated) {
        const before = ceiling();
        policy = stated;
        const top = ceiling()!;
        // Lowered to the policy, or raised with it when the rate was the old ceiling.
        if (rate === undefined || rate > top || rate === before) {
          setRate(top);
          aimd.startGrowing(now());
        }
      }
      const pause = exhaustedFor(limits, policy, (windowMs) => grants.countSince(now() - windowMs));
      if (pause !== undefined) hold.holdFor(pause);
    },
    stop() {
      stopped = true;
      fleet?.stop();
      if (timer !== undefined) clearTimer(timer);
      timer = undefined;
      waiters.releaseAll();
    },
  };
}

function minimum(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
