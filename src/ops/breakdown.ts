// A breakdown: the facet and filters checked against the catalog before anything is sent, then one
// breakdown bought through the one buyer and read. It never prints: the CLI's `breakdown` draws
// it, the mcp server's `breakdown` tool returns it.
import type { Filters } from '../api/filters.js';
import {
  adaptBreakdownResponse,
  type BreakdownRequest,
  type BreakdownResult,
  BUCKET_MEMBERS,
  noListProblem,
} from '../api/search.js';
import { type FilterFlags, fieldsForChecks, filtersFromFlags } from '../search/options.js';
import { buyBreakdown } from '../spend/buy.js';
import type { Context, Credits } from '../types.js';
import { type BuyWith, boughtWith } from './search.js';

/** What a breakdown is asked: the segment's filters, who counts, and how many buckets. */
export interface BreakdownInput extends FilterFlags {
  population?: string;
  limit?: number;
}

/** Checks the flags and the facet and builds the request; throws a usage Problem before sending. */
export async function planBreakdown(
  ctx: Context,
  field: string,
  query: string | undefined,
  flags: BreakdownInput,
): Promise<BreakdownRequest> {
  const { validateFacet, validateFilters } = await import('../api/filters.js');
  let filters: Filters = filtersFromFlags(flags);
  const fields = await fieldsForChecks(ctx);
  if (fields) {
    field = validateFacet(field, fields);
    filters = validateFilters(filters, fields);
  }
  return {
    field,
    query,
    operator: flags.operator,
    filters,
    population: flags.population,
    limit: flags.limit,
  };
}

export interface BreakdownAnswer {
  /** The breakdown, its field named (the request's when the answer does not say). */
  result: BreakdownResult & { field: string };
  charged: number;
  credits: Credits;
}

/** One breakdown bought and read; a problem about filters or limits is explained with the catalog. */
export async function breakdownOnce(
  ctx: Context,
  request: BreakdownRequest,
  how: BuyWith = {},
): Promise<BreakdownAnswer> {
  const { response, charged } = await boughtWith(ctx, request, how, (purse) =>
    buyBreakdown(ctx, purse, request, { signal: how.signal }),
  );
  const result = adaptBreakdownResponse(response.data);
  // Never the raw body as buckets: a script would read it as such.
  if (!result) throw noListProblem('/api/search?breakdown', 'buckets', BUCKET_MEMBERS);
  return { result: { ...result, field: result.field ?? request.field }, charged, credits: response.credits };
}
