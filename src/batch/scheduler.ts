// How many enrichment requests are in flight, and when the next one may start.
//
// A FIFO gate with a limit that adapts to the service: a 429 halves the limit (never below 1) and
// pauses every worker for the Retry-After period, so a rate-limited key settles into the rate it is
// allowed instead of producing a storm of 429s; after `growAfter` consecutive successes the limit
// grows back by one, up to the configured concurrency. A gateway's 502, 503 or 504 (an overloaded
// service, or a rate limiter such as nginx's limit_req) does the same with the backoff of the
// request that saw it, and the retries of such answers wait for the pause too. It also counts consecutive failures, which
// the run uses to stop burning through a file while the service is down.
//
// With a pacer (--rate, src/pace.ts), a request that has its slot also waits for its turn in the
// rate (`pace()`); a pause holds the pacer too, and a stop releases its waiters.
import type { Pacer } from '../pace.js';

export type Outcome = 'success' | 'failure';

export interface Slot {
  released: boolean;
}

export interface SchedulerOptions {
  /** The configured --concurrency: the starting and the highest limit. */
  concurrency: number;
  /** Consecutive successes before the limit grows by one (default 50). */
  growAfter?: number;
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => { unref?(): void };
  /** Paces the requests of the run (--rate); none: no pacing. */
  pacer?: Pacer;
}

export interface Scheduler {
  readonly limit: number;
  readonly inFlight: number;
  /** Waiting acquirers. */
  readonly waiting: number;
  /** Epoch ms until which no request may start (0 when not paused). */
  readonly pausedUntil: number;
  readonly consecutiveFailures: number;
  /** Times the limit was cut because of a 429, 502, 503 or 504. */
  readonly rateLimitCuts: number;
  /** A slot once one is free and no pause is on; null once the scheduler is stopped. */
  acquire(): Promise<Slot | null>;
  /** A slot right now if one is free, nobody waits before us and no pause is on; else undefined. */
  tryAcquire(): Slot | undefined;
  release(slot: Slot, outcome: Outcome): void;
  /**
   * The request's turn in the --rate, taken once it has a slot and right before it is sent (a
   * retry too): undefined when it may go at once, else a promise for when it may (at once
   * when the scheduler stops).
   */
  pace(): Promise<void> | undefined;
  /** A 429 was seen: cut the limit (once per pause) and pause every worker. */
  rateLimited(retryAfterSeconds: number | undefined): void;
  /**
   * A 502, 503 or 504 was seen: cut the limit (once per pause) and pause every worker for `pauseMs`
   * (the jittered backoff of the request that saw it).
   */
  overloaded(pauseMs: number): void;
  /** Resolves once no pause is on (at once when none is, or the scheduler is stopped). */
  resumed(): Promise<void>;
  /** No new slots: every waiter gets null now, later acquirers too. In-flight work finishes. */
  stop(): void;
  readonly stopped: boolean;
  /** Resolves when nothing is in flight. */
  idle(): Promise<void>;
}

export const DEFAULT_GROW_AFTER = 50;

export function createScheduler(options: SchedulerOptions): Scheduler {
  const max = Math.max(1, Math.floor(options.concurrency));
  const growAfter = options.growAfter ?? DEFAULT_GROW_AFTER;
  const now = options.now ?? Date.now;
  const setTimer = options.setTimer ?? ((fn: () => void, ms: number) => setTimeout(fn, ms));
  const { pacer } = options;

  let limit = max;
  let inFlight = 0;
  let pausedUntil = 0;
  let successes = 0;
  let failures = 0;
  let cuts = 0;
  let stopped = false;
  let timerArmed = false;
  // A FIFO of waiting acquirers: an array read from `head`, compacted now and then, because
  // shift() on a queue of hundreds costs a copy per request.
  let queue: Array<((slot: Slot | null) => void) | undefined> = [];
  let head = 0;
  const waiting = () => queue.length - head;
  const takeNext = (): ((slot: Slot | null) => void) => {
    const next = queue[head]!;
    queue[head++] = undefined;
    if (head === queue.length) {
      queue = [];
      head = 0;
    } else if (head >= 1024 && head * 2 >= queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
    return next;
  };
  let idleWaiters: Array<() => void> = [];

  const armTimer = () => {
    if (timerArmed) return;
    timerArmed = true;
    const timer = setTimer(
      () => {
        timerArmed = false;
        pump();
      },
      Math.max(0, pausedUntil - now()),
    );
    // A pause must not keep a finished process alive, nor end a busy one early: the run awaits
    // its own work, so an unref'd timer is enough.
    timer.unref?.();
  };

  const pump = () => {
    if (stopped) {
      while (waiting() > 0) takeNext()(null);
      return;
    }
    if (waiting() > 0 && now() < pausedUntil) {
      armTimer();
      return;
    }
    while (waiting() > 0 && inFlight < limit) {
      inFlight++;
      takeNext()({ released: false });
    }
  };

  const slowDown = (pauseMs: number) => {
    const at = now();
    successes = 0;
    // Several workers see the same refusal window at once; one cut per pause is the signal, the
    // rest are echoes of it.
    if (at >= pausedUntil) {
      limit = Math.max(1, Math.floor(limit / 2));
      cuts++;
    }
    pausedUntil = Math.max(pausedUntil, at + pauseMs);
    // Requests that hold a slot and wait for their turn in the rate wait out the pause too.
    pacer?.holdFor(pausedUntil - at);
    if (waiting() > 0) armTimer();
  };

  const notifyIdle = () => {
    if (inFlight !== 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  };

  return {
    get limit() {
      return limit;
    },
    get inFlight() {
      return inFlight;
    },
    get waiting() {
      return waiting();
    },
    get pausedUntil() {
      return pausedUntil > now() ? pausedUntil : 0;
    },
    get consecutiveFailures() {
      return failures;
    },
    get rateLimitCuts() {
      return cuts;
    },
    get stopped() {
      return stopped;
    },
    tryAcquire() {
      if (stopped || waiting() > 0 || inFlight >= limit || now() < pausedUntil) return undefined;
      inFlight++;
      return { released: false };
    },
    acquire() {
      if (stopped) return Promise.resolve(null);
      return new Promise<Slot | null>((resolve) => {
        queue.push(resolve);
        pump();
      });
    },
    release(slot, outcome) {
      if (slot.released) return;
      slot.released = true;
      inFlight--;
      if (outcome === 'success') {
        failures = 0;
        successes++;
        if (successes >= growAfter && limit < max) {
          limit++;
          successes = 0;
        }
      } else {
        failures++;
        successes = 0;
      }
      pump();
      notifyIdle();
    },
    pace() {
      return pacer?.take();
    },
    rateLimited(retryAfterSeconds) {
      const seconds = retryAfterSeconds !== undefined && retryAfterSeconds > 0 ? retryAfterSeconds : 1;
      slowDown(seconds * 1000);
    },
    overloaded(pauseMs) {
      slowDown(Math.max(0, pauseMs));
    },
    async resumed() {
      // A timer that keeps the process alive: a retry waiting here may be all the run has left.
      // Later pauses may extend the wait, hence the loop.
      while (!stopped && now() < pausedUntil)
        await new Promise<void>((resolve) => setTimer(resolve, pausedUntil - now()));
    },
    stop() {
      stopped = true;
      pacer?.stop();
      pump();
    },
    idle() {
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}
