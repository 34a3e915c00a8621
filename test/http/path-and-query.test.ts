// pathAndQuery builds a call's path and query by concatenation; it must spell them exactly as
// the URL parser does (buildUrl), for any base prefix, path and query.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildUrl, pathAndQuery } from '../../src/http/target.js';

function viaUrl(base: URL, path: string, query?: Record<string, string | number | boolean | undefined>) {
  const url = buildUrl(base, path, query);
  return `${url.pathname}${url.search}`;
}

const bases = fc.constantFrom(
  'https://api.example.com',
  'https://api.example.com/',
  'http://127.0.0.1:4010/v1/',
  'https://example.com/prefix//',
);
// Characters that stress the URL parser: dots, percent signs, spaces, slashes, non-ASCII.
const pathText = fc.string({
  unit: fc.constantFrom('a', 'Z', '0', '.', '-', '%', '2', 'e', '/', ' ', '?', '#', '\\', 'é', '~', "'", '@'),
  maxLength: 12,
});
const queryValue = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(undefined),
);

describe('pathAndQuery', () => {
  it('agrees with buildUrl for any path and query', () => {
    fc.assert(
      fc.property(
        bases,
        pathText,
        fc.dictionary(fc.string({ maxLength: 5 }), queryValue, { maxKeys: 4 }),
        (base, path, query) => {
          const url = new URL(base);
          expect(pathAndQuery(url, `/api/${path}`, query)).toBe(viaUrl(url, `/api/${path}`, query));
          expect(pathAndQuery(url, path, query)).toBe(viaUrl(url, path, query));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('agrees with buildUrl for encoded domain lookups', () => {
    fc.assert(
      fc.property(bases, fc.string({ maxLength: 30 }), (base, domain) => {
        const url = new URL(base);
        const path = `/api/domains/${encodeURIComponent(domain)}`;
        const query = { products: 'firmographics,technographics', include: undefined, max_credits: 3 };
        expect(pathAndQuery(url, path, query)).toBe(viaUrl(url, path, query));
      }),
    );
  });

  it('encodes query values as a form does', () => {
    const url = new URL('https://api.example.com/base/');
    expect(pathAndQuery(url, '/api/search', { q: "a b!'()~*", n: 2, x: undefined })).toBe(
      '/base/api/search?q=a+b%21%27%28%29%7E*&n=2',
    );
    expect(pathAndQuery(url, '/api/domains/..', {})).toBe('/base/api/');
  });
});
