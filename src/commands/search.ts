// `company-data search`: companies matching a business-language query and exact filters, minus an
// exclusion list. Everything that can be checked locally (flags, filters and fields against the
// catalog, exclusions and their limits) is checked before the search is sent.

import type { Command } from 'commander';
import { MAX_SEARCH_LIMIT, type SearchRequest } from '../api/search.js';
import { BUDGET_MONTH_OPTION, type CommandKit, DRY_RUN_OPTION, parseIntOption } from '../command-kit.js';
import { addCsvOptions } from '../csv/options.js';
import { MAX_EXCLUSIONS } from '../exclusions.js';
import type { SearchInput } from '../ops/search.js';
import { groupDigits } from '../output/numbers.js';
import { usageError } from '../problem.js';
import { parseRateOption } from '../rate-option.js';
import { addFilterOptions, collect } from '../search/options.js';
import type { Context } from '../types.js';

export interface SearchFlags extends SearchInput {
  budgetMonth?: number;
  all?: boolean;
  maxRows?: number;
  budget?: number;
  rate?: number;
  dryRun?: boolean;
}

export function register(program: Command, kit: CommandKit): void {
  const command = program
    .command('search')
    .description('Search companies by a business-language description and exact filters, with exclusions')
    .argument('[query]', 'what you are looking for, e.g. "shopify shoes" (empty: every company)');
  addFilterOptions(command)
    .option(
      '--exclude <file|->',
      'CSV (domain column), list of domains, or saved search -o json/ndjson output to leave out; - reads stdin; repeatable',
      collect,
    )
    .option('--exclude-domain <domain>', 'one domain or URL to leave out; repeatable', collect);
  addCsvOptions(command, '--exclude')
    .option('--include <fields>', 'comma-separated fields per row (see `company-data fields`)')
    .option(
      '--limit <n>',
      `number of rows, 1-${MAX_SEARCH_LIMIT} (service default 25)`,
      parseIntOption('--limit', 1, MAX_SEARCH_LIMIT),
    )
    .option(
      '--all',
      `every matching company, in as many searches of ${groupDigits(MAX_SEARCH_LIMIT)} rows as it takes`,
    )
    .option('--max-rows <n>', 'like --all, but stop after n rows', parseIntOption('--max-rows', 1))
    .option(
      '--budget <n>',
      'with --all or --max-rows: never charge more than n credits in this run',
      parseIntOption('--budget'),
    )
    .option(...BUDGET_MONTH_OPTION)
    .option(
      '--rate <n>',
      'with --all or --max-rows: at most n searches per second (default: 90% of the rate limit `me` reports; 0: no pacing)',
      parseRateOption,
    )
    .option(...DRY_RUN_OPTION)
    .addHelpText(
      'after',
      `
Filter names and values are checked against the fields catalog before anything is sent.
Exclusions (at most 20,000 unique domains) are normalised like the service does; an entry
that is not a domain stops the search, so no company you meant to exclude can slip through.
With exclusions the search is sent as POST (they never go into a URL).

Output: a table of the included fields with the total on stderr; -o json gives
{ total, rows, ... }; -o ndjson one row per line; -o csv the rows.

Paging: one search returns at most ${groupDigits(MAX_SEARCH_LIMIT)} rows. --all searches again and again, each time
excluding the companies already received (POST), until none is left; --max-rows <n> is
--all stopping after n rows. CSV and NDJSON rows are written as each page arrives; -o json
is one document { total, rows, fetched, complete, stopped, not_fetched, pages, credits };
a table is printed at the end. The service takes at most ${groupDigits(MAX_EXCLUSIONS)} exclusions (yours count),
so one run reaches at most ${groupDigits(MAX_EXCLUSIONS + MAX_SEARCH_LIMIT)} companies: the rest is counted on stderr (exit 0).
--budget stops before a page that could pass it (exit 4). After a page that fails (exit 5
when unavailable, 4 for credits, ...) or Ctrl-C (130) the rows written stay, and stderr
gives the command that continues: --exclude reads the file they went to. --rate spaces
the pages under the service's rate limit.

Examples:
  $ company-data --sandbox search "shopify shoes" --filter country=US --limit 5
  $ company-data --sandbox search coffee --filter country=US,GB --include domain,company_name,tech
  $ company-data --sandbox search --filters '{"site_category":["fashion"]}' --exclude-domain example.com -o csv
  $ printf 'domain\\nexample.com\\n' | company-data --sandbox search fashion --exclude - --limit 10
  $ company-data --sandbox search shoes --all -o csv > shoes.csv
  $ company-data --sandbox search --filter country=US --max-rows 2500 --budget 3 -o ndjson
  $ company-data --sandbox search shoes --all --dry-run`,
    )
    .action(kit.withContext(runSearch));
}

export async function runSearch(
  ctx: Context,
  query: string | undefined,
  flags: SearchFlags,
): Promise<number> {
  const paging = flags.all === true || flags.maxRows !== undefined;
  if (paging && flags.limit !== undefined) {
    throw usageError(
      '--limit sets the rows of one search; with --all or --max-rows every page has the most the service gives',
      'Drop --limit; use --max-rows <n> to stop after n rows.',
    );
  }
  if (!paging && flags.budget !== undefined) {
    throw usageError('--budget caps a paging run', 'Add --all or --max-rows <n>, or drop --budget.');
  }
  if (!paging && flags.rate !== undefined) {
    throw usageError('--rate paces a paging run', 'Add --all or --max-rows <n>, or drop --rate.');
  }
  const { planSearch } = await import('../ops/search.js');
  const request = await planSearch(ctx, query, flags);
  if (flags.dryRun) return previewSearch(ctx, request, flags, paging);
  if (paging) {
    const { runPagedSearch } = await import('../search/paged-search.js');
    return runPagedSearch(ctx, request, flags);
  }
  const { searchOnce } = await import('../ops/search.js');
  const { result, rows, dropped, credits } = await searchOnce(ctx, request, {
    budgetMonth: flags.budgetMonth,
  });
  // Loaded only now: the output modules (with the table renderer) would otherwise delay the
  // request by their load time, and a failed search never needs them.
  const [format, { excludedRowsNote }] = await Promise.all([
    import('../output/format.js'),
    import('../exclusions.js'),
  ]);
  if (format.formatOf(ctx) === 'json') format.printJson(ctx, { ...result.document, rows });
  else format.printList(ctx, rows, { columns: request.include ? [...request.include] : undefined });
  if (dropped > 0) ctx.io.warn(excludedRowsNote(dropped, true));
  if (rows.length === 0) ctx.io.info('No companies match.');
  else {
    const noun = result.total === 1 ? 'company' : 'companies';
    ctx.io.info(`Showing ${groupDigits(rows.length)} of ${groupDigits(result.total)} ${noun}`);
  }
  format.printCredits(ctx, credits);
  return 0;
}

/**
 * --dry-run: the request (the first page's, when paging) and the most it can cost. A paging run
 * asks for pages of ${MAX_SEARCH_LIMIT} rows until --max-rows, or until the service's exclusion limit
 * stops it: one more page than the exclusions it has room for (src/search/paging.ts).
 */
async function previewSearch(
  ctx: Context,
  request: SearchRequest,
  flags: SearchFlags,
  paging: boolean,
): Promise<number> {
  const [{ buildSearchCall }, { printCostPreview }] = await Promise.all([
    import('../api/search.js'),
    import('./cost-preview.js'),
  ]);
  if (!paging) {
    return printCostPreview(ctx, {
      calls: [buildSearchCall(request)],
      requests: 1,
      priced: { endpoint: 'search', size: request.limit },
      budgetMonth: flags.budgetMonth,
    });
  }
  const own = request.excludeDomains?.length ?? 0;
  const reach = Math.floor((MAX_EXCLUSIONS - own) / MAX_SEARCH_LIMIT) + 1;
  const pages = Math.min(reach, Math.ceil((flags.maxRows ?? Number.POSITIVE_INFINITY) / MAX_SEARCH_LIMIT));
  const first = { ...request, limit: Math.min(MAX_SEARCH_LIMIT, flags.maxRows ?? MAX_SEARCH_LIMIT) };
  return printCostPreview(ctx, {
    calls: [buildSearchCall(first)],
    requests: pages,
    // As src/search/paging.ts holds every page: at the size of the first.
    priced: { endpoint: 'search', size: first.limit },
    nextRequests:
      pages > 1
        ? `up to ${pages - 1} more pages, each a POST /api/search excluding the companies already received`
        : undefined,
    budget: flags.budget,
    budgetMonth: flags.budgetMonth,
  });
}
