// `search --all` / `--max-rows`: the service has no cursor, so the way through a segment is its
// exclusion list (docs/search.md). Each next page is the same search with every domain received so
// far added to the user's own exclusions, sent as POST, until a page adds nothing, `--max-rows`
// is reached, the next page could pass `--budget`, or the exclusions would pass the service's
// 20,000. This file is the loop only: what is written and said is src/search/paged-search.ts.

import {
  adaptSearchResponse,
  MAX_SEARCH_LIMIT,
  noListProblem,
  ROW_MEMBERS,
  type Row,
  type SearchRequest,
} from '../api/search.js';
import { MAX_EXCLUSIONS, rowDomainKey } from '../exclusions.js';
import type { Pacer } from '../pace.js';
import { isProblem, type Problem } from '../problem.js';
import { buySearch } from '../spend/buy.js';
import { learntPrice, REQUEST_PRICE_ESTIMATE } from '../spend/prices.js';
import type { Purse } from '../spend/purse.js';
import type { Context } from '../types.js';

/** Why a run stopped; also the `stopped` member of `-o json`. */
export type StopReason =
  /** every matching company was fetched (or none matched) */
  | 'complete'
  /** --max-rows rows were fetched and more match */
  | 'max_rows'
  /** the next page would send more than 20,000 exclusions */
  | 'exclusion_limit'
  /** the next page could pass --budget */
  | 'budget'
  /** a page brought no company not already fetched, though the service reports more */
  | 'no_new_rows'
  /** a page failed after the client's retries */
  | 'failed'
  /** SIGINT or SIGTERM */
  | 'interrupted'
  /** stdout's reader went away: nobody reads more rows */
  | 'output_closed';

/**
 * What a page is assumed to cost before any page has said: the contract's price of a search with
 * rows (docs/contract.md). After the first page, the largest charge seen so far.
 */
export const FIRST_PAGE_ESTIMATE = REQUEST_PRICE_ESTIMATE;

export interface PageProgress {
  page: number;
  fetched: number;
  /** The total of the first page: the segment minus the user's exclusions, when reported. */
  total?: number;
}

export interface RowSink {
  /** The first page's document without its rows, before any row is given. */
  start(head: Record<string, unknown>): void;
  /** The new rows of one page, in the service's order. */
  rows(rows: Row[]): void;
}

export interface PagingOptions {
  /** Stop after this many rows. */
  maxRows?: number;
  /** The caps in force (--budget, the month's) and the ledger: every page is bought through it. */
  purse: Purse;
  /** Spaces the pages under --rate (src/pace.ts); none: as fast as they come. */
  pacer?: Pacer;
  /** Aborted by Ctrl-C: the page in flight is abandoned and the run stops. */
  signal?: AbortSignal;
  onPage?(progress: PageProgress): void;
  /** True once nobody can read what is written (stdout closed): no page is bought after that. */
  outputGone?(): boolean;
}

export interface PagingOutcome {
  reason: StopReason;
  /** Rows given to the sink. */
  fetched: number;
  /** Pages answered. */
  pages: number;
  /** The first page's total, when the service reported one. */
  total?: number;
  /** Matching companies not fetched, from the last page's total (undefined when never reported). */
  notFetched?: number;
  /** Credits charged, from the answers' credit headers. */
  charged: number;
  /** The balance after the last answer, when the service said. */
  balance?: number;
  /** What the next page was expected to cost (for the budget's message). */
  nextPageCost: number;
  /** Exclusions the last page sent (the user's and the domains fetched before it). */
  exclusions: number;
  /** Rows naming one of the user's exclusions, which the service returned anyway (left out). */
  excludedReturned: number;
  /** The failure of the page that ended the run ('failed' and 'interrupted'). */
  error?: unknown;
}

/** The key that makes a row "already fetched" or excluded: its domain, normalised as exclusions are. */
function domainOf(row: Row): string | undefined {
  return typeof row.domain === 'string' && row.domain !== '' ? rowDomainKey(row.domain) : undefined;
}

function unrecognised(page: number): Problem {
  return noListProblem(`/api/search (page ${page})`, 'rows', ROW_MEMBERS);
}

/**
 * Fetches page after page of `request` (its own limit is ignored: a page is MAX_SEARCH_LIMIT
 * rows, or what is left of --max-rows) and hands each page's new rows to `sink`. Never throws for
 * a failed page: the outcome says why the run stopped, with the error.
 */
export async function fetchPages(
  ctx: Context,
  request: SearchRequest,
  sink: RowSink,
  options: PagingOptions,
): Promise<PagingOutcome> {
  const { maxRows, signal } = options;
  // The user's exclusions and every domain fetched: what the next page leaves out.
  const own = new Set<string>(request.excludeDomains ?? []);
  const excluded = new Set<string>(own);
  // Rows without a domain cannot be excluded; they are told apart by their whole content.
  const seenWithoutDomain = new Set<string>();
  const budget = options.purse;
  // The page size is the most a page can ask for (the last one asks for what is left).
  const pageSize = Math.min(MAX_SEARCH_LIMIT, maxRows ?? MAX_SEARCH_LIMIT);
  let nextPageCost = Math.max(FIRST_PAGE_ESTIMATE, learntPrice(ctx, 'search', pageSize));
  const outcome: PagingOutcome = {
    reason: 'complete',
    fetched: 0,
    pages: 0,
    charged: 0,
    nextPageCost,
    exclusions: 0,
    excludedReturned: 0,
  };
  const stop = (reason: StopReason, error?: unknown): PagingOutcome => {
    outcome.reason = reason;
    outcome.error = error;
    outcome.charged = budget.spent;
    outcome.nextPageCost = nextPageCost;
    return outcome;
  };

  for (;;) {
    if (maxRows !== undefined && outcome.fetched >= maxRows) return stop('max_rows');
    if (signal?.aborted) return stop('interrupted');
    if (options.outputGone?.()) return stop('output_closed');
    if (excluded.size > MAX_EXCLUSIONS) return stop('exclusion_limit');
    const page = outcome.pages + 1;
    const limit = Math.min(
      MAX_SEARCH_LIMIT,
      maxRows === undefined ? MAX_SEARCH_LIMIT : maxRows - outcome.fetched,
    );
    outcome.exclusions = excluded.size;
    let response: Awaited<ReturnType<typeof buySearch>>['response'];
    let charged: number;
    try {
      // The page's turn under --rate; Ctrl-C while waiting ends the run as in flight.
      const turn = options.pacer?.take(signal);
      if (turn) await turn;
      const hold = await budget.tryReserve(nextPageCost);
      if (!hold) {
        if (budget.refusedBy === 'month') return stop('failed', budget.refusal(nextPageCost));
        return stop('budget');
      }
      ({ response, charged } = await buySearch(
        ctx,
        budget,
        { ...request, limit, excludeDomains: excluded.size > 0 ? [...excluded] : undefined },
        { hold, worstCase: nextPageCost, signal, spinner: false },
      ));
    } catch (error) {
      // The run ends here either way; the purchase settled (or kept as possibly charged) the page.
      if (isProblem(error) && error.code === 'budget_exhausted' && budget.refusedBy === 'run')
        return stop('budget');
      return stop(signal?.aborted ? 'interrupted' : 'failed', error);
    }
    nextPageCost = Math.max(nextPageCost, charged);
    if (response.credits.remaining !== undefined) outcome.balance = response.credits.remaining;
    const result = adaptSearchResponse(response.data, response.credits);
    if (!result) return stop('failed', unrecognised(page));
    outcome.pages = page;

    const fresh: Row[] = [];
    for (const row of result.rows) {
      const domain = domainOf(row);
      if (domain !== undefined) {
        if (excluded.has(domain)) {
          if (own.has(domain)) outcome.excludedReturned++;
          continue;
        }
        excluded.add(domain);
      } else {
        const key = JSON.stringify(row);
        if (seenWithoutDomain.has(key)) continue;
        seenWithoutDomain.add(key);
      }
      fresh.push(row);
    }
    if (page === 1) {
      if (result.totalReported) outcome.total = result.total;
      const { rows: _rows, limit: _limit, credits: _credits, ...head } = result.document;
      sink.start(head);
    }
    // A service that sends more rows than asked still stops at --max-rows.
    const room = maxRows === undefined ? fresh.length : maxRows - outcome.fetched;
    const dropped = Math.max(0, fresh.length - room);
    if (dropped > 0) fresh.length = room;
    if (fresh.length > 0) sink.rows(fresh);
    outcome.fetched += fresh.length;
    // The service's own count of what is left after this page: its total (the segment minus this
    // page's exclusions) minus the rows it sent, whether or not they were new to this run.
    if (result.totalReported) outcome.notFetched = Math.max(0, result.total - result.rows.length + dropped);
    options.onPage?.({ page, fetched: outcome.fetched, total: outcome.total });

    // The end comes from the service's own signals: an empty page, its word that no page follows
    // (has_more false, no next cursor), or its total reached. A page shorter than asked is no
    // signal: a service may cap its pages below what `limit` asks (docs/search.md).
    if (result.rows.length === 0) return stop('complete');
    if (result.more === false) return stop('complete');
    if (result.totalReported && (outcome.notFetched ?? 0) <= 0) return stop('complete');
    if (fresh.length === 0) return stop('no_new_rows');
  }
}
