// How many enrichment requests are in flight, and when the next one may start.
//
// A FIFO gate of `--concurrency` slots. A request that has its slot also waits for its turn in
// the rate (`pace()`, src/pace.ts). Refusals act on the rate, not on the slots: a 429 or a 503
// without Retry-After cuts the pacer's rate (AIMD; a run without a rate starts pacing at the rate
// it was sending), and every answer raises it again; requests keep flowing at the adapted rate,
// nobody pauses. A refusal with Retry-After pauses every worker, and the pacer, for that long:
// the service said when to come back. The pause is the pacer's hold (src/pace/hold.ts), the one
// place it is kept: the slots here and the turns in the rate wait out the same pause, whoever set
// it (a Retry-After here, the service's RateLimit headers there). A 502 or 504 without one is
// that request's to retry. It also counts consecutive failures, which the run uses to stop
// burning through a file while the service is down.
import { createHold, type Pacer } from '../pace.js';

export type Outcome = 'success' | 'failure';

export interface Slot {
  released: boolean;
}

export interface SchedulerOptions {
  /** The configured --concurrency. */
  concurrency: number;
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
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
  /** Times a 429, 502, 503 or 504 cut the rate. */
  readonly rateLimitCuts: number;
  /** Epoch ms of the last answer (a row's success), or of the scheduler's start. */
  readonly lastProgressAt: number;
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
  /**
   * A 429 was seen: with Retry-After every worker and the pacer pause for it; without, the rate
   * is cut (once for the requests already on their way).
   */
  rateLimited(retryAfterSeconds: number | undefined): void;
  /**
   * A 502, 503 or 504 was seen: a 503 as a 429 (a gateway's limiter answers 503); a 502 or 504
   * pauses only for a Retry-After, and its own retry waits for its backoff.
   */
  overloaded(retryAfterSeconds?: number, status?: number): void;
  /**
   * True while the run makes progress (an answer within PROGRESS_MS): its refusals without
   * Retry-After are then retried at the adapted rate without counting against --retries.
   */
  pacesRefusals(): boolean;
  /** Resolves once no pause is on (at once when none is, or the scheduler is stopped). */
  resumed(): Promise<void>;
  /** No new slots: every waiter gets null now, later acquirers too. In-flight work finishes. */
  stop(): void;
  readonly stopped: boolean;
  /** Resolves when nothing is in flight. */
  idle(): Promise<void>;
}

/** How long a run may go without an answer before its refusals count against --retries again. */
export const PROGRESS_MS = 30_000;

export function createScheduler(options: SchedulerOptions): Scheduler {
  const limit = Math.max(1, Math.floor(options.concurrency));
  const now = options.now ?? Date.now;
  const setTimer = options.setTimer ?? ((fn: () => void, ms: number) => setTimeout(fn, ms));
  const clearTimer =
    options.clearTimer ??
    (options.setTimer ? () => {} : (timer: unknown) => clearTimeout(timer as NodeJS.Timeout));
  const { pacer } = options;
  // Without a pacer, a hold of its own on this clock: a Retry-After still pauses the slots.
  const hold = pacer?.hold ?? createHold(now);
  const paused = () => hold.remaining() > 0;

  let inFlight = 0;
  let failures = 0;
  let cuts = 0;
  let lastProgressAt = now();
  let stopped = false;
  /** The timer that ends a pause for the acquirers waiting it out; undefined when none is armed. */
  let timer: unknown;
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
    if (timer !== undefined) return;
    // A timer that keeps the process alive: lookups waiting out a pause for a slot may be all a
    // run has left (a RateLimit header's pause leaves no retry sleeping). It is armed only while
    // someone waits, and stop() clears it, so it keeps no finished run alive.
    timer = setTimer(() => {
      timer = undefined;
      pump();
    }, hold.remaining());
  };

  const pump = () => {
    if (stopped) {
      while (waiting() > 0) takeNext()(null);
      return;
    }
    if (waiting() > 0 && paused()) {
      armTimer();
      return;
    }
    while (waiting() > 0 && inFlight < limit) {
      inFlight++;
      takeNext()({ released: false });
    }
  };

  /**
   * A refusal: with Retry-After everyone pauses for that long (the service said when to come
   * back; the rate stays); without, the rate is cut when `cut` (a 429 or a 503).
   */
  const refused = (retryAfterSeconds: number | undefined, cut: boolean, limiter = false) => {
    if (retryAfterSeconds !== undefined && retryAfterSeconds > 0) {
      // A rate limiter refused what the pacer let through (once per pause: the rest are echoes).
      if (limiter && !paused()) pacer?.overran();
      // Requests that hold a slot and wait for their turn in the rate wait out the pause too:
      // it is the pacer's hold.
      hold.holdFor(retryAfterSeconds * 1000);
      if (waiting() > 0) armTimer();
      return;
    }
    if (cut && pacer?.refused(inFlight)) cuts++;
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
      // The hold keeps the pacer's (monotonic) clock: told on this one as what is left from now.
      const left = hold.remaining();
      return left > 0 ? now() + left : 0;
    },
    get consecutiveFailures() {
      return failures;
    },
    get rateLimitCuts() {
      return cuts;
    },
    get lastProgressAt() {
      return lastProgressAt;
    },
    get stopped() {
      return stopped;
    },
    tryAcquire() {
      if (stopped || waiting() > 0 || inFlight >= limit || paused()) return undefined;
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
        lastProgressAt = now();
        pacer?.succeeded();
      } else failures++;
      pump();
      notifyIdle();
    },
    pace() {
      return pacer?.take();
    },
    pacesRefusals() {
      return !stopped && now() - lastProgressAt < PROGRESS_MS;
    },
    rateLimited(retryAfterSeconds) {
      refused(retryAfterSeconds, true, true);
    },
    overloaded(retryAfterSeconds, status) {
      refused(retryAfterSeconds, status === undefined || status === 503);
    },
    async resumed() {
      // A timer that keeps the process alive: a retry waiting here may be all the run has left.
      // Later pauses may extend the wait, hence the loop.
      while (!stopped && paused()) await new Promise<void>((resolve) => setTimer(resolve, hold.remaining()));
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimer(timer);
      timer = undefined;
      pacer?.stop();
      pump();
    },
    idle() {
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}
