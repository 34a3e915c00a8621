// When and how long to wait before retrying. Pure functions, so the bounds can be proved with
// property tests instead of being observed with clocks.

export interface RetryPolicy {
  /** First backoff window; doubles with every retry. */
  baseMs: number;
  /** Largest backoff window (Retry-After may still ask for more, up to maxRetryAfterMs). */
  capMs: number;
  /** A throttled (429, 502, 503, 504) retry never waits less than this, even when the jitter draws 0. */
  throttleFloorMs: number;
  /** A Retry-After longer than this is not slept: the call fails with retry_after_too_long. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseMs: 500,
  capMs: 20_000,
  throttleFloorMs: 1_000,
  maxRetryAfterMs: 120_000,
};

/**
 * The policy in effect. COMPANY_DATA_RETRY_BASE_MS, COMPANY_DATA_RETRY_CAP_MS and
 * COMPANY_DATA_RETRY_FLOOR_MS exist for tests of the real binary, so that retries of a fault
 * take milliseconds instead of seconds; users have no reason to set them.
 */
export function retryPolicyFrom(env: NodeJS.ProcessEnv, override?: Partial<RetryPolicy>): RetryPolicy {
  const fromEnv = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || !/^\d+$/.test(raw.trim())) return undefined;
    return Number(raw);
  };
  return {
    baseMs: override?.baseMs ?? fromEnv('COMPANY_DATA_RETRY_BASE_MS') ?? DEFAULT_RETRY_POLICY.baseMs,
    capMs: override?.capMs ?? fromEnv('COMPANY_DATA_RETRY_CAP_MS') ?? DEFAULT_RETRY_POLICY.capMs,
    throttleFloorMs:
      override?.throttleFloorMs ??
      fromEnv('COMPANY_DATA_RETRY_FLOOR_MS') ??
      DEFAULT_RETRY_POLICY.throttleFloorMs,
    maxRetryAfterMs: override?.maxRetryAfterMs ?? DEFAULT_RETRY_POLICY.maxRetryAfterMs,
  };
}

export interface DelayInput {
  /** What the server asked for with Retry-After, in ms. */
  retryAfterMs?: number;
  /** true for a 429 or a gateway's 502/503/504: too fast or overloaded, so never come back at once. */
  throttled?: boolean;
  /** A number in [0, 1); Math.random by default. Injected by tests. */
  random?: () => number;
  policy?: RetryPolicy;
}

/**
 * Exponential backoff with full jitter (random in [0, min(cap, base * 2^attempt)]), raised to the
 * throttling floor for a 429 and to Retry-After when the server gave one. attempt is 0 for the
 * wait before the first retry. The result is always within
 * [max(floor, retryAfter), max(cap, floor, retryAfter)].
 */
export function retryDelayMs(attempt: number, input: DelayInput = {}): number {
  const policy = input.policy ?? DEFAULT_RETRY_POLICY;
  const random = input.random ?? Math.random;
  // 2^attempt overflows to Infinity for large attempts; min() with the cap keeps it finite.
  const window = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt));
  const r = Math.min(Math.max(random(), 0), 1);
  let delay = Math.floor(r * window);
  if (input.throttled) delay = Math.max(delay, policy.throttleFloorMs);
  if (input.retryAfterMs !== undefined && input.retryAfterMs > 0)
    delay = Math.max(delay, Math.ceil(input.retryAfterMs));
  return delay;
}

/**
 * Reads a Retry-After header: delta seconds ("3") or an HTTP date. Returns milliseconds from now
 * (0 for a date in the past), or undefined when the value is missing or unreadable.
 */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // Only something that looks like a date: Date.parse would read "12abc" too leniently.
  if (!/[a-z]/i.test(text) || !/\d{4}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * Answers that say "too fast" or "overloaded": a 429, and a gateway's 502, 503 or 504 (nginx's
 * limit_req answers 503). A retry after one of them never comes back at once (the throttling
 * floor), and a batch slows down for all of its requests (src/batch/lookup.ts).
 */
export const THROTTLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
