// What search, breakdown and lookalike share: the filter flags, the catalog checks made before any
// request, and the extra explanation added to the server's problems about filters and limits.
import { type Command, Option } from 'commander';
import { loadFields, refreshCatalogs } from '../api/catalogs.js';
import {
  type Filters,
  mergeFilters,
  parseFilterFlag,
  parseFiltersJson,
  suggestForInvalidFilter,
} from '../api/filters.js';
import type { Operator } from '../api/search.js';
import type { FieldEntry } from '../api/types.js';
import { Problem } from '../problem.js';
import type { Context } from '../types.js';

export interface FilterFlags {
  filter?: string[];
  filters?: string;
  operator?: Operator;
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** --operator, --filter (repeatable) and --filters, declared the same way on every command. */
export function addFilterOptions(command: Command, withOperator = true): Command {
  if (withOperator) {
    command.addOption(
      new Option('--operator <op>', 'how query words combine: every word (and) or any word (or)').choices([
        'and',
        'or',
      ]),
    );
  }
  return command
    .option(
      '--filter <name=value[,value]>',
      'exact catalog filter; repeat for more filters (values of one name are alternatives)',
      collect,
    )
    .option(
      '--filters <json>',
      'filters as a JSON object, e.g. \'{"country":["US","GB"]}\' (merged with --filter)',
    );
}

/** The filters of the flags: every --filter and --filters merged, values unioned. */
export function filtersFromFlags(flags: FilterFlags): Filters {
  const parts = (flags.filter ?? []).map(parseFilterFlag);
  if (flags.filters !== undefined) parts.push(parseFiltersJson(flags.filters));
  return mergeFilters(...parts);
}

/**
 * The fields catalog for the local checks. The server re-checks everything, so when the catalog
 * cannot be read the checks are skipped (said with --verbose) rather than blocking the command.
 */
export async function fieldsForChecks(ctx: Context): Promise<FieldEntry[] | undefined> {
  try {
    const fields = await loadFields(ctx);
    // An empty catalog would refuse every name; it says nothing about what the server accepts.
    if (fields.length > 0) return fields;
    ctx.io.debug('fields catalog is empty; filters are left to the server to check');
    return undefined;
  } catch (error) {
    // Only an unavailable or unreadable catalog is skipped; an interrupt or a bug is not.
    const skippable = error instanceof Problem && (error.exitCode === 5 || error.code === 'not_found');
    if (!skippable) throw error;
    ctx.io.debug(`fields catalog unavailable (${error.code}); filters are left to the server to check`);
    return undefined;
  }
}

export interface ProblemContext {
  filters: Filters;
  query?: string;
  limit?: number;
}

function queryWords(query: string | undefined): number {
  return query?.trim() ? query.trim().split(/\s+/).length : 0;
}

/**
 * Adds what the client knows to a server problem: for `invalid_filter`, the catalog's suggestion
 * (after dropping a possibly stale cached catalog); for `search_limit_exceeded`, what this search
 * asked for, so the user sees what to narrow. Other problems pass through unchanged.
 */
export async function explainProblem(ctx: Context, error: unknown, about: ProblemContext): Promise<unknown> {
  if (!(error instanceof Problem)) return error;
  let hint: string | undefined;
  if (error.code === 'invalid_filter') {
    await refreshCatalogs(ctx);
    const fields = await fieldsForChecks(ctx);
    hint = fields ? suggestForInvalidFilter(about.filters, fields) : undefined;
  } else if (error.code === 'search_limit_exceeded') {
    const values = Object.values(about.filters).reduce((n, v) => n + v.length, 0);
    hint = `This search has ${queryWords(about.query)} query words and ${values} filter values${about.limit !== undefined ? `, with --limit ${about.limit}` : ''}.`;
  }
  if (!hint) return error;
  return new Problem({
    code: error.code,
    status: error.status,
    title: error.title,
    detail: error.detail,
    retryable: error.retryable,
    source: error.source,
    retryAfterSeconds: error.retryAfterSeconds,
    hint: error.extraHint ? `${error.extraHint} ${hint}` : hint,
    cause: error,
  });
}
