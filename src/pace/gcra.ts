// GCRA, the spacing rule of the pacer (a token bucket with a small burst): turns are due every
// 1000 / rate ms, and a turn may be granted up to TOLERANCE_MS before it is due. A timer that
// fires late, or an event loop that was busy, grants the turns it owes at once, up to that, so the
// rate is held rather than lost: the old bucket of one lost every late millisecond for good (66-78 %
// of the rate at 200-400/s, issue 31). The window (src/pace/window.ts) bounds what the burst adds.

/**
 * The burst: a turn may go up to 50 ms before it is due, so a timer that fires late, or an event
 * loop that was busy, by up to 50 ms grants the turns it owes at once (at 1,000 a second a timer
 * is always a millisecond or more late, and a loaded machine's event loop lags tens of ms). Not
 * more: below 20 a second there is then no burst at all, and a service's processing spreads the
 * arrivals of a larger one into the next window of its own.
 */
const TOLERANCE_MS = 50;

export interface Gcra {
  /** Turns due every 1000 / rate ms from now on. */
  space(rate: number): void;
  /** The earliest time the next turn may go, by the spacing alone. */
  earliest(): number;
  /** A turn went at `at`: the next is due one interval later. */
  grant(at: number): void;
  /** No burst owed for the time before `at` (a cut rate spaces the turns from now). */
  restartAt(at: number): void;
  /** A turn taken at `at` by something else (asking for the rate): the next one interval after, no burst. */
  takenAt(at: number): void;
}

export function createGcra(): Gcra {
  /** The theoretical arrival time: when the next turn is due. */
  let due = Number.NEGATIVE_INFINITY;
  let interval = 0;
  let tolerance = 0;
  return {
    space(rate) {
      interval = 1000 / rate;
      tolerance = TOLERANCE_MS;
    },
    earliest() {
      return due - tolerance;
    },
    grant(at) {
      due = Math.max(due, at) + interval;
    },
    restartAt(at) {
      due = Math.max(due, at);
    },
    takenAt(at) {
      due = Math.max(due, at + interval + tolerance);
    },
  };
}
