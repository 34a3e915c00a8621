// `company-data spend`: what the spend ledger of the store recorded, totalled per month, day,
// command or key. Every charge the service reports through any command is in the ledger, and
// so is every attempt whose answer never came (possibly charged): they are shown apart.
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { CommandKit } from '../command-kit.js';
import { parseSince, readSpend, type Since, type SpendOptions } from '../ops/spend.js';
import type { Problem } from '../problem.js';
import { plural } from '../text.js';
import type { Context } from '../types.js';

/** --since as Commander reads it: a date it refuses is a usage error naming the option. */
function sinceOption(raw: string): Since {
  try {
    return parseSince(raw);
  } catch (error) {
    throw new InvalidArgumentError((error as Problem).detail ?? String(error));
  }
}

export function register(program: Command, kit: CommandKit): void {
  program
    .command('spend')
    .description('Show the credits spent, from the spend ledger of the store (never charged)')
    .option('--since <date>', 'count from this day or month on, UTC: YYYY-MM-DD or YYYY-MM', sinceOption)
    .addOption(
      new Option('--by <group>', 'one row per month, day, command, or key (base URL and key)')
        .choices(['month', 'day', 'command', 'key'])
        .default('month'),
    )
    .addHelpText(
      'after',
      `
Every charge the service reports is recorded in the store's ledger, whichever command and key
made it (the key by a hash, never the key itself). "possibly charged" counts attempts whose
answer never came: the service may or may not have charged them. The total goes to stderr on a
terminal; -o json gives { since, by, rows, total }.

Examples:
  $ company-data spend
  $ company-data spend --since 2026-11 --by day
  $ company-data spend --by command -o csv > spend.csv`,
    )
    .action(kit.withContext(runSpend));
}

export async function runSpend(ctx: Context, options: SpendOptions): Promise<number> {
  const [admin, { groupDigits }, { formatOf, printList }] = await Promise.all([
    import('../store/admin.js'),
    import('../output/numbers.js'),
    import('../output/format.js'),
  ]);
  const { since, rows, total, emptyMessage } = await readSpend(ctx, options);
  const format = formatOf(ctx);
  if (format === 'json') {
    if (rows.length === 0) ctx.io.info(emptyMessage);
    ctx.io.out(`${JSON.stringify({ since, by: options.by, rows, total }, null, 2)}\n`);
    return 0;
  }
  printList(ctx, rows, { emptyMessage, columns: admin.spendColumns(options.by) });
  if (format === 'table' && rows.length > 0) {
    ctx.io.info(
      `Total${since ? ` since ${since}` : ''}: ${plural(total.charged, 'credit')} charged, ${groupDigits(total.possibly_charged)} possibly charged (${plural(total.calls, 'call')}).`,
    );
  }
  return 0;
}
