// A search: the request planned from its input (flags, filters and fields checked against the
// catalog, exclusions read and limited) before anything is sent, then one search bought through the
// one buyer and read, the exclusions held on the client too. It never prints: the CLI's
// `search` and the mcp server's `search` tool show what it returns.
import type { Filters } from '../api/filters.js';
import {
  adaptSearchResponse,
  noListProblem,
  ROW_MEMBERS,
  type Row,
  type SearchRequest,
  type SearchResult,
} from '../api/search.js';
import type { CsvFlags } from '../csv/options.js';
import { withoutExcluded } from '../exclusions.js';
import { usageError } from '../problem.js';
import {
  explainProblem,
  type FilterFlags,
  fieldsForChecks,
  filtersFromFlags,
  type ProblemContext,
} from '../search/options.js';
import { buySearch } from '../spend/buy.js';
import { type Purse, purseOf } from '../spend/purse.js';
import type { Context, Credits } from '../types.js';
import type { OpControl } from './control.js';

/** What a search is asked: the query's filters, exclusions, fields and size. */
export interface SearchInput extends FilterFlags, CsvFlags {
  exclude?: string[];
  excludeDomain?: string[];
  include?: string;
  limit?: number;
}

/** Checks the flags and builds the request; throws a usage Problem before anything is sent. */
export async function planSearch(
  ctx: Context,
  query: string | undefined,
  flags: SearchInput,
): Promise<SearchRequest> {
  if ((flags.delimiter !== undefined || flags.encoding !== undefined) && !flags.exclude?.length)
    throw usageError(
      `${flags.delimiter !== undefined ? '--delimiter' : '--encoding'} applies to --exclude files`,
    );
  const { parseInclude, validateFilters, validateInclude } = await import('../api/filters.js');
  let filters: Filters = filtersFromFlags(flags);
  const include = flags.include !== undefined ? parseInclude(flags.include) : undefined;
  // Exclusions first: they are local, and a refused list must not even fetch the catalog.
  let excludeDomains: string[] | undefined;
  if (flags.exclude?.length || flags.excludeDomain?.length) {
    const { loadReportedExclusions } = await import('../exclusions.js');
    excludeDomains = await loadReportedExclusions(flags, ctx.io);
  }
  const fields = await fieldsForChecks(ctx);
  if (fields) {
    filters = validateFilters(filters, fields);
    if (include) validateInclude(include, fields, 'search');
  }
  return { query, operator: flags.operator, filters, include, limit: flags.limit, excludeDomains };
}

/** How one search is bought: the caller's purse (the mcp session's), or one with --budget-month. */
export interface BuyWith extends OpControl {
  purse?: Purse;
  budgetMonth?: number;
  spinner?: false;
}

/**
 * `buy` with the purse `how` names, else one under its month cap; a problem about filters or
 * limits comes back explained with the catalog (explainProblem). A search's and a breakdown's.
 */
export async function boughtWith<R>(
  ctx: Context,
  request: ProblemContext,
  how: BuyWith,
  buy: (purse: Purse) => Promise<R>,
): Promise<R> {
  const purse = how.purse ?? (await purseOf(ctx, { budgetMonth: how.budgetMonth }));
  try {
    return await buy(purse);
  } catch (error) {
    throw await explainProblem(ctx, error, request);
  }
}

export interface SearchAnswer {
  result: SearchResult;
  /** The rows, without any naming an excluded domain. */
  rows: Row[];
  /** Rows the service returned although they name an excluded domain. */
  dropped: number;
  charged: number;
  credits: Credits;
}

/** One search bought and read; a problem about filters or limits is explained with the catalog. */
export async function searchOnce(
  ctx: Context,
  request: SearchRequest,
  how: BuyWith = {},
): Promise<SearchAnswer> {
  const { response, charged } = await boughtWith(ctx, request, how, (purse) =>
    buySearch(ctx, purse, request, { signal: how.signal, spinner: how.spinner }),
  );
  const result = adaptSearchResponse(response.data, response.credits);
  // Never the raw body as rows: a script would read it as such.
  if (!result) throw noListProblem('/api/search', 'rows', ROW_MEMBERS);
  const { rows, dropped } = withoutExcluded(result.rows, new Set(request.excludeDomains));
  return { result, rows, dropped, charged, credits: response.credits };
}
