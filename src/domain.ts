// One rule for what counts as a company domain, shared by enrichment, lookalike seeds and the batch
// reader. It mirrors the service's own normalisation (docs/contract.md: lower case, `www.` stripped,
// an http(s) URL reduced to its host) so the client dedupes exactly what the service would charge
// for once, and rejects locally what the service would answer with `invalid_request`.
//
// Decisions the spec leaves open:
// - An e-mail address (`jo@acme.com`, `mailto:jo@acme.com`) is rejected, not reduced to its
//   domain: the row most likely sits in the wrong column, and guessing would charge for a
//   lookup nobody asked for.
// - Only http and https URLs are accepted; a URL's user info, port, path, query and fragment
//   are dropped.
// - Subdomains other than `www` are kept (`shop.acme.com` stays): they may be a different company.
//   Leading `www.` labels are stripped only while a registrable domain remains (`www.com` stays).
// - A TLD missing from the public suffix list (`no-such-company.example`) is accepted as long as
//   it is alphabetic: the service answers `found: false` for it at no cost.
import { domainToASCII } from 'node:url';
import { parse } from 'tldts';

export type DomainResult = { ok: true; domain: string } | { ok: false; reason: string };

const MAX_DOMAIN_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;
const SCHEME = /^([a-z][a-z0-9+.-]*):(\/\/)?/i;
// Whitespace JavaScript's trim() keeps: zero-width space, joiners, word joiner.
const INVISIBLE_EDGES = /^[\s\u200b-\u200d\u2060]+|[\s\u200b-\u200d\u2060]+$/g;
const QUOTES = new Set(['"', "'", '`', '\u2018', '\u2019', '\u201c', '\u201d', '<', '>']);

function fail(reason: string): DomainResult {
  return { ok: false, reason };
}

/** Strips surrounding whitespace and quotes, repeatedly (`" 'acme.com' "`). */
function unwrap(input: string): string {
  let text = input.replace(INVISIBLE_EDGES, '');
  while (text.length > 0 && (QUOTES.has(text[0]) || QUOTES.has(text[text.length - 1]))) {
    let start = 0;
    let end = text.length;
    if (QUOTES.has(text[0])) start = 1;
    if (end > start && QUOTES.has(text[end - 1])) end -= 1;
    text = text.slice(start, end).replace(INVISIBLE_EDGES, '');
  }
  return text;
}

/** The host part of a domain or URL, or a reason why there is none. */
function extractHost(text: string): { host: string } | { reason: string } {
  let rest = text;
  const scheme = SCHEME.exec(rest);
  if (scheme) {
    const name = scheme[1].toLowerCase();
    if (name === 'mailto') return { reason: 'looks like an e-mail address' };
    // `acme.com:8080` parses as scheme `acme.com` without the slashes; treat it as host:port.
    if (name !== 'http' && name !== 'https') {
      if (scheme[2] || !/^\d+(?:[/?#]|$)/.test(rest.slice(scheme[0].length))) {
        return { reason: `not a domain or an http(s) URL (scheme "${name}:")` };
      }
    } else {
      rest = rest.slice(scheme[0].length);
    }
  } else if (rest.startsWith('//')) {
    rest = rest.slice(2);
  }
  const end = rest.search(/[/?#\\]/);
  let authority = end === -1 ? rest : rest.slice(0, end);
  const at = authority.lastIndexOf('@');
  if (at !== -1) {
    if (!scheme) return { reason: 'looks like an e-mail address' };
    authority = authority.slice(at + 1);
  }
  if (authority.startsWith('[')) return { reason: 'is an IP address, not a domain' };
  const port = /:(\d*)$/.exec(authority);
  if (port) authority = authority.slice(0, port.index);
  if (authority.includes(':')) return { reason: 'contains ":" where a domain cannot' };
  return { host: authority };
}

/**
 * Reduces a domain or URL to the lower-case ASCII host the service looks up
 * (`https://www.Example.com/path?q` -> `example.com`), or says why it is not a company domain.
 */
export function normaliseDomain(input: string): DomainResult {
  const text = unwrap(input);
  if (text === '') return fail('is empty');
  if (/\s/.test(text)) return fail('contains spaces');
  const extracted = extractHost(text);
  if ('reason' in extracted) return fail(extracted.reason);
  let host = extracted.host;
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') return fail('has no host name');
  const ascii = asciiHost(host);
  if (ascii === '') return fail('is not a valid domain name');
  return checkAscii(ascii);
}

/** ASCII labels ending in a label of letters, no `xn--`: hosts UTS #46 maps to lower case only. */
const PLAIN_HOST = /^(?!.*xn--)(?:[a-z0-9-]+\.)*[a-z]+$/i;

/**
 * UTS #46 mapping as URLs do it (domainToASCII): case folding, full-width dots, IDN labels to
 * punycode; '' when invalid. Most hosts are plain ASCII, for which it only lowers the case; they
 * skip the call into C++ (test/domain.test.ts holds both ways to the same answers).
 */
export function asciiHost(host: string): string {
  return PLAIN_HOST.test(host) ? host.toLowerCase() : domainToASCII(host);
}

// Hosts reaching tldts are checked already: no need for its own extraction and validation.
const TLDTS_OPTIONS = { allowPrivateDomains: false, extractHostname: false } as const;

/**
 * A host that passes every check of hostProblem, as one pattern: at most 253 characters, two
 * labels or more of letters, digits and inner hyphens, 63 at most each, the last a TLD.
 */
const VALID_HOST =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{0,58}[a-z0-9])$/;

/** Whether a host in lower-case ASCII form passes every check of hostProblem, in one test. */
export function passesHostChecks(ascii: string): boolean {
  return VALID_HOST.test(ascii);
}

/**
 * Why a host in lower-case ASCII form is not a domain, by the first check it fails; undefined
 * when it passes them all, which is exactly when passesHostChecks (test/domain.test.ts).
 */
export function hostProblem(ascii: string): string | undefined {
  // The WHATWG host parser turns `0x7f.1` and friends into dotted IPv4.
  if (/^[\d.]+$/.test(ascii)) return 'is an IP address, not a domain';
  const labels = ascii.split('.');
  if (labels.length < 2) return 'is a single name, not a domain (no public suffix)';
  if (ascii.length > MAX_DOMAIN_LENGTH) return `is longer than ${MAX_DOMAIN_LENGTH} characters`;
  for (const label of labels) {
    if (label.length > MAX_LABEL_LENGTH) return `has a label longer than ${MAX_LABEL_LENGTH} characters`;
    if (!LABEL.test(label)) return 'contains characters a domain cannot have';
  }
  if (!TLD.test(labels[labels.length - 1])) return 'does not end in a valid top-level domain';
  return undefined;
}

/** The checks on a host already in lower-case ASCII form. */
function checkAscii(ascii: string): DomainResult {
  // Most hosts pass: one pattern says so; only a host that does not is taken apart, to say why.
  const problem = passesHostChecks(ascii) ? undefined : hostProblem(ascii);
  if (problem !== undefined) return fail(problem);
  const parsed = parse(ascii, TLDTS_OPTIONS);
  if (parsed.isIp) return fail('is an IP address, not a domain');
  if (!parsed.domain) return fail('is a public suffix, not a company domain');
  return { ok: true, domain: stripWww(ascii, parsed.subdomain ?? '') };
}

/** Drops leading `www.` labels that belong to the subdomain (so `www.com` itself stays). */
function stripWww(domain: string, subdomain: string): string {
  let result = domain;
  let sub = subdomain;
  while (sub === 'www' || sub.startsWith('www.')) {
    result = result.slice(4);
    sub = sub === 'www' ? '' : sub.slice(4);
  }
  return result;
}
