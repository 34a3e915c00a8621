// The window rule of the pacer: never more than `ceil(rate)` grants in any window of `ms`
// (WINDOW_MS, one second plus a margin for the jitter between leaving and arriving), wherever the
// window starts. A ring of the last grant times checks it exactly, and bounds what GCRA's burst
// may add (src/pace/gcra.ts), so a service counting fixed one-second windows, sliding ones or a
// bucket of its own never sees more than the rate.

/**
 * The window of the rate: one second and 25 ms. The requests of any 1,025 ms hold at most the
 * rate, so a request that reaches the service up to 25 ms later than the one before it (a busy
 * event loop at either end) still cannot put one request too many into a window of one second.
 * It costs 2.4 % of the rate.
 */
export const WINDOW_MS = 1025;
/** The widest window `widen()` makes: a margin of 250 ms, 80 % of the rate. */
export const MAX_WINDOW_MS = 1250;
/** The ring of grant times: enough for the window at MAX_RATE (src/pace/rate.ts). */
const RING = 1024;

export interface GrantWindow {
  /** Turns granted so far (some without a time: released when pacing stopped). */
  readonly granted: number;
  /** The window in ms: WINDOW_MS, wider after widen(). */
  readonly ms: number;
  /** The grants a window may hold at this rate. */
  fit(rate: number): void;
  /** A grant at `at`. */
  record(at: number): void;
  /** `count` grants with no time to note (waiters released unpaced). */
  skip(count: number): void;
  /** When the window lets the next grant go. */
  opensAt(): number;
  /** Grants at or after `from` (as far back as the ring reaches). */
  countSince(from: number): number;
  /** The margin beyond one second doubles, up to MAX_WINDOW_MS. */
  widen(): void;
}

export function createGrantWindow(ms = WINDOW_MS): GrantWindow {
  const ring = new Float64Array(RING).fill(Number.NEGATIVE_INFINITY);
  let granted = 0;
  let perWindow = 0;
  return {
    get granted() {
      return granted;
    },
    get ms() {
      return ms;
    },
    fit(rate) {
      perWindow = Math.min(RING, Math.max(1, Math.ceil(rate)));
    },
    record(at) {
      ring[granted % RING] = at;
      granted++;
    },
    skip(count) {
      granted += count;
    },
    opensAt() {
      return ring[(granted - perWindow + RING * 2) % RING] + ms;
    },
    countSince(from) {
      let count = 0;
      for (let i = 1; i <= Math.min(granted, RING); i++) {
        if (ring[(granted - i + RING * 2) % RING] < from) break;
        count++;
      }
      return count;
    },
    widen() {
      ms = Math.min(MAX_WINDOW_MS, 1000 + (ms - 1000) * 2);
    },
  };
}
