// Lookalikes of one or more seeds: the seeds, exclusions, filters and fields read and checked
// before anything is sent (the plan), then one request per seed through the one buyer under the
// caps, a stop and progress (src/lookalike/fetch.ts). It never prints: the CLI's `lookalike` ranks
// and prints what it returns, the mcp server's `lookalike` tool answers with it.
import type { Filters } from '../api/filters.js';
import { type LookalikeRequest, MAX_K } from '../api/lookalike.js';
import type { CsvFlags } from '../csv/options.js';
import type { SeedRun, SeedRunOptions } from '../lookalike/fetch.js';
import { usageError } from '../problem.js';
import { type FilterFlags, fieldsForChecks, filtersFromFlags } from '../search/options.js';
import type { Context } from '../types.js';
import type { OpControl } from './control.js';

/** What lookalikes are asked: the seeds (arguments or a file), exclusions, filters and fields. */
export interface LookalikeInput extends Omit<FilterFlags, 'operator'>, CsvFlags {
  k?: number;
  include?: string;
  evidence?: boolean;
  seeds?: string;
  column?: string;
  exclude?: string[];
  excludeDomain?: string[];
}

/** The service's k when none is given (docs/contract.md); the final count of a fused run. */
export const DEFAULT_K = 10;
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 16;

export interface LookalikePlan {
  /** One request per distinct seed, in the order given. */
  requests: LookalikeRequest[];
  /** One seed argument and no --seeds: the service's own ranking, printed as it comes. */
  single: boolean;
  /** The final count of a fused run, or of a single seed with exclusions. */
  k: number;
  /** The seeds and the exclusions: never in the results. */
  exclude: Set<string>;
  exclusions: number;
  /** The exclusions alone: how many the service returned is said on stderr. */
  excluded: Set<string>;
}

function checkSources(args: readonly string[], flags: LookalikeInput): void {
  if (flags.seeds !== undefined && args.length > 0) {
    throw usageError('give seeds as arguments or a file with --seeds, not both');
  }
  if (flags.seeds === undefined && args.length === 0) {
    throw usageError(
      'no seed: give a seed domain, several, or --seeds <file>',
      'See `company-data lookalike --help`.',
    );
  }
  if (flags.column !== undefined && flags.seeds === undefined)
    throw usageError('--column applies to --seeds <file>');
  if (
    (flags.delimiter !== undefined || flags.encoding !== undefined) &&
    flags.seeds === undefined &&
    !flags.exclude?.length
  )
    throw usageError(
      `${flags.delimiter !== undefined ? '--delimiter' : '--encoding'} applies to --seeds and --exclude files`,
    );
  if (flags.seeds === '-' && flags.exclude?.includes('-')) {
    throw usageError('--seeds - and --exclude - cannot both read stdin: give one of them a file');
  }
}

/** Reads the seeds and exclusions and checks the flags; throws a Problem before anything is sent. */
export async function planLookalike(
  ctx: Context,
  args: readonly string[],
  flags: LookalikeInput,
): Promise<LookalikePlan> {
  checkSources(args, flags);
  const [{ loadSeeds }, { parseInclude, validateFilters, validateInclude }, { oneLine }] = await Promise.all([
    import('../lookalike/seeds.js'),
    import('../api/filters.js'),
    import('../output/sanitize.js'),
  ]);
  const csv = { delimiter: flags.delimiter, encoding: flags.encoding };
  const seeds = await loadSeeds({ args, file: flags.seeds, column: flags.column, csv }, ctx.io);
  if (seeds.note !== undefined) ctx.io.info(seeds.note);
  if (seeds.doubtfulTitle !== undefined) {
    ctx.io.warn(
      `note: the first line of --seeds ${oneLine(flags.seeds ?? '')}, "${oneLine(seeds.doubtfulTitle)}", was read as the column's title, not as a seed; put a title line such as "domain" above the domains if it is one`,
    );
  }
  if (seeds.domains.length === 0) {
    throw usageError(
      `--seeds ${oneLine(flags.seeds ?? '')} holds no domain`,
      'Give one seed domain per line, or a CSV with a domain column.',
    );
  }
  if (seeds.duplicates > 0) {
    const { duplicates, domains } = seeds;
    ctx.io.info(
      `Using ${domains.length} seed${domains.length === 1 ? '' : 's'} (${duplicates} duplicate${duplicates === 1 ? '' : 's'} dropped).`,
    );
  }
  const excluded = await loadExcluded(ctx, flags);
  let filters: Filters = filtersFromFlags(flags);
  const include = flags.include !== undefined ? parseInclude(flags.include) : undefined;
  const fields = await fieldsForChecks(ctx);
  if (fields) {
    filters = validateFilters(filters, fields);
    if (include) validateInclude(include, fields, 'lookalike');
  }
  const single = flags.seeds === undefined && args.length === 1;
  const k = flags.k ?? DEFAULT_K;
  // Enough candidates per seed that the seeds and the exclusions, when they come back, still
  // leave k; without either, one seed asks for exactly what was asked.
  const ask =
    single && excluded.length === 0 ? flags.k : Math.min(MAX_K, k + seeds.domains.length + excluded.length);
  const evidence = Boolean(flags.evidence);
  return {
    requests: seeds.domains.map((seed) => ({ seed, k: ask, filters, include, evidence })),
    single,
    k,
    exclude: new Set([...seeds.domains, ...excluded]),
    exclusions: excluded.length,
    excluded: new Set(excluded),
  };
}

/** The --exclude and --exclude-domain domains, read and checked as search reads them. */
async function loadExcluded(ctx: Context, flags: LookalikeInput): Promise<string[]> {
  if (!flags.exclude?.length && !flags.excludeDomain?.length) return [];
  const { loadReportedExclusions } = await import('../exclusions.js');
  return loadReportedExclusions(flags, ctx.io);
}

/**
 * The plan's requests, one per seed, under the caps (the purse given, or --budget and the month's),
 * at most `concurrency` in flight; a stop ends the run between seeds and `progress` counts seeds.
 */
export async function lookalikesOf(
  ctx: Context,
  plan: LookalikePlan,
  options: Omit<SeedRunOptions, 'signal' | 'onSettled'> & OpControl,
): Promise<SeedRun> {
  const { fetchSeeds } = await import('../lookalike/fetch.js');
  const { progress, ...rest } = options;
  const total = plan.requests.length;
  return fetchSeeds(ctx, plan.requests, {
    ...rest,
    onSettled: progress && ((settled) => progress(settled, total)),
  });
}
