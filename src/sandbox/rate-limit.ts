// Per-key fixed one-second windows (docs/contract.md, "Rate limiting"). A fixed window rather
// than a token bucket because it is what the contract promises and what a test can reason about.

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class FixedWindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.perSecond > 0;
  }

  /** Counts one request of `key` and says whether it fits in the current window. */
  take(key: string): RateDecision {
    if (!this.enabled) return { allowed: true };
    const now = this.now();
    const start = now - (now % 1000);
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    if (window.count <= this.perSecond) return { allowed: true };
    // Retry-After is whole seconds; rounding a partial second down to 0 would invite a hot loop.
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((start + 1000 - now) / 1000)) };
  }
}
