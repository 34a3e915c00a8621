import { describe, expect, it } from 'vitest';
import { readCredits } from '../../src/http/credits.js';

describe('readCredits', () => {
  it.each([
    [
      { 'x-credits-charged': '2', 'x-credits-remaining': '998' },
      { charged: 2, remaining: 998 },
    ],
    [
      { 'X-Credits-Charged': '0', 'X-Credits-Remaining': '1000000' },
      { charged: 0, remaining: 1_000_000 },
    ],
    [
      { 'x-credit-cost': '5', 'x-credit-balance': '10' },
      { charged: 5, remaining: 10 },
    ],
    [
      { 'ratelimit-credits-used': '3', 'credits-left': '7' },
      { charged: 3, remaining: 7 },
    ],
    [{ 'x-account-credits-remaining': '1.5' }, { remaining: 1.5 }],
    [{ 'x-credits-charged': 'two', 'x-credit-used': '1' }, { charged: 1 }],
    [{ 'x-credits-charged': '4', 'x-credit-used': '1' }, { charged: 4 }],
    [{ 'x-credits-charged': ['6', '7'] }, { charged: 6 }],
    [{ 'x-balance': '5', 'content-length': '12', 'x-credits': '9' }, {}],
    [
      { 'x-credits-charged': ' 5 ', 'x-credits-remaining': '007' },
      { charged: 5, remaining: 7 },
    ],
    [{ 'x-credits-charged': '', 'x-credits-remaining': '-1' }, { remaining: -1 }],
  ])('reads %j', (headers, expected) => {
    expect(readCredits(headers)).toEqual(expected);
  });
});
