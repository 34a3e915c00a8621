// `company-data lookalike`: companies similar to one seed domain, ranked, optionally with why; or
// to several seeds (arguments or --seeds), one request each, fused into one ranking by Reciprocal
// Rank Fusion (docs/lookalike.md).
import type { Command } from 'commander';
import { MAX_K } from '../api/lookalike.js';
import { BUDGET_MONTH_OPTION, type CommandKit, DRY_RUN_OPTION, parseIntOption } from '../command-kit.js';
import { addCsvOptions } from '../csv/options.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_K,
  type LookalikeInput,
  MAX_CONCURRENCY,
  planLookalike,
} from '../ops/lookalike.js';
import { pacerFor, parseRateOption } from '../rate-option.js';
import { addFilterOptions, collect, explainProblem } from '../search/options.js';
import type { Context } from '../types.js';

export interface LookalikeFlags extends LookalikeInput {
  concurrency?: number;
  budget?: number;
  budgetMonth?: number;
  dryRun?: boolean;
  rate?: number;
}

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
  const { lookalikesOf } = await import('../ops/lookalike.js');
  const first = plan.requests[0];
  const explain = (error: unknown) => explainProblem(ctx, error, { filters: first.filters, limit: first.k });
  const spinner = plan.single ? undefined : ctx.io.spinner(`Lookalikes of ${plan.requests.length} seeds…`);
  let run: Awaited<ReturnType<typeof lookalikesOf>>;
  try {
    run = await lookalikesOf(ctx, plan, {
      concurrency: flags.concurrency ?? DEFAULT_CONCURRENCY,
      budget: flags.budget,
      budgetMonth: flags.budgetMonth,
      // One request needs no pacing (nor a question to the account about its limit).
      pacer: plan.requests.length > 1 ? pacerFor(ctx, flags.rate) : undefined,
      ...(plan.single ? {} : { spinner: false as const }),
      progress: (n, total) => spinner?.update(`Lookalikes: ${n} of ${total} seeds…`),
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
