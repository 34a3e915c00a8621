// --dry-run: what a batch would do and cost, without a single enrichment request.
import { getAccount } from '../api/account.js';
import type { InputReader } from '../csv/input.js';
import { normaliseDomain } from '../domain.js';
import { printRecord } from '../output/format.js';
import { isProblem } from '../problem.js';
import type { Selection } from '../spend/selection.js';
import type { StoredAnswer } from '../store/types.js';
import type { Context } from '../types.js';
import { catalogColumns } from './answer-columns.js';
import { type MergeOptions, mergeTargets, replaces } from './merge.js';
import { ownCopy } from './own-copy.js';

export interface DryRunOptions {
  reader: InputReader;
  selection: Selection;
  /** The store's fresh answer for a domain (undefined: no store to read). */
  storedAnswer?: (domain: string) => Promise<StoredAnswer | undefined>;
  /** --merge: count the cells it would fill or change, per column. */
  merge?: MergeOptions;
  /** The store as the summary names it. */
  storeNote: string;
  budget?: number;
}

export async function runDryRun(ctx: Context, options: DryRunOptions): Promise<number> {
  const { reader, selection, storedAnswer } = options;
  const counter = mergeCounter(reader, selection, options.merge);
  // With --merge, the stored records of the domains met, to count the cells they fill.
  const records = counter ? new Map<string, StoredAnswer | undefined>() : undefined;
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
    if (unique.has(normalised.domain)) {
      counter?.count(row.cells, records?.get(normalised.domain));
      continue;
    }
    const domain = ownCopy(normalised.domain);
    unique.add(domain);
    const answer = await storedAnswer?.(domain);
    if (answer) stored++;
    records?.set(domain, answer);
    counter?.count(row.cells, answer);
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
  if (counter) {
    summary.merge = options.merge?.mode;
    summary.merge_columns = counter.columns;
  }
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

interface MergeColumnCounts {
  field: string;
  /** Empty cells an answer in the store fills. */
  fill: number;
  /** Cells holding a value that an answer in the store replaces (overwrite). */
  change: number;
  /** Cells that answers still to be bought may fill or change. */
  may_fill: number;
  may_change: number;
}

/** Per merged column: what the store's answers would fill or change, and what purchases may. */
function mergeCounter(reader: InputReader, selection: Selection, merge: MergeOptions | undefined) {
  if (!merge || merge.mode === 'append' || reader.header === null) return undefined;
  const header = reader.header;
  const fields = selection.resultFields ?? catalogColumns(selection);
  const targets = mergeTargets(header, fields, merge, reader.domainColumn);
  const columns: Record<string, MergeColumnCounts> = {};
  for (const [field, at] of targets)
    columns[header[at]] = { field, fill: 0, change: 0, may_fill: 0, may_change: 0 };
  return {
    columns,
    count(cells: string[], answer: StoredAnswer | undefined): void {
      for (const [field, at] of targets) {
        const counts = columns[header[at]];
        const cell = cells[at] ?? '';
        const empty = cell.trim() === '';
        if (!answer) {
          if (empty) counts.may_fill++;
          else if (merge.mode === 'overwrite') counts.may_change++;
          continue;
        }
        const value = answer.record?.[field];
        if (!replaces(merge.mode, cell, value)) continue;
        if (empty) counts.fill++;
        else if (String(value) !== cell) counts.change++;
      }
    },
  };
}
