// GET and POST /api/search (docs/contract.md): parameters -> validation -> plan -> a scan of the
// dataset in popularity order -> rows or a breakdown, and whether it is charged.

import type { Company, Dataset } from './dataset.js';
import {
  type Caller,
  type EngineOutcome,
  FACETS,
  type Failure,
  type Filters,
  fail,
  isFailure,
  normaliseDomainParam,
  parseBoundedInt,
  parseFilters,
  parseRowInclude,
  passesFilters,
  planFailure,
  quote,
  rowOf,
} from './engine-common.js';
import { deadlineCheck, matchCounts, queryTerms, SearchDeadline, searchIndex } from './search-index.js';

export interface SearchInput {
  query?: unknown;
  query_operator?: unknown;
  filters?: unknown;
  include?: unknown;
  limit?: unknown;
  breakdown?: unknown;
  population?: unknown;
  breakdown_limit?: unknown;
  exclude_domains?: unknown;
}

/** Test seams: the execution bound and the clock it is measured with. */
export interface EngineOptions {
  timeLimitMs?: number;
  now?: () => number;
}

export const SEARCH_TIME_LIMIT_MS = 2000;
export const MAX_QUERY_TERMS = 12;
export const MAX_EXCLUDE_DOMAINS = 20_000;

interface Segment {
  query: string;
  terms: string[];
  operator: 'and' | 'or';
  filters: Filters;
  exclude: Set<string>;
}

const given = (value: unknown) => value !== undefined && value !== null && value !== '';

export function runSearch(
  ds: Dataset,
  input: SearchInput,
  via: 'GET' | 'POST',
  caller: Caller,
  options: EngineOptions = {},
): EngineOutcome {
  const segment = parseSegment(input, via);
  if (isFailure(segment)) return segment;
  return given(input.breakdown)
    ? runBreakdown(ds, input, segment, caller, options)
    : runRows(ds, input, segment, caller, options);
}

function parseSegment(input: SearchInput, via: 'GET' | 'POST'): Segment | Failure {
  if (via === 'GET' && input.exclude_domains !== undefined)
    return fail('invalid_request', 'exclude_domains is accepted only in the body of POST /api/search');
  const query = input.query ?? '';
  if (typeof query !== 'string') return fail('invalid_request', 'query must be a string');
  const operator = given(input.query_operator) ? input.query_operator : 'and';
  if (operator !== 'and' && operator !== 'or')
    return fail('invalid_request', 'query_operator must be "and" or "or"');
  const filters = parseFilters(input.filters, via);
  if (isFailure(filters)) return filters;
  const exclude = parseExclusions(input.exclude_domains);
  if (isFailure(exclude)) return exclude;
  const terms = queryTerms(query);
  if (terms.length > MAX_QUERY_TERMS)
    return fail(
      'search_limit_exceeded',
      `the query has ${terms.length} terms after stop words; at most ${MAX_QUERY_TERMS} are allowed`,
    );
  return { query, terms, operator, filters: filters.filters, exclude };
}

function parseExclusions(raw: unknown): Set<string> | Failure {
  const out = new Set<string>();
  if (raw === undefined) return out;
  if (!Array.isArray(raw)) return fail('invalid_exclude_domains', 'exclude_domains must be a JSON array');
  if (raw.length > MAX_EXCLUDE_DOMAINS)
    return fail(
      'invalid_exclude_domains',
      `exclude_domains has ${raw.length} entries; at most ${MAX_EXCLUDE_DOMAINS} are allowed`,
    );
  for (const [i, entry] of raw.entries()) {
    const domain = typeof entry === 'string' ? normaliseDomainParam(entry) : null;
    if (domain === null)
      return fail(
        'invalid_exclude_domains',
        `exclude_domains[${i}] ${typeof entry === 'string' ? quote(entry) : `(a ${typeof entry})`} is not a domain or an http(s) URL`,
      );
    out.add(domain);
  }
  return out;
}

/** Visits the companies of the segment in popularity order with their number of matched terms. */
function scan(
  ds: Dataset,
  segment: Segment,
  ecommerceOnly: boolean,
  options: EngineOptions,
  visit: (c: Company, matched: number) => void,
): void {
  const index = searchIndex(ds);
  // The bound starts once the index exists: building it is a one-time cost per dataset.
  const now = options.now ?? (() => performance.now());
  const check = deadlineCheck(now() + (options.timeLimitMs ?? SEARCH_TIME_LIMIT_MS), now);
  const n = ds.companies.length;
  const counts = segment.terms.length > 0 ? matchCounts(index, n, segment.terms, check) : null;
  const needed = segment.operator === 'and' ? segment.terms.length : 1;
  for (let i = 0; i < n; i++) {
    check(i);
    const companyIndex = index.order[i];
    const matched = counts ? counts[companyIndex] : 0;
    if (counts && matched < needed) continue;
    const c = ds.companies[companyIndex];
    if (ecommerceOnly && !c.is_ecommerce) continue;
    if (segment.filters.size > 0 && !passesFilters(c, segment.filters)) continue;
    if (segment.exclude.size > 0 && segment.exclude.has(c.domain)) continue;
    visit(c, matched);
  }
}

function timed(run: () => EngineOutcome): EngineOutcome {
  try {
    return run();
  } catch (error) {
    if (error instanceof SearchDeadline)
      return fail('search_timeout', `the search did not finish within ${SEARCH_TIME_LIMIT_MS / 1000} s`);
    throw error;
  }
}

function charge(caller: Caller, body: Record<string, unknown>, chargeable: boolean): EngineOutcome {
  if (chargeable && caller.balance < 1)
    return fail('insufficient_credits', `this result costs 1 credit; the balance is ${caller.balance}`);
  return { ok: true, body, charged: chargeable ? 1 : 0 };
}

function runRows(
  ds: Dataset,
  input: SearchInput,
  segment: Segment,
  caller: Caller,
  options: EngineOptions,
): EngineOutcome {
  const include = parseRowInclude(input.include, 'search');
  if (isFailure(include)) return include;
  const limit = parseBoundedInt(input.limit, 'limit', 25, 1, 1000);
  if (isFailure(limit)) return limit;
  const denied =
    planFailure(caller, include, 'include of') ?? planFailure(caller, segment.filters.keys(), 'filter on');
  if (denied) return denied;
  return timed(() => {
    // Best first: more matched terms, then popularity; the scan already runs in popularity order,
    // so one capped list per matched-term count is enough (no sort of the whole result).
    const byMatched: Company[][] = Array.from({ length: segment.terms.length + 1 }, () => []);
    let total = 0;
    scan(ds, segment, false, options, (c, matched) => {
      total++;
      if (byMatched[matched].length < limit) byMatched[matched].push(c);
    });
    const best = byMatched.reverse().flat().slice(0, limit);
    const body = {
      query: segment.query,
      query_operator: segment.operator,
      total,
      limit,
      rows: best.map((c) => rowOf(c, include)),
    };
    return charge(caller, body, best.length > 0);
  });
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

function runBreakdown(
  ds: Dataset,
  input: SearchInput,
  segment: Segment,
  caller: Caller,
  options: EngineOptions,
): EngineOutcome {
  const field = input.breakdown;
  if (typeof field !== 'string' || !FACETS.includes(field))
    return fail(
      'invalid_request',
      `breakdown ${typeof field === 'string' ? quote(field) : ''} is not a facet; facets are ${FACETS.join(', ')}`,
    );
  const population = given(input.population) ? input.population : 'all';
  if (population !== 'all' && population !== 'ecommerce')
    return fail('invalid_request', 'population must be "all" or "ecommerce"');
  const bucketLimit = parseBoundedInt(input.breakdown_limit, 'breakdown_limit', 10, 1, 100);
  if (isFailure(bucketLimit)) return bucketLimit;
  const denied =
    planFailure(caller, [field], 'breakdown by') ?? planFailure(caller, segment.filters.keys(), 'filter on');
  if (denied) return denied;
  return timed(() => {
    const counts = new Map<string, number>();
    let size = 0;
    let missing = 0;
    scan(ds, segment, population === 'ecommerce', options, (c) => {
      size++;
      const value = (c as unknown as Record<string, unknown>)[field];
      if (typeof value !== 'string') missing++;
      else counts.set(value, (counts.get(value) ?? 0) + 1);
    });
    const withValue = size - missing;
    const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const shown = ranked.slice(0, bucketLimit);
    const rest = ranked.slice(bucketLimit);
    const body = {
      breakdown: {
        field,
        population,
        segment: { description: describe(segment, population === 'ecommerce'), size },
        coverage: { with_value: withValue, missing, ratio: size > 0 ? round4(withValue / size) : 0 },
        buckets: shown.map(([value, count]) => ({ value, count, share: round4(count / withValue) })),
        other: { buckets: rest.length, count: rest.reduce((sum, [, count]) => sum + count, 0) },
      },
    };
    return charge(caller, body, size > 0);
  });
}

/** A human sentence for the segment, e.g. `ecommerce companies matching "shoes" with country in (US, GB)`. */
function describe(segment: Segment, ecommerce: boolean): string {
  const parts = [ecommerce ? 'ecommerce companies' : 'companies'];
  const query = segment.query.trim();
  if (segment.terms.length > 0) {
    const joined = segment.operator === 'or' ? ' (any term)' : '';
    parts.push(`matching ${JSON.stringify(query.length > 80 ? `${query.slice(0, 77)}...` : query)}${joined}`);
  }
  for (const [name, values] of segment.filters) parts.push(`with ${name} in (${[...values].join(', ')})`);
  if (segment.exclude.size > 0) parts.push(`excluding ${segment.exclude.size} domains`);
  return parts.join(' ');
}
