// `company-data spend`: what the spend ledger of the store recorded, totalled per month, day,
// command or key. Every charge the service reports through any command is in the ledger, and
// so is every attempt whose answer never came (possibly charged): they are shown apart.
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { CommandKit } from '../command-kit.js';
import type { SpendBy, SpendRow, SpendTotal } from '../store/admin.js';
import { plural } from '../text.js';
import type { Context } from '../types.js';

export interface SpendOptions {
  since?: Since;
  by: SpendBy;
}

/** `--since`: the first instant counted (UTC), and the date it names. */
export interface Since {
  from: number;
  label: string;
}

/** YYYY-MM-DD or YYYY-MM, a real calendar date, read as the start of that day or month in UTC. */
export function parseSince(raw: string): Since {
  const match = /^(\d{4})-(\d{2})(?:-(\d{2}))?$/.exec(raw.trim());
  if (match) {
    const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3] ?? '1')];
    const from = Date.UTC(year, month - 1, day);
    const date = new Date(from);
    if (date.getUTCMonth() === month - 1 && date.getUTCDate() === day && date.getUTCFullYear() === year) {
      return { from, label: date.toISOString().slice(0, 10) };
    }
  }
  throw new InvalidArgumentError(`--since takes a date as YYYY-MM-DD or YYYY-MM (UTC), got "${raw}"`);
}

export function register(program: Command, kit: CommandKit): void {
  program
    .command('spend')
    .description('Show the credits spent, from the spend ledger of the store (never charged)')
    .option('--since <date>', 'count from this day or month on, UTC: YYYY-MM-DD or YYYY-MM', parseSince)
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

/** What `spend` shows: the ledger's rows and total, and the message for an empty ledger. */
export interface SpendReport {
  since: string | null;
  by: SpendBy;
  rows: SpendRow[];
  total: SpendTotal;
  emptyMessage: string;
}

/** The ledger of the store as `spend` reads it (also the mcp server's `spend` tool). */
export async function readSpend(ctx: Context, options: SpendOptions): Promise<SpendReport> {
  const admin = await import('../store/admin.js');
  const { path, opened } = await admin.existingStore(ctx.store, 'read the spend ledger of');
  // Holds of processes that are gone (killed while a request was in flight) count as possibly
  // charged, also when the store cannot be written (src/store/admin.ts).
  const rows = opened ? await admin.spendRowsOf(opened, options.by, options.since?.from) : [];
  const total = admin.spendTotal(rows);
  const since = options.since?.label ?? null;
  const emptyMessage = opened
    ? `No charges recorded${since ? ` since ${since}` : ''} in ${path}.`
    : `No charges recorded: there is no store at ${path} yet.`;
  return { since, by: options.by, rows, total, emptyMessage };
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
