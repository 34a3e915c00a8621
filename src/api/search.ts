// GET/POST /api/search: building the call (GET with query parameters, or POST with a JSON body
// when there are exclusions, as the spec asks) and reading the rows of the response. The reader
// follows docs/contract.md and tolerates other plausible envelopes: rows under another member
// name, a missing total, extra members (kept).
import { usageError } from '../problem.js';
import type { ApiResponse, Context, RequestOptions } from '../types.js';
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

const ROW_MEMBERS = ['rows', 'results', 'companies', 'data', 'items'];

function asRows(list: unknown[]): Row[] | undefined {
  if (list.every(isPlainObject)) return list as Row[];
  // A bare list of domains is still a list of companies.
  if (list.every((item) => typeof item === 'string')) return list.map((domain) => ({ domain }));
  return undefined;
}

/**
 * Finds the row array of a response: the body itself when it is an array, a known member name
 * (one level of `data`/`result` wrapping allowed), else the first member holding objects.
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
  for (const [key, value] of Object.entries(body)) {
    if (Array.isArray(value) && value.length > 0 && value.every(isPlainObject))
      return { key, rows: value as Row[] };
  }
  return undefined;
}

export function numberMember(body: Record<string, unknown>, names: readonly string[]): number | undefined {
  for (const name of names) {
    const value = body[name];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  }
  return undefined;
}

export interface SearchResult {
  /** The service's total, or the number of rows when it reported none (see totalReported). */
  total: number;
  /** Whether the response carried a total (paging relies on it to know when a segment ends). */
  totalReported: boolean;
  rows: Row[];
  /** What -o json prints: the response with its rows under `rows` and a total always present. */
  document: Record<string, unknown>;
}

/** The rows and total of a search response, or undefined when no row array can be found. */
export function adaptSearchResponse(body: unknown): SearchResult | undefined {
  const found = findRows(body);
  if (!found) return undefined;
  const members = isPlainObject(body) ? body : {};
  const meta = isPlainObject(members.meta) ? members.meta : {};
  const reported =
    numberMember(members, ['total', 'total_count', 'totalCount', 'count']) ??
    numberMember(meta, ['total', 'total_count', 'totalCount']);
  const total = reported ?? found.rows.length;
  const document: Record<string, unknown> = { ...members };
  if (found.key && found.key !== 'rows') delete document[found.key];
  document.total = total;
  document.rows = found.rows;
  return { total, totalReported: reported !== undefined, rows: found.rows, document };
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

const BUCKET_MEMBERS = ['buckets', 'values', 'rows', 'items', 'results'];

function stringOrNull(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : String(value);
}

function readBucket(raw: Row): { value: string | null; count: number; share?: number } | undefined {
  const count = numberMember(raw, ['count', 'doc_count', 'n', 'size', 'companies']);
  if (count === undefined) return undefined;
  const valueKey = ['value', 'key', 'name', 'label'].find((k) => k in raw);
  return {
    value: stringOrNull(valueKey ? raw[valueKey] : null),
    count,
    share: numberMember(raw, ['share', 'ratio']),
  };
}

/** The breakdown of a response, or undefined when no bucket list can be found. */
export function adaptBreakdownResponse(body: unknown): BreakdownResult | undefined {
  if (!isPlainObject(body)) return undefined;
  const inner = [body.breakdown, body.result, body.data].find(isPlainObject) ?? body;
  const found = findRows(inner, BUCKET_MEMBERS);
  if (!found) return undefined;
  const read = found.rows.map(readBucket);
  if (read.some((b) => b === undefined)) return undefined;
  const buckets = read as { value: string | null; count: number; share?: number }[];

  const segmentRaw = isPlainObject(inner.segment) ? inner.segment : {};
  const coverageRaw = isPlainObject(inner.coverage) ? inner.coverage : {};
  const otherRaw = isPlainObject(inner.other) ? inner.other : undefined;
  const otherCount = otherRaw ? numberMember(otherRaw, ['count', 'companies']) : undefined;
  const other =
    otherRaw && otherCount !== undefined && otherCount > 0
      ? { buckets: numberMember(otherRaw, ['buckets', 'values']), count: otherCount }
      : undefined;

  const sum = buckets.reduce((n, b) => n + b.count, 0) + (other?.count ?? 0);
  const missing = numberMember(coverageRaw, ['missing']) ?? numberMember(inner, ['missing']);
  const size =
    numberMember(segmentRaw, ['size', 'total', 'count']) ??
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

  const result: BreakdownResult = {
    field: typeof inner.field === 'string' ? inner.field : undefined,
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
  const document: Record<string, unknown> = { ...inner };
  if (found.key && found.key !== 'buckets') delete document[found.key];
  Object.assign(document, {
    field: result.field,
    population: result.population,
    segment: { ...segmentRaw, ...result.segment },
    coverage: { ...coverageRaw, ...result.coverage },
    buckets: result.buckets,
    other: other ?? null,
  });
  result.document = document;
  return result;
}
