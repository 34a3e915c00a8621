// --dry-run: what a batch would do and cost, without a single enrichment request.
import { getAccount } from '../api/account.js';
import type { InputReader } from '../csv/input.js';
import { normaliseDomain } from '../domain.js';
import { printRecord } from '../output/format.js';
import { isProblem } from '../problem.js';
import type { Context } from '../types.js';
import { ownCopy } from './own-copy.js';
import type { Selection } from './selection.js';

export interface DryRunOptions {
  reader: InputReader;
  selection: Selection;
  /** Whether the store holds a fresh answer (undefined: no store to read). */
  isStored?: (domain: string) => Promise<boolean>;
  /** The store as the summary names it. */
  storeNote: string;
  budget?: number;
}

export async function runDryRun(ctx: Context, options: DryRunOptions): Promise<number> {
  const { reader, selection, isStored } = options;
  const unique = new Set<string>();
  let rows = 0;
  let invalid = 0;
  let stored = 0;
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
    if (await isStored?.(normalised.domain)) stored++;
  }

  const toRequest = unique.size - stored;
  const summary: Record<string, unknown> = {
    rows,
    unique_domains: unique.size,
    already_stored: stored,
    invalid_rows: invalid,
    to_request: toRequest,
    products: selection.defaultUnknown
      ? `the service's default (the catalog marks none; at most ${selection.products.map((p) => p.id).join(',')})`
      : selection.products.map((p) => p.id).join(','),
    worst_case_per_lookup: selection.worstCase,
    worst_case_credits: toRequest * selection.worstCase,
    store: options.storeNote,
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
