// What the three engine operations share: outcome types, domain normalisation, the field catalog
// as lookups, and the parsing of include / filters / integer parameters into values or problems.
import { domainToASCII } from 'node:url';
import type { FieldEntry } from '../api/types.js';
import { didYouMean } from '../suggest.js';
import { FIELDS } from './catalogs.js';
import type { Company } from './dataset.js';

export type EngineOutcome =
  | { ok: true; body: Record<string, unknown>; charged: number }
  | { ok: false; code: string; detail: string };

export interface Caller {
  plan: 'pro' | 'free';
  balance: number;
}

export type Failure = Extract<EngineOutcome, { ok: false }>;

export const fail = (code: string, detail: string): Failure => ({ ok: false, code, detail });

export function isFailure(value: unknown): value is Failure {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}

/** A caller's text quoted for a detail message, cut short so a huge input cannot bloat the problem. */
export function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}

const LABEL = '(?!-)[a-z0-9-]{1,63}(?<!-)';
const VALID_HOST = new RegExp(`^(?:${LABEL}\\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$`);
const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/**
 * A domain parameter as the service compares it: lower case, IDN as punycode, without scheme,
 * path, port, trailing dot or `www.`; null when it is not a syntactically valid domain.
 */
export function normaliseDomainParam(input: string): string | null {
  let text = input.trim();
  if (text === '' || text.length > 2048) return null;
  const scheme = SCHEME.exec(text);
  if (scheme) {
    if (!/^https?$/i.test(scheme[1])) return null;
    try {
      text = new URL(text).hostname;
    } catch {
      return null;
    }
  } else {
    text = text.split(/[/?#]/, 1)[0];
    const port = /:(\d*)$/.exec(text);
    if (port) text = text.slice(0, port.index);
  }
  if (/[@:[\]\s]/.test(text)) return null;
  const ascii = domainToASCII(text.replace(/\.$/, ''));
  if (!ascii) return null;
  const host = ascii.startsWith('www.') && ascii.split('.').length > 2 ? ascii.slice(4) : ascii;
  return host.length <= 253 && VALID_HOST.test(host) ? host : null;
}

export const FIELD_BY_NAME: ReadonlyMap<string, FieldEntry> = new Map(FIELDS.map((f) => [f.name, f]));
const FIELD_NAMES = FIELDS.map((f) => f.name);
const FILTERS = new Map(FIELDS.filter((f) => f.filter).map((f) => [f.filter?.name ?? f.name, f]));
const FILTER_NAMES = [...FILTERS.keys()];
export const FACETS = FIELDS.filter((f) => f.facet).map((f) => f.name);

/** A company's value of a catalog field; a missing value (including an empty tech list) is null. */
export function fieldValue(c: Company, field: string): unknown {
  const value = (c as unknown as Record<string, unknown>)[field];
  if (Array.isArray(value)) return value.length > 0 ? [...value] : null;
  return value ?? null;
}

/** A row with `domain` first, then the included fields in the order asked. */
export function rowOf(c: Company, include: readonly string[]): Record<string, unknown> {
  const row: Record<string, unknown> = { domain: c.domain };
  for (const field of include) if (field !== 'domain') row[field] = fieldValue(c, field);
  return row;
}

/** Comma-separated names: trimmed, empty pieces dropped, duplicates kept once. */
export function splitList(raw: string): string[] {
  return [...new Set(raw.split(',').map((s) => s.trim()))].filter((s) => s !== '');
}

export const DEFAULT_ROW_FIELDS = ['domain', 'company_name', 'country', 'site_category'];

/** `include` of search and lookalike: known fields that the capability exposes. */
export function parseRowInclude(raw: unknown, capability: 'search' | 'lookalike'): string[] | Failure {
  if (raw === undefined || raw === null) return DEFAULT_ROW_FIELDS;
  if (typeof raw !== 'string') return fail('invalid_request', 'include must be a comma-separated string');
  const names = splitList(raw);
  if (names.length === 0) return DEFAULT_ROW_FIELDS;
  for (const name of names) {
    const entry = FIELD_BY_NAME.get(name);
    if (!entry) return fail('invalid_field', `unknown field ${quote(name)}${didYouMean(name, FIELD_NAMES)}`);
    if (!entry.capabilities?.includes(capability))
      return fail(
        'field_not_available_for_capability',
        `${name} (product ${entry.product}) is not available from ${capability}; request it from /api/domains with products=${entry.product}`,
      );
  }
  return names;
}

/** Filter name -> accepted values. */
export type Filters = Map<string, Set<string>>;

export const MAX_FILTER_VALUES = 200;

/** `filters`: JSON text (GET) or an object (POST body) of filter name -> value or array of values. */
export function parseFilters(
  raw: unknown,
  via: 'GET' | 'POST',
): { filters: Filters; values: number } | Failure {
  const filters: Filters = new Map();
  if (raw === undefined || raw === null) return { filters, values: 0 };
  let parsed: unknown = raw;
  if (via === 'GET') {
    if (typeof raw !== 'string') return fail('invalid_request', 'filters must be JSON text');
    if (raw.trim() === '') return { filters, values: 0 };
    try {
      parsed = JSON.parse(raw);
    } catch {
      return fail('invalid_request', 'filters is not valid JSON');
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return fail('invalid_request', 'filters must be a JSON object of filter name -> array of values');
  let values = 0;
  for (const [name, value] of Object.entries(parsed)) {
    const list = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(list) || list.length === 0 || !list.every((v) => typeof v === 'string'))
      return fail('invalid_request', `filter ${quote(name)} must be a non-empty array of strings`);
    const entry = FILTERS.get(name);
    if (!entry?.filter)
      return fail('invalid_filter', `unknown filter ${quote(name)}${didYouMean(name, FILTER_NAMES)}`);
    values += list.length;
    if (values > MAX_FILTER_VALUES)
      return fail('search_limit_exceeded', `more than ${MAX_FILTER_VALUES} filter values in total`);
    const accepted = acceptedValues(entry, list as string[]);
    if (typeof accepted === 'string')
      return fail(
        'invalid_filter',
        `${quote(accepted)} is not a value of filter ${name}${didYouMean(accepted, entry.filter.values ?? [])}`,
      );
    filters.set(entry.name, new Set(accepted));
  }
  return { filters, values };
}

/** Values as stored (free values match case-insensitively), or the first value not in the enum. */
function acceptedValues(entry: FieldEntry, list: string[]): string[] | string {
  if (entry.filter?.value_source !== 'enum') return list.map((v) => v.toLowerCase());
  const allowed = new Set(entry.filter.values ?? []);
  return list.find((v) => !allowed.has(v)) ?? list;
}

/** Whether a company passes every filter (a list field passes when it has any of the values). */
export function passesFilters(c: Company, filters: Filters): boolean {
  for (const [name, accepted] of filters) {
    const free = FIELD_BY_NAME.get(name)?.filter?.value_source !== 'enum';
    const value = (c as unknown as Record<string, unknown>)[name];
    const test = (v: unknown) => typeof v === 'string' && accepted.has(free ? v.toLowerCase() : v);
    if (Array.isArray(value) ? !value.some(test) : !test(value)) return false;
  }
  return true;
}

/** An integer parameter (a JSON number or decimal text) within [min, max], or its default. */
export function parseBoundedInt(
  raw: unknown,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number | Failure {
  if (raw === undefined || raw === null || raw === '') return fallback;
  let value: number;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && /^\s*\d{1,9}\s*$/.test(raw)) value = Number(raw);
  else return fail('invalid_request', `${name} must be an integer between ${min} and ${max}`);
  if (!Number.isInteger(value) || value < min || value > max)
    return fail('invalid_request', `${name} must be an integer between ${min} and ${max}`);
  return value;
}

/** upgrade_required when the caller's plan may not use one of these fields. */
export function planFailure(caller: Caller, fields: Iterable<string>, use: string): Failure | null {
  for (const name of fields) {
    const entry = FIELD_BY_NAME.get(name);
    if (entry && !entry.plans.includes(caller.plan))
      return fail(
        'upgrade_required',
        `${use} ${name} needs the ${entry.product} product, which the ${caller.plan} plan does not include`,
      );
  }
  return null;
}
