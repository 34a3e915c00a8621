// `company-data me`: what the key may do and what it has left. Also the quickest key check:
// a 200 means the key is valid, and the call never costs credits.
import type { Command } from 'commander';
import type { CommandKit } from '../command-kit.js';
import type { Context } from '../types.js';

export function register(program: Command, kit: CommandKit): void {
  program
    .command('me')
    .description('Show the plan, balance and capabilities of your key (never charged)')
    .addHelpText(
      'after',
      `
Exits 3 when the key is missing or invalid, so scripts can check a key with it.

Examples:
  $ company-data --sandbox me
  $ COMPANY_DATA_API_KEY=... company-data --base-url https://api.example.com me -o json`,
    )
    .action(kit.withContext(runMe));
}

export async function runMe(ctx: Context): Promise<number> {
  const [{ getAccount }, { formatOf, isJsonFormat, printRecord }] = await Promise.all([
    import('../api/account.js'),
    import('../output/format.js'),
  ]);
  const { account } = await getAccount(ctx);
  if (isJsonFormat(ctx)) {
    printRecord(ctx, account);
    return 0;
  }
  const { plan, balance, capabilities, ...rest } = account;
  // People read 1,000,000 more easily; CSV keeps the plain number for spreadsheets.
  const shownBalance =
    formatOf(ctx) === 'table' && Number.isFinite(balance) ? balance.toLocaleString('en-US') : balance;
  printRecord(ctx, { plan, balance: shownBalance, capabilities, ...rest }, { title: 'Account' });
  return 0;
}
