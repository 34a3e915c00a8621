// `company-data errors`: the problem codes the service can answer with, from its own catalog.
import type { Command } from 'commander';
import { loadErrors } from '../api/catalogs.js';
import type { CommandKit } from '../command-kit.js';
import { formatOf, printJson, printList } from '../output/format.js';
import { oneLine } from '../output/sanitize.js';
import type { Context } from '../types.js';

export function register(program: Command, kit: CommandKit): void {
  program
    .command('errors')
    .description('List the problem codes of the service (public: no key needed)')
    .addHelpText(
      'after',
      `
Retryable problems are retried automatically (see --retries); the others need a change first.

Examples:
  $ company-data --sandbox errors
  $ company-data --sandbox errors -o csv`,
    )
    .action(kit.withContext(runErrors));
}

export async function runErrors(ctx: Context): Promise<number> {
  const catalog = await loadErrors(ctx);
  const rows = catalog.errors as unknown as Record<string, unknown>[];
  switch (formatOf(ctx)) {
    case 'json':
      printJson(ctx, catalog);
      return 0;
    case 'ndjson':
      printList(ctx, rows);
      return 0;
    case 'csv':
      printList(ctx, rows, { columns: ['code', 'http_status', 'title', 'detail', 'retryable', 'charged'] });
      return 0;
    default: {
      const version = oneLine(catalog.contract_version || 'unknown');
      ctx.io.out(`Contract ${version} (${oneLine(catalog.content_type)})\n`);
      printList(ctx, rows, {
        columns: ['code', 'http_status', 'retryable', 'title'],
        // The code names the row; a long title may end in "…" (`-o json` has it whole).
        shorten: ['title'],
        emptyMessage: 'The service publishes no problem codes.',
      });
      return 0;
    }
  }
}
