// The adaptive rate (AIMD) on top of the rate given: a refusal without Retry-After (a gateway's
// 503, a 429) cuts the rate multiplicatively, every answer raises it additively, back up to the
// ceiling. Pure arithmetic on the times and grant counts the pacer passes in.

/** A refusal cuts the rate to this share (the multiplicative decrease). */
export const CUT_FACTOR = 0.7;
/** Each second of successes adds this share of the rate at the last cut, at least one request a second. */
const GROWTH_SHARE = 0.05;
/** An adapted rate is never cut below this (one request every 2 s). */
const MIN_ADAPTED_RATE = 0.5;

export interface Aimd {
  /** Times a refusal cut the rate. */
  readonly cuts: number;
  /** Whether the rate grows back on answers (after a cut, or once a policy set it). */
  readonly growing: boolean;
  /** Requests a second the rate grows by, every second of answers, since the last cut. */
  readonly growthPerSecond: number;
  /**
   * The rate after a refusal seen at grant number `granted`, from the rate `from` under the
   * ceiling `ceiling`; undefined when the refusal is an echo of the last cut (the `echoes`
   * requests on their way when it was cut bring the same refusal).
   */
  cut(
    from: number,
    ceiling: number | undefined,
    at: number,
    granted: number,
    echoes: number,
  ): number | undefined;
  /** The rate `rate` has grown to by `at`: so many requests a second more for every second of answers. */
  grow(rate: number, at: number): number;
  /** Answers raise the rate from `at` on (a no-op when they already do). */
  startGrowing(at: number): void;
  /** Nothing to grow back to any more (pacing is off). */
  stopGrowing(): void;
}

export function createAimd(): Aimd {
  let cuts = 0;
  let cutAtGrant = Number.NEGATIVE_INFINITY;
  let echoWindow = 0;
  let growthPerSecond = 1;
  let lastGrowthAt: number | undefined;
  return {
    get cuts() {
      return cuts;
    },
    get growing() {
      return lastGrowthAt !== undefined;
    },
    get growthPerSecond() {
      return growthPerSecond;
    },
    cut(from, ceiling, at, granted, echoes) {
      // The requests granted before the last cut were sent at the old rate: their refusals say
      // nothing new.
      if (granted - cutAtGrant < echoWindow) return undefined;
      growthPerSecond = Math.max(1, from * GROWTH_SHARE);
      lastGrowthAt = at;
      cutAtGrant = granted;
      echoWindow = Math.max(1, echoes);
      cuts++;
      return Math.max(MIN_ADAPTED_RATE, Math.min(from, ceiling ?? from) * CUT_FACTOR);
    },
    grow(rate, at) {
      const next = rate + (growthPerSecond * (at - (lastGrowthAt ?? at))) / 1000;
      lastGrowthAt = at;
      return next;
    },
    startGrowing(at) {
      lastGrowthAt ??= at;
    },
    stopGrowing() {
      lastGrowthAt = undefined;
    },
  };
}
