// GET/POST /api/search: building the call (GET with query parameters, or POST with a JSON body
// when there are exclusions, as the spec asks) and reading the rows of the response. The reader
// follows docs/contract.md and tolerates other plausible envelopes: rows under another member
// name, a missing total, extra members (kept).
import { Problem, usageError } from '../problem.js';
import type { ApiResponse, Context, Credits, RequestOptions } from '../types.js';
import { catalogRetryHook } from './catalogs.js';
import { countFilterValues, type Filters } from './filters.js';

export type Row = Record<string, unknown>;
export type Operator = 'and' | 'or';

/** The service's limit on a POST body (spec, Limits: 5 MB). */
export const MAX_BODY_BYTES = 5_000_000;
/** Documented maxima (docs/contract.md). */
export const MAX_SEARCH_LIMIT = 1000;
export const MAX_BREAKDOWN_LIMIT = 100;

export interface SearchRequest {
  query?: string;
  operator?: Operator;
  filters: Filters;
  include?: readonly string[];
  limit?: number;
  /** Normalised domains; any at all switches the call to POST. */
  excludeDomains?: readonly string[];
}

function hasFilters(filters: Filters): boolean {
  return countFilterValues(filters) > 0;
}

/** The call for a search; POST with a JSON body when there are exclusions, GET otherwise. */
export function buildSearchCall(req: SearchRequest): RequestOptions {
  const query = req.query?.trim() ? req.query : undefined;
  const include = req.include?.length ? req.include.join(',') : undefined;
  if (req.excludeDomains && req.excludeDomains.length > 0) {
    const body: Record<string, unknown> = {
      query,
      query_operator: req.operator,
      filters: hasFilters(req.filters) ? req.filters : undefined,
      include,
      limit: req.limit,
      exclude_domains: req.excludeDomains,
    };
    // Serialised once: the size check and the request share the text (20,000 exclusions are
    // ~400 KB of JSON).
    const bodyJson = JSON.stringify(body);
    const bytes = Buffer.byteLength(bodyJson, 'utf8');
    if (bytes > MAX_BODY_BYTES) {
      throw usageError(
        `the search body would be ${bytes.toLocaleString('en-US')} bytes; the service accepts at most ${MAX_BODY_BYTES.toLocaleString('en-US')}`,
        'Exclude fewer companies. Nothing was sent.',
      );
    }
    return { method: 'POST', path: '/api/search', body, bodyJson, auth: true };
  }
  return {
    method: 'GET',
    path: '/api/search',
    query: {
      query,
      query_operator: req.operator,
      filters: hasFilters(req.filters) ? JSON.stringify(req.filters) : undefined,
      include,
      limit: req.limit,
    },
    auth: true,
  };
}

export interface BreakdownRequest {
  field: string;
  query?: string;
  operator?: Operator;
  filters: Filters;
  population?: string;
  /** Number of buckets (breakdown_limit). */
  limit?: number;
}

export function buildBreakdownCall(req: BreakdownRequest): RequestOptions {
  return {
    method: 'GET',
    path: '/api/search',
    query: {
      query: req.query?.trim() ? req.query : undefined,
      query_operator: req.operator,
      filters: hasFilters(req.filters) ? JSON.stringify(req.filters) : undefined,
      breakdown: req.field,
      population: req.population,
      breakdown_limit: req.limit,
    },
    auth: true,
  };
}

// ---- reading responses -------------------------------------------------------------------------

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Where a list of rows is looked for, in this order (docs/contract.md, "Open shapes"). */
export const ROW_MEMBERS = ['rows', 'results', 'companies', 'hits', 'items', 'records', 'data', 'matches'];

function asRows(list: unknown[]): Row[] | undefined {
  if (list.every(isPlainObject)) return list as Row[];
  // A bare list of domains is still a list of companies.
  if (list.every((item) => typeof item === 'string')) return list.map((domain) => ({ domain }));
  return undefined;
}

/**
 * Finds the row array of a response: the body itself when it is an array, a known member name
 * (one level of `data`/`result` wrapping allowed), else the first member holding objects, else the
 * one member holding a list (an empty list of rows under a name not known here).
 */
export function findRows(
  body: unknown,
  names: readonly string[] = ROW_MEMBERS,
): { key?: string; rows: Row[] } | undefined {
  if (Array.isArray(body)) {
    const rows = asRows(body);
    return rows ? { rows } : undefined;
  }
  if (!isPlainObject(body)) return undefined;
  for (const name of names) {
    const value = body[name];
    if (Array.isArray(value)) {
      const rows = asRows(value);
      if (rows) return { key: name, rows };
    }
  }
  for (const wrapper of ['data', 'result']) {
    const inner = body[wrapper];
    if (isPlainObject(inner)) {
      const found = findRows(inner, names);
      if (found) return { key: wrapper, rows: found.rows };
    }
  }
  const lists = Object.entries(body).filter(([, value]) => Array.isArray(value)) as [string, unknown[]][];
  for (const [key, value] of lists) {
    if (value.length > 0 && value.every(isPlainObject)) return { key, rows: value as Row[] };
  }
  if (lists.length === 1 && lists[0][1].length === 0) return { key: lists[0][0], rows: [] };
  return undefined;
}

/** A number, or a number sent as text ("30", " 0.25 "); anything else is undefined. */
export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(value)) {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** The first of `names` holding a number (or a number as text). */
export function numberMember(body: Record<string, unknown>, names: readonly string[]): number | undefined {
  for (const name of names) {
    const n = asNumber(body[name]);
    if (n !== undefined) return n;
  }
  return undefined;
}

export interface SearchResult {
  /** The service's total, or the number of rows when it reported none (see totalReported). */
  total: number;
  /** Whether the response carried a total (paging relies on it to know when a segment ends). */
  totalReported: boolean;
  /**
   * The service's own word on whether more rows follow: false for `has_more: false` or a next
   * cursor that is null, true for `has_more: true` or a next cursor; undefined when it says neither.
   */
  more?: boolean;
  rows: Row[];
  /**
   * What -o json prints: the members the client reads under the contract's names (`query`,
   * `query_operator`, `total`, `limit`, `rows`, `credits`), then any other member of the answer.
   */
  document: Record<string, unknown>;
}

const TOTAL = ['total', 'total_count', 'totalCount', 'count', 'total_results', 'hits_total'];
const LIMIT = ['limit', 'page_size', 'per_page', 'size'];
const PAGING = ['meta', 'paging', 'pagination', 'page'];
const NEXT = ['next_cursor', 'next', 'cursor', 'next_page', 'next_page_token'];
/** Members about paging and charging that the document gives under the contract's names. */
const READ_MEMBERS = new Set([...TOTAL, ...LIMIT, ...PAGING, ...NEXT, 'has_more', 'usage']);

/** The rows and total of a search response, or undefined when no row array can be found. */
export function adaptSearchResponse(body: unknown, headerCredits?: Credits): SearchResult | undefined {
  const found = findRows(body);
  if (!found) return undefined;
  const members = isPlainObject(body) ? body : {};
  const paging = PAGING.map((name) => members[name]).find(isPlainObject) ?? {};
  const reported = numberMember(members, TOTAL) ?? numberMember(paging, TOTAL);
  const limit = numberMember(members, LIMIT) ?? numberMember(paging, LIMIT);
  const total = reported ?? found.rows.length;

  const document: Record<string, unknown> = {};
  for (const name of ['query', 'query_operator']) {
    const value = members[name] ?? paging[name];
    if (value !== undefined) document[name] = value;
  }
  document.total = total;
  if (limit !== undefined) document.limit = limit;
  document.rows = found.rows;
  const credits = isPlainObject(members.credits)
    ? members.credits
    : headerCredits?.charged !== undefined
      ? { charged: headerCredits.charged }
      : undefined;
  if (credits) document.credits = credits;
  for (const [name, value] of Object.entries(members)) {
    if (name === found.key || READ_MEMBERS.has(name) || Object.hasOwn(document, name)) continue;
    document[name] = value;
  }
  const result: SearchResult = { total, totalReported: reported !== undefined, rows: found.rows, document };
  const more = moreSignal(members) ?? moreSignal(paging);
  if (more !== undefined) result.more = more;
  return result;
}

/** has_more, or a next cursor (null: the last page). */
function moreSignal(members: Record<string, unknown>): boolean | undefined {
  if (typeof members.has_more === 'boolean') return members.has_more;
  for (const name of NEXT) {
    if (!Object.hasOwn(members, name)) continue;
    const value = members[name];
    if (value === null || value === '' || value === false) return false;
    if (typeof value === 'string' || typeof value === 'number' || isPlainObject(value)) return true;
  }
  return undefined;
}

/** The problem for an answer whose list could not be found: the endpoint and the members looked for. */
export function noListProblem(endpoint: string, what: string, looked: readonly string[]): Problem {
  return new Problem({
    code: 'unexpected_response',
    title: 'Unexpected response',
    detail: `${endpoint}: the answer has no list of ${what} (looked for ${looked.join(', ')}, at the top level or under data or result)`,
    source: 'server',
    retryable: false,
    remedy:
      'company-data does not know this layout of the service: report it with the output of `company-data -v` for the same command (README, "Troubleshooting").',
  });
}

/**
 * Sends a search; an oversized body is refused before anything is sent. `call` passes the caller's
 * abort signal and spinner choice (a paging run draws its own progress).
 */
export async function searchCompanies(
  ctx: Context,
  req: SearchRequest,
  call: Pick<RequestOptions, 'signal' | 'spinner' | 'onRetry'> = {},
): Promise<ApiResponse<unknown>> {
  return ctx.client.request<unknown>({
    ...buildSearchCall(req),
    ...call,
    onRetry: withCatalogHook(ctx, call.onRetry),
  });
}

export async function fetchBreakdown(
  ctx: Context,
  req: BreakdownRequest,
  call: Pick<RequestOptions, 'onRetry'> = {},
): Promise<ApiResponse<unknown>> {
  return ctx.client.request<unknown>({
    ...buildBreakdownCall(req),
    onRetry: withCatalogHook(ctx, call.onRetry),
  });
}

/** The catalog's refresh before a retry, then the caller's own hook (a purchase's). */
function withCatalogHook(
  ctx: Context,
  onRetry: RequestOptions['onRetry'],
): NonNullable<RequestOptions['onRetry']> {
  const catalog = catalogRetryHook(ctx);
  return async (problem, attempt, delayMs) => {
    await catalog(problem, attempt, delayMs);
    await onRetry?.(problem, attempt, delayMs);
  };
}

// ---- breakdowns --------------------------------------------------------------------------------

export interface BreakdownBucket {
  value: string | null;
  count: number;
  /** count / companies with a value (docs/contract.md). */
  share: number;
}

export interface BreakdownResult {
  field?: string;
  population?: string;
  segment: { description?: string; size?: number };
  coverage: { with_value?: number; missing?: number; ratio?: number };
  buckets: BreakdownBucket[];
  other?: { buckets?: number; count: number };
  /** What -o json prints: the breakdown object with the members above normalised. */
  document: Record<string, unknown>;
}

export const BUCKET_MEMBERS = ['buckets', 'values', 'rows', 'items', 'results', 'counts'];

function stringOrNull(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : String(value);
}

/** A share as a ratio: `share`/`ratio` as given, or a percentage over 100 (to 4 decimals, as shares are). */
function shareOf(raw: Row): number | undefined {
  const share = numberMember(raw, ['share', 'ratio', 'fraction']);
  if (share !== undefined) return share;
  const percent = numberMember(raw, ['percent', 'percentage', 'pct']);
  return percent === undefined ? undefined : Math.round(percent * 100) / 10_000;
}

const COUNT = ['count', 'doc_count', 'n', 'size', 'companies'];

function readBucket(raw: Row): { value: string | null; count: number; share?: number } | undefined {
  const count = numberMember(raw, COUNT);
  if (count === undefined) return undefined;
  const valueKey = ['value', 'key', 'name', 'label'].find((k) => k in raw);
  return { value: stringOrNull(valueKey ? raw[valueKey] : null), count, share: shareOf(raw) };
}

/**
 * Buckets as a list of objects, or as a map from value to a count or to the bucket's figures
 * (`{ "US": 301 }`, `{ "US": { "count": 301, "percent": 40.68 } }`).
 */
function findBuckets(inner: Row): { key?: string; rows: Row[] } | undefined {
  for (const name of BUCKET_MEMBERS) {
    const map = inner[name];
    if (!isPlainObject(map)) continue;
    const rows: Row[] = [];
    for (const [value, figures] of Object.entries(map)) {
      if (isPlainObject(figures)) rows.push({ ...figures, value });
      else if (asNumber(figures) !== undefined) rows.push({ value, count: figures });
      else return undefined;
    }
    return { key: name, rows };
  }
  return findRows(inner, BUCKET_MEMBERS);
}

/** The object holding a breakdown: the body, or `breakdown`/`result`/`data` inside it (twice at most). */
function breakdownOf(body: Row): Row {
  let inner = body;
  for (let depth = 0; depth < 2; depth++) {
    const next = [inner.breakdown, inner.result, inner.data].find(isPlainObject);
    if (!next) break;
    inner = next;
  }
  return inner;
}

/** The breakdown of a response, or undefined when no bucket list can be found. */
export function adaptBreakdownResponse(body: unknown): BreakdownResult | undefined {
  if (!isPlainObject(body)) return undefined;
  const inner = breakdownOf(body);
  const found = findBuckets(inner);
  if (!found) return undefined;
  const read = found.rows.map(readBucket);
  if (read.some((b) => b === undefined)) return undefined;
  const buckets = read as { value: string | null; count: number; share?: number }[];

  const segmentRaw = isPlainObject(inner.segment) ? inner.segment : {};
  const coverageRaw = isPlainObject(inner.coverage) ? inner.coverage : {};
  const otherRaw = isPlainObject(inner.other) ? inner.other : undefined;
  const otherCount = otherRaw ? numberMember(otherRaw, ['count', 'companies', 'doc_count']) : undefined;
  const other =
    otherRaw && otherCount !== undefined && otherCount > 0
      ? { buckets: numberMember(otherRaw, ['buckets', 'values', 'keys']), count: otherCount }
      : undefined;

  const sum = buckets.reduce((n, b) => n + b.count, 0) + (other?.count ?? 0);
  const missing = numberMember(coverageRaw, ['missing']) ?? numberMember(inner, ['missing']);
  const size =
    numberMember(segmentRaw, ['size', 'total', 'count', 'companies']) ??
    numberMember(inner, ['size', 'total']) ??
    (missing !== undefined ? sum + missing : undefined);
  const withValue =
    numberMember(coverageRaw, ['with_value', 'withValue', 'present']) ??
    (size !== undefined && missing !== undefined ? size - missing : sum);
  const ratio = numberMember(coverageRaw, ['ratio']) ?? (size ? withValue / size : undefined);
  const description =
    typeof segmentRaw.description === 'string'
      ? segmentRaw.description
      : typeof inner.description === 'string'
        ? inner.description
        : undefined;
  const field = [inner.field, inner.facet, inner.breakdown].find((v) => typeof v === 'string') as
    | string
    | undefined;

  const result: BreakdownResult = {
    field,
    population: typeof inner.population === 'string' ? inner.population : undefined,
    segment: { description, size },
    coverage: { with_value: withValue, missing, ratio },
    buckets: buckets.map((b) => ({
      value: b.value,
      count: b.count,
      share: b.share ?? (withValue ? b.count / withValue : 0),
    })),
    other,
    document: {},
  };
  // The members read, under the contract's names (docs/contract.md), whatever the layout.
  result.document = {
    field: result.field,
    population: result.population,
    segment: result.segment,
    coverage: result.coverage,
    buckets: result.buckets,
    other: other ?? null,
  };
  return result;
}
