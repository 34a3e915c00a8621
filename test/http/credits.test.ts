import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readCredits, scanCredits } from '../../src/http/credits.js';

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
  ])('reads %j', (headers, expected) => {
    expect(readCredits(headers)).toEqual(expected);
  });
});

describe('readCredits shortcut', () => {
  // Header names as the client hands them over: lower-case, each once.
  it('agrees with the scan of every header', () => {
    const name = fc.constantFrom(
      'x-credits-charged',
      'x-credits-remaining',
      'x-credit-cost',
      'credits-left',
      'content-length',
    );
    const value = fc.oneof(
      fc.nat().map(String),
      fc.constantFrom(' 5 ', '+3', '007', '1.5', 'two', '', '9'.repeat(16), '-1'),
    );
    fc.assert(
      fc.property(fc.dictionary(name, value), (headers) => {
        expect(readCredits(headers)).toEqual(scanCredits(headers));
      }),
      { numRuns: 500 },
    );
  });
});
