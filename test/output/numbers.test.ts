import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupDigits } from '../../src/output/numbers.js';

describe('groupDigits', () => {
  it('writes numbers as en-US does', () => {
    const en = new Intl.NumberFormat('en-US');
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), fc.double({ noNaN: true })),
        (n) => {
          expect(groupDigits(n)).toBe(en.format(n));
        },
      ),
      { numRuns: 500 },
    );
    expect(groupDigits(1234567)).toBe('1,234,567');
    expect(groupDigits(-1000)).toBe('-1,000');
    expect(groupDigits(999)).toBe('999');
    expect(groupDigits(-0)).toBe('-0');
    expect(groupDigits(1234.5)).toBe('1,234.5');
  });
});
