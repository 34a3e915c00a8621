// A batch reads only its result fields from a lookup body (adaptDomainResult with `fields`). That
// must give the record the general adapter gives, narrowed the way the batch narrows it: each
// field or null, and `domain` the requested one.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adaptDomainResult } from '../../src/api/domains.js';

function narrowed(record: Record<string, unknown>, fields: readonly string[], requested: string) {
  const picked: Record<string, unknown> = {};
  for (const field of fields) {
    picked[field] = field === 'domain' ? (record.domain ?? requested) : (record[field] ?? null);
  }
  return picked;
}

const NAMES = ['domain', 'found', 'code', 'credits', 'company_name', 'country', 'tags', 'record', 'extra'];
const value = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }));
const flat = fc.dictionary(fc.constantFrom(...NAMES), value, { maxKeys: 7 });

describe('adaptDomainResult with fields', () => {
  it('equals the full record narrowed to the fields, flat or nested, found or not', () => {
    fc.assert(
      fc.property(
        flat,
        fc.constantFrom('flat', 'record', 'data', 'company'),
        fc.boolean(),
        fc.subarray(NAMES),
        (members, shape, found, fields) => {
          const body: Record<string, unknown> =
            shape === 'flat' ? { ...members, found } : { found, domain: 'x.example', [shape]: members };
          const requested = 'asked.example';
          let full: ReturnType<typeof adaptDomainResult> | undefined;
          try {
            full = adaptDomainResult(body, requested, { charged: 1 });
          } catch {
            expect(() => adaptDomainResult(body, requested, { charged: 1 }, fields)).toThrow();
            return;
          }
          const picked = adaptDomainResult(body, requested, { charged: 1 }, fields);
          expect(picked.found).toBe(full.found);
          expect(picked.domain).toBe(full.domain);
          expect(picked.reported).toEqual(full.reported);
          expect(picked.productCharges).toEqual(full.productCharges);
          if (full.found) expect(picked.record).toEqual(narrowed(full.record, fields, requested));
          else expect(picked.record).toEqual({});
        },
      ),
      { numRuns: 500 },
    );
  });
});
