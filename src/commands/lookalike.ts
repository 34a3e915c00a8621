// `company-data lookalike`: companies similar to one seed domain, ranked, optionally with why; or
// to several seeds (arguments or --seeds), one request each, fused into one ranking by Reciprocal
// Rank Fusion (docs/lookalike.md).
import type { Command } from 'commander';
import type { Filters } from '../api/filters.js';
import { type LookalikeRequest, MAX_K } from '../api/lookalike.js';
import { BUDGET_MONTH_OPTION, type CommandKit, DRY_RUN_OPTION, parseIntOption } from '../command-kit.js';
import { addCsvOptions, type CsvFlags } from '../csv/options.js';
import { usageError } from '../problem.js';
import { pacerFor, parseRateOption } from '../rate-option.js';
import {
  addFilterOptions,
  collect,
  explainProblem,
  type FilterFlags,
  fieldsForChecks,
  filtersFromFlags,
} from '../search/options.js';
import type { Context } from '../types.js';

export interface LookalikeFlags extends Omit<FilterFlags, 'operator'>, CsvFlags {
  k?: number;
  include?: string;
  evidence?: boolean;
  seeds?: string;
  column?: string;
  exclude?: string[];
  excludeDomain?: string[];
  concurrency?: number;
  budget?: number;
  budgetMonth?: number;
  dryRun?: boolean;
  rate?: number;
}

/** The service's k when none is given (docs/contract.md); the final count of a fused run. */
export const DEFAULT_K = 10;
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 16;

export function register(program: Command, kit: CommandKit): void {
  const command = program
    .command('lookalike')
    .description('Find companies similar to one or more seed domains, ranked by similarity')
    .argument('[seeds...]', 'seed domains or URLs, e.g. acme-shoes.com; several are fused into one ranking');
  addFilterOptions(command, false)
    .option(
      '-k <n>',
      `number of candidates, 1-${MAX_K} (service default 10); with several seeds, after fusion`,
      parseIntOption('-k', 1, MAX_K),
    )
    .option('--include <fields>', 'comma-separated fields per candidate (see `company-data fields`)')
    .option('--evidence', 'say why each candidate matched (shared technologies, same category, ...)')
    .option('--seeds <file|->', 'CSV (domain column) or list of seed domains; - reads stdin')
    .option('--column <name>', 'the domain column of --seeds (default: domain, website, url, ...)')
    .option(
      '--exclude <file|->',
      'CSV (domain column) or list of domains to leave out of the results; - reads stdin; repeatable',
      collect,
    )
    .option('--exclude-domain <domain>', 'one domain or URL to leave out; repeatable', collect);
  addCsvOptions(command, '--seeds, --exclude')
    .option(
      '--concurrency <n>',
      `seed requests in flight (default ${DEFAULT_CONCURRENCY}, max ${MAX_CONCURRENCY})`,
      parseIntOption('--concurrency', 1, MAX_CONCURRENCY),
    )
    .option('--budget <n>', 'never charge more than n credits in this run', parseIntOption('--budget'))
    .option(...BUDGET_MONTH_OPTION)
    .option(...DRY_RUN_OPTION)
    .option(
      '--rate <n>',
      'several seeds: at most n requests per second (default: 90% of the rate limit `me` reports; 0: no pacing)',
      parseRateOption,
    )
    .addHelpText(
      'after',
      `
One seed: a ranked table (rank, domain, score, the included fields, and with --evidence a short
"why", which replaces the default fields unless --include names some); -o json gives the whole
response with the full evidence; -o ndjson one candidate per line; -o csv the table's columns.

Several seeds (two or more arguments, or --seeds): one request per distinct seed, the lists fused
by Reciprocal Rank Fusion: a candidate scores the sum of 1/(60 + rank) over the seeds that found
it; ties go to more seeds, then the best single rank, then the domain. Rows show rank, domain,
score, seed_count and similar_to (best rank first); -o json gives { seeds, k, results, credits }
with each seed's status, and per row seed_ranks, seed_scores and (--evidence) the evidence per
seed. Each seed is asked for k + seeds + exclusions candidates (at most ${MAX_K}); k is the count
after fusion (default ${DEFAULT_K}). The seeds and the --exclude domains are never in the results.

A seed without lookalikes is not an error: it says so on stderr, charges nothing and exits 0
(-o json prints {"found": false, ...} for one seed). See docs/lookalike.md.

Examples:
  $ company-data --sandbox lookalike acme-shoes.com -k 5 --evidence
  $ company-data --sandbox lookalike https://www.acme-shoes.com/ --filter country=US --include domain,company_name,tech
  $ company-data --sandbox lookalike acme-shoes.com -o json
  $ company-data --sandbox lookalike acme-shoes.com umbrella-health.de escape-test.com -k 20
  $ company-data --sandbox lookalike acme-shoes.com globex.io --evidence --dry-run
  $ printf 'domain\\nacme-shoes.com\\nglobex.io\\n' | company-data --sandbox lookalike --seeds - --exclude examples/customers.csv -o csv

Exit codes: 0 ok (also seeds without lookalikes), 2 bad input, 3 key, 4 --budget reached or
insufficient credits (what was answered is printed), 5 service unavailable (no seed answered),
6 some seeds failed (the others are fused and printed).`,
    )
    .action(kit.withContext(runLookalike));
}

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

function checkSources(args: readonly string[], flags: LookalikeFlags): void {
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
  flags: LookalikeFlags,
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
async function loadExcluded(ctx: Context, flags: LookalikeFlags): Promise<string[]> {
  if (!flags.exclude?.length && !flags.excludeDomain?.length) return [];
  const { loadReportedExclusions } = await import('../exclusions.js');
  return loadReportedExclusions(flags, ctx.io);
}

export async function runLookalike(ctx: Context, args: string[], flags: LookalikeFlags): Promise<number> {
  const plan = await planLookalike(ctx, args, flags);
  if (flags.dryRun) {
    const [{ buildLookalikeCall }, { printCostPreview }] = await Promise.all([
      import('../api/lookalike.js'),
      import('./cost-preview.js'),
    ]);
    return printCostPreview(ctx, {
      calls: plan.requests.map(buildLookalikeCall),
      requests: plan.requests.length,
      // As src/lookalike/fetch.ts holds each seed's request: at the k it asks for.
      priced: { endpoint: 'lookalike', size: plan.requests[0]?.k },
      budget: flags.budget,
      budgetMonth: flags.budgetMonth,
    });
  }
  const { fetchSeeds } = await import('../lookalike/fetch.js');
  const first = plan.requests[0];
  const explain = (error: unknown) => explainProblem(ctx, error, { filters: first.filters, limit: first.k });
  const spinner = plan.single ? undefined : ctx.io.spinner(`Lookalikes of ${plan.requests.length} seeds…`);
  let run: Awaited<ReturnType<typeof fetchSeeds>>;
  try {
    run = await fetchSeeds(ctx, plan.requests, {
      concurrency: flags.concurrency ?? DEFAULT_CONCURRENCY,
      budget: flags.budget,
      budgetMonth: flags.budgetMonth,
      // One request needs no pacing (nor a question to the account about its limit).
      pacer: plan.requests.length > 1 ? pacerFor(ctx, flags.rate) : undefined,
      ...(plan.single ? {} : { spinner: false as const }),
      onSettled: (n) => spinner?.update(`Lookalikes: ${n} of ${plan.requests.length} seeds…`),
    });
  } finally {
    spinner?.stop();
  }
  // Either printer throws the problem a run ends with; the filters' hints are added here.
  try {
    if (plan.single) {
      const { printSingle } = await import('../lookalike/single.js');
      return await printSingle(ctx, run, plan);
    }
    const { printFused } = await import('../lookalike/output.js');
    return printFused(ctx, run, {
      k: plan.k,
      evidence: first.evidence,
      include: first.include,
      exclude: plan.exclude,
      excluded: plan.excluded,
    });
  } catch (error) {
    throw await explain(error);
  }
}
