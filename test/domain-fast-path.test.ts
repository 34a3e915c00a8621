// normaliseDomain answers plain ASCII domains and plain http(s) URLs, in any case, without the URL
// and UTS #46 machinery, and the common TLDs without tldts; for every input, that shortcut must
// give exactly what the general path gives.
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

// Hosts near the edge in any case, with one or two trailing dots, before the edge of the URL
// shape: schemes that are almost http(s), user info, ports, paths with spaces, quotes, non-ASCII.
const hostEnd = fc.constantFrom(
  'com',
  'org',
  'net',
  'edu',
  'gov',
  'de',
  'co.uk',
  'uk',
  'github.io',
  'Com',
  'dE',
);
const mixedCase = (text: string) =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((flags) => [...text].map((c, i) => (flags[i] ? c.toUpperCase() : c)).join(''));
const host = fc
  .tuple(
    fc.array(label, { minLength: 0, maxLength: 4 }),
    fc.oneof(tld, hostEnd),
    fc.constantFrom('', '', '.', '..'),
  )
  .map(([labels, end, dots]) => `${[...labels, end].join('.')}${dots}`)
  .chain(mixedCase);
const scheme = fc.constantFrom(
  '',
  '',
  'http://',
  'https://',
  'HTTPS://',
  'hTtP://',
  'http:/',
  'https:',
  'htp://',
  'ftp://',
  '//',
  'http://u@',
  'https://www.',
);
const tail = fc.oneof(
  fc.constant(''),
  fc
    .tuple(
      fc.constantFrom(
        '/',
        '?',
        '#',
        '\\',
        ':',
        ':8080',
        ':8080/',
        '@',
        ' ',
        '"',
        '>',
        "/'",
        '/x y',
        '/ä',
        '/\t',
        '/x\u200b',
      ),
      fc.string({ maxLength: 6 }),
    )
    .map(([a, b]) => a + b),
);
const nearUrl = fc.tuple(scheme, host, tail).map(([a, b, c]) => a + b + c);

describe('normaliseDomain: the plain-domain fast path', () => {
  it('agrees with the general path on URLs and hosts in any case near its edge', () => {
    fc.assert(
      fc.property(nearUrl, (input) => {
        expect(normaliseDomain(input)).toEqual(normaliseDomainSlow(input));
      }),
      { numRuns: 5000 },
    );
  });

  it('finds the registrable domain under the TLDs it answers without tldts as tldts does', () => {
    for (const end of ['com', 'org', 'net', 'edu', 'gov', 'de']) {
      for (const input of [
        `a.${end}`,
        `www.${end}`,
        `www.a.${end}`,
        `x.y.z.${end}`,
        `WWW.WWW.B.${end.toUpperCase()}`,
      ]) {
        expect(normaliseDomain(input)).toEqual(normaliseDomainSlow(input));
        expect(normaliseDomain(`https://${input}/p`)).toEqual(normaliseDomainSlow(input));
      }
    }
  });

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
      'HTTPS://WWW.EXCLUDED-1.COM/about',
      'EXCLUDED-2.COM',
      'https://acme.com/"',
      'acme.com/>',
      'acme.com.',
      'http://acme.co.uk',
      'shop.github.io',
      'www.co.uk',
      'com',
      'https://.com',
      '\u017f.com',
      'https://acme.\u212aom/',
      `${'a'.repeat(63)}.com`,
      `${'a'.repeat(64)}.com`,
      `https://${'abcdefghi.'.repeat(25)}com./`,
      `https://${'abcdefghi.'.repeat(25)}comxx/`,
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
