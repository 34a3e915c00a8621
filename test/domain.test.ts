import { domainToASCII } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asciiHost, hostProblem, normaliseDomain, passesHostChecks } from '../src/domain.js';
import { webUrlText } from './helpers/arbitraries.js';

// Lower-case ASCII labels, no leading/trailing hyphen, alphabetic or punycode TLD, <= 253 chars.
const STRICT_DOMAIN =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

describe('normaliseDomain: accepted forms', () => {
  it.each([
    ['example.com', 'example.com'],
    ['https://www.Example.com/path?q', 'example.com'],
    ['HTTP://shop.example.co.uk:8080/', 'shop.example.co.uk'],
    ['https://www.Acme-Shoes.com/about', 'acme-shoes.com'],
    ['  acme.com  ', 'acme.com'],
    ['"acme.com"', 'acme.com'],
    [` "'acme.com'" `, 'acme.com'],
    ['<https://acme.com>', 'acme.com'],
    ['\u200bacme.com\u00a0', 'acme.com'],
    ['acme.com.', 'acme.com'],
    ['ACME.COM', 'acme.com'],
    ['acme.com:8080', 'acme.com'],
    ['acme.com/path#frag', 'acme.com'],
    ['acme.com?utm=1', 'acme.com'],
    ['//acme.com/x', 'acme.com'],
    ['https://user:secret@acme.com/', 'acme.com'],
    ['www.www.acme.com', 'acme.com'],
    ['www2.acme.com', 'www2.acme.com'],
    ['shop.acme.com', 'shop.acme.com'],
    ['www.com', 'www.com'],
    ['Bücher.de', 'xn--bcher-kva.de'],
    ['https://www.Bücher.de/', 'xn--bcher-kva.de'],
    ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['ａｃｍｅ．ｃｏｍ', 'acme.com'],
    ['no-such-company.example', 'no-such-company.example'],
    ['initech.co.uk', 'initech.co.uk'],
    ['HTTPS://WWW.EXCLUDED-1.COM/about', 'excluded-1.com'],
    ['WWW.WWW.B.ORG', 'b.org'],
    ['www.a.de', 'a.de'],
    ['https://x.y.z.gov/p', 'x.y.z.gov'],
    ['http://acme.co.uk', 'acme.co.uk'],
    ['shop.github.io', 'shop.github.io'],
    ['www.co.uk', 'www.co.uk'],
    ['https://acme.com/"', 'acme.com'],
    ['acme.com/>', 'acme.com'],
    ['acme.com\\x', 'acme.com'],
    ['https:acme.com', 'acme.com'],
    ['http://u@acme.com', 'acme.com'],
    ['\u017f.com', 's.com'],
    ['https://acme.\u212aom/', 'acme.kom'],
    [`${'a'.repeat(63)}.com`, `${'a'.repeat(63)}.com`],
    [`https://${'abcdefghi.'.repeat(25)}com./`, `${'abcdefghi.'.repeat(25)}com`],
  ])('%j -> %s', (input, expected) => {
    expect(normaliseDomain(input)).toEqual({ ok: true, domain: expected });
  });
});

describe('normaliseDomain: rejected forms', () => {
  it.each([
    ['', 'is empty'],
    ['   ', 'is empty'],
    ['""', 'is empty'],
    ['acme shoes.com', 'contains spaces'],
    ['jo@acme.com', 'looks like an e-mail address'],
    ['mailto:jo@acme.com', 'looks like an e-mail address'],
    ['MAILTO:jo@acme.com', 'looks like an e-mail address'],
    ['ftp://acme.com', 'not a domain or an http(s) URL (scheme "ftp:")'],
    ['javascript:alert(1)', 'not a domain or an http(s) URL (scheme "javascript:")'],
    ['1.2.3.4', 'is an IP address, not a domain'],
    ['http://10.0.0.1:8080/', 'is an IP address, not a domain'],
    ['0x7f.1', 'is an IP address, not a domain'],
    ['[::1]', 'is an IP address, not a domain'],
    ['https://[2001:db8::1]/', 'is an IP address, not a domain'],
    ['localhost', 'is a single name, not a domain (no public suffix)'],
    ['localhost:3000', 'is a single name, not a domain (no public suffix)'],
    ['acme', 'is a single name, not a domain (no public suffix)'],
    ['co.uk', 'is a public suffix, not a company domain'],
    ['https://', 'has no host name'],
    ['a_b.acme.com', 'contains characters a domain cannot have'],
    ['-acme.com', 'contains characters a domain cannot have'],
    ['acme..com', 'contains characters a domain cannot have'],
    ['acme.c0m', 'does not end in a valid top-level domain'],
    [`${'a'.repeat(64)}.com`, 'has a label longer than 63 characters'],
    [`${'abcdefghi.'.repeat(26)}com`, 'is longer than 253 characters'],
    [`https://${'abcdefghi.'.repeat(25)}comxx/`, 'is longer than 253 characters'],
    [`${'x.'.repeat(130)}com`, 'is longer than 253 characters'],
    ['com', 'is a single name, not a domain (no public suffix)'],
    ['https://.com', 'contains characters a domain cannot have'],
    ['a..com', 'contains characters a domain cannot have'],
    ['acme.com..', 'contains characters a domain cannot have'],
    ['xn--zz.com', 'is not a valid domain name'],
    ['http:/acme.com', 'has no host name'],
    ['htp://acme.com', 'not a domain or an http(s) URL (scheme "htp:")'],
    ['acme.com:', 'not a domain or an http(s) URL (scheme "acme.com:")'],
  ])('%j: %s', (input, reason) => {
    expect(normaliseDomain(input)).toEqual({ ok: false, reason });
  });
});

// Hosts near the edge of what a domain is (labels of any length, digits-only and hex-looking
// labels, hyphens at the edges, empty labels, punycode prefixes, trailing dots, any case) inside
// schemes that are almost http(s), user info, ports, and paths with spaces, quotes, non-ASCII.
const label = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'b', 'x', 'n', '0', '7', '-', 'w'), maxLength: 8 }),
  fc.constantFrom('www', 'xn--bcher-kva', 'xn--', '0x7f', '127', '1', 'ab--cd', '-a', 'a-', ''),
  fc.string({ unit: fc.constantFrom('a', 'z', '9'), minLength: 60, maxLength: 70 }),
);
const tld = fc.oneof(
  fc.constantFrom('com', 'co.uk', 'example', 'com.', 'c', 'xn--p1ai', '1', 'github.io', 'uk', 'de', 'Com'),
  fc.string({ unit: fc.constantFrom('a', 'q', 'z'), minLength: 1, maxLength: 70 }),
);
const mixedCase = (text: string) =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((flags) => [...text].map((c, i) => (flags[i] ? c.toUpperCase() : c)).join(''));
const nearHost = fc
  .tuple(fc.array(label, { maxLength: 5 }), tld, fc.constantFrom('', '', '.', '..'))
  .map(([labels, end, dots]) => `${[...labels, end].join('.')}${dots}`)
  .chain(mixedCase);
const nearScheme = fc.constantFrom(
  '',
  'http://',
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
const nearTail = fc.oneof(
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
      ),
      fc.string({ maxLength: 6 }),
    )
    .map(([a, b]) => a + b),
);
const nearUrl = fc.tuple(nearScheme, nearHost, nearTail).map(([a, b, c]) => a + b + c);

const anyInput = fc.oneof(
  nearUrl,
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.domain(),
  webUrlText,
  fc.domain().map((d) => d.toUpperCase()),
  fc
    .constantFrom('www.', 'WWW.', 'https://www.', 'http://', '"', ' ')
    .chain((prefix) => fc.domain().map((d) => prefix + d)),
);

describe('normaliseDomain: properties', () => {
  it('is idempotent', () => {
    fc.assert(
      fc.property(anyInput, (input) => {
        const first = normaliseDomain(input);
        if (!first.ok) return;
        expect(normaliseDomain(first.domain)).toEqual(first);
      }),
      { numRuns: 2000 },
    );
  });

  it('never yields an invalid domain', () => {
    fc.assert(
      fc.property(anyInput, (input) => {
        const result = normaliseDomain(input);
        if (result.ok) expect(result.domain).toMatch(STRICT_DOMAIN);
        else expect(result.reason.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts the domains fast-check considers valid, unless they are a public suffix', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.domain(), (domain) => {
        const result = normaliseDomain(domain);
        if (result.ok) accepted += 1;
        else expect(result.reason).toMatch(/public suffix|top-level|not a valid domain|characters/);
      }),
      { numRuns: 500 },
    );
    // fc.domain() may produce odd TLDs or punycode; most of its output must still pass.
    expect(accepted).toBeGreaterThan(250);
  });

  it('reduces every URL form of a domain to the domain', () => {
    const urlForm = fc.record({
      scheme: fc.constantFrom('', 'http://', 'https://', 'HTTPS://', '//'),
      www: fc.boolean(),
      upper: fc.boolean(),
      port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
      path: fc.constantFrom('', '/', '/about', '/a/b?x=1&y=2', '?q', '#top', '/p?q=a@b.c'),
      trailingDot: fc.boolean(),
      wrap: fc.constantFrom('', ' ', '"', "'", '\t'),
    });
    fc.assert(
      fc.property(fc.domain(), urlForm, (domain, form) => {
        const expected = normaliseDomain(domain);
        if (!expected.ok) return;
        let host = (form.www ? 'www.' : '') + domain + (form.trailingDot ? '.' : '');
        if (form.upper) host = host.toUpperCase();
        const port = form.port === undefined ? '' : `:${form.port}`;
        const input = `${form.wrap}${form.scheme}${host}${port}${form.path}${form.wrap}`;
        expect(normaliseDomain(input)).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });
});

// The shortcuts normaliseDomain takes for the common case must answer as the long way would.
describe('normaliseDomain: shortcuts', () => {
  // Labels around 63 characters, and hosts around 253 characters long.
  const tldish = fc.constantFrom('com', 'COM', 'xn--p1ai', 'xn--a-', 'c0m');
  const longLabels = fc
    .tuple(fc.array(fc.integer({ min: 61, max: 65 }), { minLength: 1, maxLength: 3 }), tldish)
    .map(([lengths, tld]) => [...lengths.map((n) => 'a'.repeat(n)), tld].join('.'));
  const longHost = fc
    .tuple(fc.integer({ min: 250, max: 256 }), tldish)
    .map(([length, tld]) =>
      [...Array(3).fill('a'.repeat(63)), 'b'.repeat(length - 193 - tld.length), tld].join('.'),
    );
  const host = fc.oneof(
    nearHost,
    longLabels,
    longHost,
    fc.string(),
    fc.domain().map((d) => d.toUpperCase()),
    fc.constantFrom(
      'XN--P1AI.com',
      'a.xn--p1ai',
      'a.XN--',
      'a.0x1F',
      'a.0X',
      'a.1',
      'ａ.com',
      'a.cOm',
      'a.b-',
    ),
  );

  it('maps a host to ASCII exactly as domainToASCII does', () => {
    fc.assert(
      fc.property(host, (h) => {
        expect(asciiHost(h)).toBe(domainToASCII(h));
      }),
      { numRuns: 3000 },
    );
  });

  it('passes a host in one pattern exactly when it passes every check', () => {
    fc.assert(
      fc.property(host, (h) => {
        const ascii = domainToASCII(h);
        expect(passesHostChecks(ascii)).toBe(hostProblem(ascii) === undefined);
      }),
      { numRuns: 3000 },
    );
  });
});
