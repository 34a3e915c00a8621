// Credit figures, read by meaning. The spec says authenticated answers carry the charged amount and
// the remaining balance in headers, and names neither; the sandbox sends X-Credits-Charged and
// X-Credits-Remaining (docs/contract.md), other services spell them otherwise, and some report
// them in the body too. Any header that mentions credits (or cost, usage, balance) and says which
// of the two it is counts; so does a body member about credits or usage. How a figure that cannot
// be right is settled is decided in src/spend/charges.ts, not here.
import type { Credits } from '../types.js';

const CHARGED_WORDS = /charged|charge|used|cost|spent|consumed/;
const REMAINING_WORDS = /remaining|balance|left|available/;
/** A header is about credits when its name says so. */
const CREDIT_HEADER = /credit|cost|usage|balance|billing/;

function parseCount(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(trimmed)) return undefined;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : undefined;
}

/** Header names a profile gives for a service whose names nothing here recognises. */
export interface CreditNames {
  charged?: string;
  remaining?: string;
}

/**
 * Credits from response headers (names in any case). Names given by the profile win, then the
 * exact X-Credits-* names, then headers recognised by their words. A charge header whose value is
 * not a number is kept as text (`chargedText`): the attempt then counts as possibly charged.
 */
export function readCredits(
  headers: Record<string, string | string[] | undefined>,
  names: CreditNames = {},
): Credits {
  const charged: Array<[rank: number, name: string, text: string]> = [];
  const remaining: Array<[rank: number, name: string, value: number]> = [];
  const given = { charged: names.charged?.toLowerCase(), remaining: names.remaining?.toLowerCase() };
  for (const [rawName, raw] of Object.entries(headers)) {
    const text = Array.isArray(raw) ? raw[0] : raw;
    if (text === undefined) continue;
    const name = rawName.toLowerCase();
    if (name === given.charged) charged.push([0, rawName, text]);
    else if (name === given.remaining) {
      const n = parseCount(text);
      if (n !== undefined) remaining.push([0, rawName, n]);
    } else if (!CREDIT_HEADER.test(name) || (name.startsWith('ratelimit') && !name.includes('credit')))
      continue;
    // "x-credit-balance-used" is ambiguous; charged words are checked first, matching how a
    // header named after what was spent usually reads.
    else if (name === 'x-credits-charged') charged.push([1, rawName, text]);
    else if (name === 'x-credits-remaining') {
      const n = parseCount(text);
      if (n !== undefined) remaining.push([1, rawName, n]);
    } else if (CHARGED_WORDS.test(name)) charged.push([2, rawName, text]);
    else if (REMAINING_WORDS.test(name)) {
      const n = parseCount(text);
      if (n !== undefined) remaining.push([2, rawName, n]);
    }
  }
  const credits: Credits = {};
  const firstCharge = charged.sort((a, b) => a[0] - b[0])[0];
  if (firstCharge) {
    const [, name, text] = firstCharge;
    credits.chargedName = name;
    const n = parseCount(text);
    if (n === undefined) credits.chargedText = text;
    else credits.charged = n;
  }
  const firstRemaining = remaining.sort((a, b) => a[0] - b[0])[0];
  if (firstRemaining) credits.remaining = firstRemaining[2];
  return credits;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Members of a body that are about its cost, not fields of a record. */
const BODY_GROUPS = /^(credits?|usage|billing|cost|meta)$/i;
const BODY_CHARGE = /^(credits_?)?(charged|charge|cost|used|spent|consumed)$|^credits$/i;
const BODY_REMAINING = /^(credits_?)?(remaining|balance|left|available)$/i;
/** At the top of a body, beside a record's fields: only names that cannot be a field's. */
const TOP_CHARGE = /^credits(_?(charged|used|spent|cost))?$|^charged$/i;
const TOP_REMAINING = /^credits_?(remaining|balance|left)$/i;

/** A charge as one part of an answer reported it: where it was read, and the value as sent. */
export interface Figure {
  where: string;
  value: unknown;
}

/** What a body reports of its cost, by meaning: the charge (as sent) and the balance. */
export interface BodyCredits {
  charged: Figure[];
  remaining?: number;
}

/**
 * Credit figures in a body: top-level members named for a charge (`credits_charged`, `charged`,
 * `cost`, a bare number `credits`) and members of a group about credits (`credits`, `usage`,
 * `billing`, `meta`). A record's own fields are never looked at.
 */
export function readBodyCredits(body: unknown): BodyCredits {
  const found: BodyCredits = { charged: [] };
  if (!isObject(body)) return found;
  // One pass over the members (a batch reads every answer): groups about credits are looked
  // into, plain members only when named for a charge or a balance.
  for (const key in body) {
    if (!Object.hasOwn(body, key)) continue;
    const value = body[key];
    if (isObject(value)) {
      if (BODY_GROUPS.test(key)) lookInto(value, `${key}.`, found);
    } else if (!Array.isArray(value)) {
      if (TOP_CHARGE.test(key)) found.charged.push({ where: `body ${key}`, value });
      else if (TOP_REMAINING.test(key)) found.remaining ??= balanceOf(value);
    }
  }
  return found;
}

function balanceOf(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? parseCount(value) : undefined;
  return n !== undefined && Number.isFinite(n) ? n : undefined;
}

function lookInto(group: Record<string, unknown>, path: string, found: BodyCredits): void {
  for (const key in group) {
    if (!Object.hasOwn(group, key)) continue;
    const value = group[key];
    if (typeof value === 'object' && value !== null) continue;
    if (BODY_CHARGE.test(key)) found.charged.push({ where: `body ${path}${key}`, value });
    else if (BODY_REMAINING.test(key)) found.remaining ??= balanceOf(value);
  }
}
