// `company-data breakdown`: how a segment (query + filters) splits over one facet, drawn as a
// bar chart in a terminal and as flat rows for scripts.

import { type Command, Option } from 'commander';
import { MAX_BREAKDOWN_LIMIT } from '../api/search.js';
import { BUDGET_MONTH_OPTION, type CommandKit, DRY_RUN_OPTION, parseIntOption } from '../command-kit.js';
import type { BreakdownInput } from '../ops/breakdown.js';
import { addFilterOptions } from '../search/options.js';
import type { Context } from '../types.js';

export interface BreakdownFlags extends BreakdownInput {
  budgetMonth?: number;
  dryRun?: boolean;
}

export function register(program: Command, kit: CommandKit): void {
  const command = program
    .command('breakdown')
    .description('Break a segment down by a facet (country, site_category, primary_platform, employee_range)')
    .argument('<field>', 'a breakdown facet of the fields catalog (`company-data fields --facets`)')
    .argument('[query]', 'what the segment is, e.g. "shoes" (empty: every company)');
  addFilterOptions(command)
    .addOption(
      new Option('--population <population>', 'all companies, or only those selling online').choices([
        'all',
        'ecommerce',
      ]),
    )
    .option(
      '--limit <n>',
      `number of buckets, 1-${MAX_BREAKDOWN_LIMIT} (service default 10); the rest is "other"`,
      parseIntOption('--limit', 1, MAX_BREAKDOWN_LIMIT),
    )
    .option(...BUDGET_MONTH_OPTION)
    .option(...DRY_RUN_OPTION)
    .addHelpText(
      'after',
      `
Output: in a terminal, the segment and the coverage of the field, then one bar per bucket
(share = count / companies with a value). -o json gives the breakdown object. -o csv and
-o ndjson give one row per bucket with columns value, count, share, kind: kind is "value"
for a bucket, "other" for the values beyond --limit taken together, and "missing" for the
companies without a value (value and share empty); the counts add up to the segment size.

Examples:
  $ company-data --sandbox breakdown country shoes
  $ company-data --sandbox breakdown site_category --population ecommerce --filter country=US --limit 5
  $ company-data --sandbox breakdown primary_platform fashion -o csv
  $ company-data --sandbox breakdown country shoes --dry-run`,
    )
    .action(kit.withContext(runBreakdown));
}

export async function runBreakdown(
  ctx: Context,
  field: string,
  query: string | undefined,
  flags: BreakdownFlags,
): Promise<number> {
  const { planBreakdown } = await import('../ops/breakdown.js');
  const request = await planBreakdown(ctx, field, query, flags);
  if (flags.dryRun) {
    const [{ buildBreakdownCall }, { printCostPreview }] = await Promise.all([
      import('../api/search.js'),
      import('./cost-preview.js'),
    ]);
    return printCostPreview(ctx, {
      calls: [buildBreakdownCall(request)],
      requests: 1,
      priced: { endpoint: 'breakdown', size: request.limit },
      budgetMonth: flags.budgetMonth,
    });
  }
  const [{ breakdownOnce }, view, format] = await Promise.all([
    import('../ops/breakdown.js'),
    import('../search/breakdown-view.js'),
    import('../output/format.js'),
  ]);
  const { result, credits } = await breakdownOnce(ctx, request, { budgetMonth: flags.budgetMonth });
  switch (format.formatOf(ctx)) {
    case 'json':
      format.printJson(ctx, { ...result.document, field: result.field });
      break;
    case 'table': {
      const { io } = ctx;
      const lines = view.renderBreakdown(result, { width: io.columns, unicode: io.unicode, color: io.color });
      io.out(`${lines.join('\n')}\n`);
      if (result.buckets.length === 0) io.info('No companies in this segment.');
      break;
    }
    default:
      format.printList(ctx, view.breakdownRows(result), { columns: view.BREAKDOWN_COLUMNS });
  }
  format.printCredits(ctx, credits);
  return 0;
}
