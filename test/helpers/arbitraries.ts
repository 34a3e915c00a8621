// Text arbitraries shared by the property tests: any code point, URL paths and http(s) URLs.
// fast-check's own `string({ unit: 'binary' })`, `webUrl()` and `webPath()` first map every code
// point back to its index (for shrinking), about 1.5 s of CPU in each worker that builds one; these
// are built from parts that cost nothing to set up, and keep what the tests need of them: lone
// surrogates and astral characters, percent escapes valid and not, user info, ports, IP hosts,
// queries and fragments.
import fc from 'fast-check';

/** Strings of any code points, lone surrogates included (what `unit: 'binary'` gives). */
export const anyCodePointText = fc.string({
  unit: fc.integer({ min: 0, max: 0x10ffff }).map((point) => String.fromCodePoint(point)),
});

const urlChar = fc.constantFrom(
  ..."aZ09-._~!$&'()*+,;=:@",
  '%20',
  '%2F',
  '%25',
  '%C3%A9',
  '%F0%9F%98%80',
  '%',
  '%z',
  'é',
  ' ',
);
const urlPart = fc.string({ unit: urlChar, maxLength: 8 });

/** A URL path: `/` and segments of URL characters, percent escapes (some broken) among them. */
export const webPathText = fc
  .array(urlPart, { maxLength: 4 })
  .map((segments) => segments.map((segment) => `/${segment}`).join(''));

/** A `urlPart` between `before` and `after`, or nothing. */
const maybePart = (before: string, after = '') =>
  fc.option(
    urlPart.map((part) => before + part + after),
    { nil: '' },
  );

const authority = fc
  .tuple(
    maybePart('', '@'),
    fc.webAuthority({ withIPv4: true, withIPv6: true, withIPv4Extended: true, withPort: true }),
  )
  .map(([user, host]) => user + host);

/** http(s) URLs: user info, a host (name or IP) and port, a path, a query and a fragment. */
export const webUrlText = fc
  .tuple(fc.constantFrom('http', 'https'), authority, webPathText, maybePart('?'), maybePart('#'))
  .map(([scheme, host, path, query, fragment]) => `${scheme}://${host}${path}${query}${fragment}`);
