import { describe, expect, it } from 'vitest';
import { readRateLimits } from '../../src/http/rate-limit-headers.js';

describe('readRateLimits', () => {
  it('reads the structured fields of the IETF httpapi draft', () => {
    expect(
      readRateLimits({ 'ratelimit-policy': '"default";q=100;w=10', ratelimit: '"default";r=50;t=30' }),
    ).toEqual({ quota: 100, windowSeconds: 10, remaining: 50, resetSeconds: 30 });
    // Several policies: the fewest requests a second; several items: the fewest left.
    expect(
      readRateLimits({
        'ratelimit-policy': '"burst";q=100;w=1, "day";q=864000;w=86400',
        ratelimit: '"burst";r=3;t=1, "day";r=1000;t=40000',
      }),
    ).toEqual({ quota: 864000, windowSeconds: 86400, remaining: 3, resetSeconds: 1 });
    expect(readRateLimits({ 'ratelimit-policy': '"p";q=50' })).toEqual({ quota: 50, windowSeconds: 1 });
  });

  it("reads the earlier drafts' headers", () => {
    expect(
      readRateLimits({
        'ratelimit-limit': '100',
        'ratelimit-remaining': '0',
        'ratelimit-reset': '7',
        'ratelimit-policy': '100;w=60',
      }),
    ).toEqual({ quota: 100, windowSeconds: 60, remaining: 0, resetSeconds: 7 });
    expect(readRateLimits({ 'ratelimit-limit': '20' })).toEqual({ quota: 20, windowSeconds: 1 });
  });

  it('says nothing when the headers say nothing readable', () => {
    expect(readRateLimits({})).toBeUndefined();
    expect(readRateLimits({ 'ratelimit-policy': 'garbage', ratelimit: '"x";q=1' })).toBeUndefined();
    expect(readRateLimits({ 'ratelimit-limit': 'many' })).toBeUndefined();
  });
});
