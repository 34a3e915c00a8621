import { describe, expect, it } from 'vitest';
import { readCredits } from '../../src/http/credits.js';

describe('readCredits', () => {
  it.each([
    [
      { 'x-credits-charged': '2', 'x-credits-remaining': '998' },
      { charged: 2, chargedName: 'x-credits-charged', remaining: 998 },
    ],
    [
      { 'X-Credits-Charged': '0', 'X-Credits-Remaining': '1000000' },
      { charged: 0, chargedName: 'X-Credits-Charged', remaining: 1_000_000 },
    ],
    [
      { 'x-credit-cost': '5', 'x-credit-balance': '10' },
      { charged: 5, chargedName: 'x-credit-cost', remaining: 10 },
    ],
    [
      { 'ratelimit-credits-used': '3', 'credits-left': '7' },
      { charged: 3, chargedName: 'ratelimit-credits-used', remaining: 7 },
    ],
    // Other names for the same figures (a service that is not the sandbox).
    [
      { 'x-usage-cost': '1', 'x-account-balance': '99' },
      { charged: 1, chargedName: 'x-usage-cost', remaining: 99 },
    ],
    [{ 'x-account-credits-remaining': '1.5' }, { remaining: 1.5 }],
    // The exact name wins; a value that is not a number is kept as text: possibly charged.
    [
      { 'x-credits-charged': 'two', 'x-credit-used': '1' },
      { chargedText: 'two', chargedName: 'x-credits-charged' },
    ],
    [
      { 'x-credits-charged': '4', 'x-credit-used': '1' },
      { charged: 4, chargedName: 'x-credits-charged' },
    ],
    [{ 'x-credits-charged': ['6', '7'] }, { charged: 6, chargedName: 'x-credits-charged' }],
    [{ 'x-balance': '5', 'content-length': '12', 'x-credits': '9' }, { remaining: 5 }],
    [
      { 'x-credits-charged': ' 5 ', 'x-credits-remaining': '007' },
      { charged: 5, chargedName: 'x-credits-charged', remaining: 7 },
    ],
    [
      { 'x-credits-charged': '', 'x-credits-remaining': '-1' },
      { chargedText: '', chargedName: 'x-credits-charged', remaining: -1 },
    ],
    // RateLimit headers are about requests, not credits.
    [{ 'ratelimit-remaining': '3', 'ratelimit-policy': '10;w=1' }, {}],
  ])('reads %j', (headers, expected) => {
    expect(readCredits(headers)).toEqual(expected);
  });

  it('reads the names a profile gives first', () => {
    expect(
      readCredits(
        { 'x-units': '2', 'x-credits-charged': '1', 'x-wallet': '40' },
        { charged: 'X-Units', remaining: 'x-wallet' },
      ),
    ).toEqual({
      charged: 2,
      chargedName: 'x-units',
      remaining: 40,
    });
  });
});
