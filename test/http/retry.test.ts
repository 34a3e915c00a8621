import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  type RetryPolicy,
  retryDelayMs,
  retryPolicyFrom,
} from '../../src/http/retry.js';

const policyArb: fc.Arbitrary<RetryPolicy> = fc.record({
  baseMs: fc.integer({ min: 1, max: 5_000 }),
  capMs: fc.integer({ min: 1, max: 60_000 }),
  throttleFloorMs: fc.integer({ min: 0, max: 5_000 }),
  maxRetryAfterMs: fc.constant(120_000),
});

describe('retryDelayMs', () => {
  it('stays within [floor or Retry-After, cap or Retry-After] for any attempt and draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: undefined }),
        fc.boolean(),
        policyArb,
        (attempt, draw, retryAfterMs, throttled, policy) => {
          const delay = retryDelayMs(attempt, { retryAfterMs, throttled, random: () => draw, policy });
          const floor = Math.max(throttled ? policy.throttleFloorMs : 0, retryAfterMs ?? 0);
          const ceiling = Math.max(policy.capMs, floor);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(floor);
          expect(delay).toBeLessThanOrEqual(ceiling);
        },
      ),
    );
  });

  it('grows the jitter window exponentially from the base', () => {
    const almostOne = () => 0.999999;
    const policy = { ...DEFAULT_RETRY_POLICY, baseMs: 100, capMs: 1_000 };
    expect(retryDelayMs(0, { random: almostOne, policy })).toBe(99);
    expect(retryDelayMs(1, { random: almostOne, policy })).toBe(199);
    expect(retryDelayMs(2, { random: almostOne, policy })).toBe(399);
    expect(retryDelayMs(10, { random: almostOne, policy })).toBe(999);
    expect(retryDelayMs(3, { random: () => 0, policy })).toBe(0);
  });

  it('waits at least the throttling floor on a 429, and at least Retry-After', () => {
    const zero = () => 0;
    expect(retryDelayMs(0, { random: zero, throttled: true })).toBe(1_000);
    expect(retryDelayMs(0, { random: zero, retryAfterMs: 45_000 })).toBe(45_000);
  });

  it('reads test overrides of the policy from the environment', () => {
    const policy = retryPolicyFrom({ COMPANY_DATA_RETRY_BASE_MS: '5', COMPANY_DATA_RETRY_CAP_MS: 'x' });
    expect(policy.baseMs).toBe(5);
    expect(policy.capMs).toBe(DEFAULT_RETRY_POLICY.capMs);
    expect(retryPolicyFrom({}, { capMs: 7 }).capMs).toBe(7);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-08-26T12:00:00Z');

  it.each([
    ['1', 1_000],
    ['0', 0],
    [' 30 ', 30_000],
    ['1.5', 1_500],
    ['Wed, 26 Aug 2026 12:00:10 GMT', 10_000],
    ['Wed, 26 Aug 2026 11:00:00 GMT', 0],
  ])('reads %j as %d ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it.each([undefined, '', '-5', 'soon', '12abc', 'Wed, 99 Foo 2026'])('ignores %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
