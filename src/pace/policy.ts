// What the service's RateLimit-Policy / RateLimit headers (src/http/rate-limit-headers.ts) mean
// for the pacer: a policy is a ceiling on the rate, and nothing left in the window, when this
// pacer did not use it up itself, is a pause until the window resets. Pure: no clock, no state.

import type { RateLimits } from '../http/rate-limit-headers.js';

export interface ServicePolicy {
  /** Requests per second the policy allows. */
  perSecond: number;
  quota: number;
  windowMs: number;
}

/** The policy these headers state; undefined when they state none. */
export function policyOf(limits: RateLimits): ServicePolicy | undefined {
  const { quota, windowSeconds = 1 } = limits;
  if (quota === undefined || !(quota > 0) || !(windowSeconds > 0)) return undefined;
  return { perSecond: quota / windowSeconds, quota, windowMs: windowSeconds * 1000 };
}

/**
 * How long to pause: until the window resets when nothing is left in it, unless this pacer's own
 * grants used it up (`ownIn` counts them over a window's length; the window rule then already
 * holds the next turn). Someone else shares the key. Undefined: no pause.
 */
export function exhaustedFor(
  limits: RateLimits,
  policy: ServicePolicy | undefined,
  ownIn: (windowMs: number) => number,
): number | undefined {
  const { remaining, resetSeconds } = limits;
  if (remaining !== 0 || resetSeconds === undefined || !(resetSeconds > 0)) return undefined;
  if (policy && ownIn(policy.windowMs) >= policy.quota) return undefined;
  return resetSeconds * 1000;
}
