import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBudget } from '../src/spend/budget.js';

describe('createBudget', () => {
  it('refuses a reservation that would pass the limit and leaves the state unchanged', () => {
    const budget = createBudget(5);
    const a = budget.tryReserve(2);
    const b = budget.tryReserve(2);
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(budget.tryReserve(2)).toBeNull();
    expect(budget.reserved).toBe(4);
    expect(budget.tryReserve(1)).not.toBeNull();
    expect(budget.reserved).toBe(5);
  });

  it('frees the unused part of a reservation when the answer costs less', () => {
    const budget = createBudget(3);
    const a = budget.tryReserve(2)!;
    expect(budget.tryReserve(2)).toBeNull();
    budget.settle(a, 0); // not found: nothing charged
    expect(budget.spent).toBe(0);
    expect(budget.reserved).toBe(0);
    expect(budget.tryReserve(2)).not.toBeNull();
  });

  it('keeps the reservation of an attempt without an answer: a retry must reserve again', () => {
    const budget = createBudget(5);
    const a = budget.tryReserve(2)!;
    budget.settleUnknown(a);
    expect(budget.reserved).toBe(0);
    expect(budget.possiblyCharged).toBe(2);
    expect(budget.spent).toBe(0);
    const retry = budget.tryReserve(2)!;
    budget.settleUnknown(retry);
    // 4 possibly charged: one more request of 2 would pass the cap, and nothing in flight can free it.
    expect(budget.tryReserve(2)).toBeNull();
    expect(budget.isExhaustedFor(2)).toBe(true);
    const b = budget.tryReserve(1)!;
    budget.settle(b, 1);
    expect(budget.spent + budget.possiblyCharged).toBe(5);
    // Settled once only, whichever way.
    budget.settleUnknown(b);
    budget.settle(a, 0);
    expect(budget.spent).toBe(1);
    expect(budget.possiblyCharged).toBe(4);
  });

  it('settles a reservation once only', () => {
    const budget = createBudget(10);
    const a = budget.tryReserve(4)!;
    budget.settle(a, 3);
    budget.settle(a, 3);
    expect(budget.spent).toBe(3);
    expect(budget.reserved).toBe(0);
  });

  it('is exhausted for an amount only when nothing in flight could make room', () => {
    const budget = createBudget(3);
    const a = budget.tryReserve(2)!;
    expect(budget.isExhaustedFor(2)).toBe(false);
    budget.settle(a, 2);
    expect(budget.isExhaustedFor(2)).toBe(true);
    expect(budget.isExhaustedFor(1)).toBe(false);
  });

  it('never refuses without a limit', () => {
    const budget = createBudget();
    for (let i = 0; i < 100; i++) expect(budget.tryReserve(1000)).not.toBeNull();
    expect(budget.isExhaustedFor(1e12)).toBe(false);
  });

  it('rejects a negative limit', () => {
    expect(() => createBudget(-1)).toThrow(RangeError);
  });

  it('never lets reserved plus spent pass the limit, whatever the order of operations', () => {
    // Each step either reserves a worst case or settles one open reservation with an actual cost
    // at most its worst case (the contract: a request never costs more than the sum of its products).
    const step = fc.oneof(
      fc.record({ kind: fc.constant('reserve' as const), amount: fc.integer({ min: 0, max: 7 }) }),
      fc.record({
        kind: fc.constant('settle' as const),
        pick: fc.nat(),
        fraction: fc.double({ min: 0, max: 1, noNaN: true }),
        // No answer: the whole reservation stays as possibly charged.
        unknown: fc.boolean(),
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.array(step, { maxLength: 200 }), (limit, steps) => {
        const budget = createBudget(limit);
        const open: Array<ReturnType<typeof budget.tryReserve> & object> = [];
        for (const s of steps) {
          if (s.kind === 'reserve') {
            const r = budget.tryReserve(s.amount);
            if (r) open.push(r);
          } else if (open.length > 0) {
            const [r] = open.splice(s.pick % open.length, 1);
            if (s.unknown) budget.settleUnknown(r);
            else budget.settle(r, Math.floor(r.amount * s.fraction));
          }
          expect(budget.spent + budget.possiblyCharged + budget.reserved).toBeLessThanOrEqual(limit);
        }
        for (const r of open) budget.settle(r, r.amount);
        expect(budget.spent + budget.possiblyCharged).toBeLessThanOrEqual(limit);
        expect(budget.reserved).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
