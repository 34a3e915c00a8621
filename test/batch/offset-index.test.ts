import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OffsetIndex } from '../../src/batch/offset-index.js';

describe('OffsetIndex', () => {
  it('behaves like a Map<string, number> for any sequence of sets', () => {
    const key = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.domain(),
      fc.integer({ min: 0, max: 300 }).map((n) => `d${n}.com`),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(key, fc.nat({ max: 2 ** 40 })), { maxLength: 400 }),
        fc.array(key, { maxLength: 50 }),
        (sets, probes) => {
          const index = new OffsetIndex();
          const model = new Map<string, number>();
          for (const [k, offset] of sets) {
            index.set(k, offset);
            model.set(k, offset);
          }
          expect(index.size).toBe(model.size);
          for (const k of [...model.keys(), ...probes]) {
            expect(index.get(k)).toBe(model.get(k));
            expect(index.has(k)).toBe(model.has(k));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('keeps every key through many resizes, offsets beyond 32 bits included', () => {
    const index = new OffsetIndex();
    const count = 50_000;
    for (let i = 0; i < count; i++) index.set(`company-${i}.example`, i * 100_003);
    expect(index.size).toBe(count);
    for (let i = 0; i < count; i += 7) expect(index.get(`company-${i}.example`)).toBe(i * 100_003);
    expect(index.get('company-50000.example')).toBeUndefined();
    index.set('company-1.example', 2 ** 45);
    expect(index.get('company-1.example')).toBe(2 ** 45);
    expect(index.size).toBe(count);
  });
});
