// The one place a pause is held. A Retry-After (src/batch/scheduler.ts) and a RateLimit header
// saying nothing is left in the window (src/pace.ts `observe`) both write here; the pacer's grants
// and the scheduler's slots both read here, so one pause stops both and ends for both at once.

export interface Hold {
  /** When the pause ends, on the hold's clock (-Infinity when there never was one). */
  readonly until: number;
  /** Milliseconds left of the pause: 0 when none is on. */
  remaining(): number;
  /** No request for the next `ms` (a longer pause already on stays). */
  holdFor(ms: number): void;
  /** No request before `at`, on the hold's clock (a longer pause already on stays). */
  holdUntil(at: number): void;
}

export function createHold(now: () => number): Hold {
  let until = Number.NEGATIVE_INFINITY;
  return {
    get until() {
      return until;
    },
    remaining() {
      return Math.max(0, until - now());
    },
    holdFor(ms) {
      if (ms > 0) until = Math.max(until, now() + ms);
    },
    holdUntil(at) {
      until = Math.max(until, at);
    },
  };
}
