// --dry-run: what a batch would do and cost, without a single enrichment request.
import { access } from 'node:fs/promises';
import { getAccount } from '../api/account.js';
import { normaliseDomain } from '../domain.js';
import { printRecord } from '../output/format.js';
import { isProblem } from '../problem.js';
import type { Context } from '../types.js';
import type { InputReader } from './input.js';
import { openJournal, ownCopy } from './journal.js';
import type { Selection } from './selection.js';

export interface DryRunOptions {
  reader: InputReader;
  selection: Selection;
  journalPath?: string;
  fingerprint: string;
  fresh: boolean;
  budget?: number;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

export async function runDryRun(ctx: Context, options: DryRunOptions): Promise<number> {
  const { reader, selection } = options;
  let journalNote = 'none';
  let journal: Awaited<ReturnType<typeof openJournal>> | undefined;
  if (options.journalPath && !options.fresh && (await exists(options.journalPath))) {
    try {
      journal = await openJournal(options.journalPath, options.fingerprint);
      journalNote = options.journalPath;
    } catch (error) {
      if (!isProblem(error)) throw error;
      journalNote = `${options.journalPath} (from other options: a run needs --fresh)`;
    }
  }

  const unique = new Set<string>();
  let rows = 0;
  let invalid = 0;
  let journalled = 0;
  try {
    for await (const row of reader.rows) {
      rows++;
      if (row.error) {
        invalid++;
        continue;
      }
      const normalised = normaliseDomain(row.domainRaw);
      if (!normalised.ok) {
        invalid++;
        continue;
      }
      if (unique.has(normalised.domain)) continue;
      unique.add(ownCopy(normalised.domain));
      if (journal?.has(normalised.domain)) journalled++;
    }
  } finally {
    await journal?.close();
  }

  const toRequest = unique.size - journalled;
  const summary: Record<string, unknown> = {
    rows,
    unique_domains: unique.size,
    already_journalled: journalled,
    invalid_rows: invalid,
    to_request: toRequest,
    products: selection.defaultUnknown
      ? `the service's default (the catalog marks none; at most ${selection.products.map((p) => p.id).join(',')})`
      : selection.products.map((p) => p.id).join(','),
    worst_case_per_lookup: selection.worstCase,
    worst_case_credits: toRequest * selection.worstCase,
    journal: journalNote,
  };
  if (options.budget !== undefined) summary.budget = options.budget;
  if (ctx.config.apiKey) {
    try {
      const { account } = await getAccount(ctx);
      if (Number.isFinite(account.balance)) {
        summary.balance = account.balance;
        summary.balance_covers_worst_case = account.balance >= toRequest * selection.worstCase;
      }
    } catch (error) {
      if (!isProblem(error)) throw error;
      ctx.io.warn(`warning: could not read the balance (${error.code}); showing costs only`);
    }
  }
  printRecord(ctx, summary, { title: 'Dry run: no enrichment request was sent' });
  return 0;
}
