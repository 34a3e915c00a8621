// normaliseDomain answers plain lower-case ASCII domains without the URL and UTS #46 machinery;
// for every input, that shortcut must give exactly what the general path gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseDomain, normaliseDomainSlow } from '../src/domain.js';

// Inputs close to the fast path's edge: labels of any length, digits-only and hex-looking labels,
// hyphens at the edges, empty labels, punycode prefixes, a trailing dot.
const label = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'b', 'x', 'n', '0', '7', '-', 'w'), maxLength: 8 }),
  fc.constantFrom('www', 'xn--bcher-kva', 'xn--', '0x7f', '127', '1', 'ab--cd', '-a', 'a-', ''),
  fc.string({ unit: fc.constantFrom('a', 'z', '9'), minLength: 60, maxLength: 70 }),
);
const tld = fc.oneof(
  fc.constantFrom('com', 'co.uk', 'example', 'com.', 'c', 'xn--p1ai', '1', 'github.io', 'uk'),
  fc.string({ unit: fc.constantFrom('a', 'q', 'z'), minLength: 1, maxLength: 70 }),
);
const nearPlain = fc
  .tuple(fc.array(label, { minLength: 0, maxLength: 5 }), tld)
  .map(([labels, end]) => [...labels, end].join('.'));

describe('normaliseDomain: the plain-domain fast path', () => {
  it('agrees with the general path on inputs near its edge', () => {
    fc.assert(
      fc.property(nearPlain, (input) => {
        expect(normaliseDomain(input)).toEqual(normaliseDomainSlow(input));
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees with the general path on any domain and on arbitrary text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.domain(), fc.string(), fc.webUrl()), (input) => {
        expect(normaliseDomain(input)).toEqual(normaliseDomainSlow(input));
      }),
      { numRuns: 800 },
    );
  });

  it('agrees on the awkward cases by name', () => {
    for (const input of [
      '0x7f.1',
      '1.2.3.4',
      'a..com',
      'www.com',
      'www.www.acme.com',
      'co.uk',
      'xn--zz.com',
    ]) {
      expect(normaliseDomain(input)).toEqual(normaliseDomainSlow(input));
    }
    const long = `${'x.'.repeat(130)}com`;
    expect(normaliseDomain(long)).toEqual(normaliseDomainSlow(long));
  });
});
