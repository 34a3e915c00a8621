// The one place a pause is held. A Retry-After (src/batch/scheduler.ts) and a RateLimit header
// saying nothing is left in the window (src/pace.ts `observe`) both write here; the pacer's grants
// and the scheduler's slots both read here, so one pause stops both and ends for both at once.
// On a shared store the pause is the fleet's too: `announce` tells the other hosts (src/pace/shared.ts),
// and a pause learnt from them comes back through `holdUntil`, which announces nothing.

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

/**
 * A pause that `holdFor` extends by less than this is not announced again: the 429s of one burst
 * each bring the same Retry-After, a few ms apart.
 */
const ANNOUNCE_STEP_MS = 100;

export function createHold(now: () => number, announce?: (ms: number) => void): Hold {
  let until = Number.NEGATIVE_INFINITY;
  let announced = Number.NEGATIVE_INFINITY;
  return {
    get until() {
      return until;
    },
    remaining() {
      return Math.max(0, until - now());
    },
    holdFor(ms) {
      if (!(ms > 0)) return;
      const end = now() + ms;
      until = Math.max(until, end);
      if (announce && end >= announced + ANNOUNCE_STEP_MS) {
        announced = end;
        announce(ms);
      }
    },
    holdUntil(at) {
      until = Math.max(until, at);
    },
  };
}
