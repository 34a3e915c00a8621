// GET/POST /api/search: building the call (GET with query parameters, or POST with a JSON body
// when there are exclusions, as the spec asks) and reading the rows of the response. The reader
// follows docs/contract.md and tolerates other plausible envelopes: rows under another member
// name, a missing total, extra members (kept).
import { usageError } from '../problem.js';
import type { ApiResponse, Context, Credits, RequestOptions } from '../types.js';
import { catalogRetryHook } from './catalogs.js';
import { countFilterValues, type Filters } from './filters.js';
import { findRows, flattenGroups, isPlainObject, numberMember, type Row } from './read.js';

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

export {
  adaptBreakdownResponse,
  type BreakdownBucket,
  type BreakdownResult,
  BUCKET_MEMBERS,
} from './breakdown.js';
export {
  asNumber,
  findRows,
  isPlainObject,
  noListProblem,
  numberMember,
  ROW_MEMBERS,
  type Row,
} from './read.js';
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
  const listed = findRows(body);
  if (!listed) return undefined;
  const found = { key: listed.key, rows: withoutGroups(listed.rows) };
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

/** Rows whose fields come grouped by product, as a record's may: each read flat (no JSON object in a CSV cell). */
function withoutGroups(rows: Row[]): Row[] {
  if (!rows.some((row) => Object.values(row).some(isPlainObject))) return rows;
  return rows.map((row) => flattenGroups(row, () => true));
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
