// --dry-run of search, breakdown and lookalike (issue 46), as `enrich --dry-run` does for a batch:
// what would be sent, the worst case in credits, and what the caps in force and the balance leave,
// with nothing bought. The only request is the free GET /api/me for the balance.
import { getAccount } from '../api/account.js';
import { printRecord } from '../output/format.js';
import { isProblem } from '../problem.js';
import { learntPrice, type PricedEndpoint, REQUEST_PRICE_ESTIMATE } from '../spend/prices.js';
import { purseOf } from '../spend/purse.js';
import type { Context, RequestOptions } from '../types.js';

export interface CostPreview {
  /** The requests that would be sent, in order (the first page's, for a paging search). */
  calls: RequestOptions[];
  /** How many requests at most (more than `calls` for a paging search: every page). */
  requests: number;
  /** What each request is held at, as the command would hold it (src/spend/prices.ts). */
  priced: { endpoint: PricedEndpoint; size: number | undefined };
  /** Said of the requests after the ones shown ("each next page: ..."). */
  nextRequests?: string;
  /** --budget of this run. */
  budget?: number;
  budgetMonth?: number;
}

// A body longer than this is summarised (20,000 exclusions are ~400 KB of JSON).
const SHOWN_BODY = 200;

/** `GET /api/search?query=shoes&limit=5`, or `POST /api/search {...}`: a request as a person reads it. */
export function describeCall(call: RequestOptions): string {
  // The values as a person reads them, not percent-encoded (the client encodes them when sending).
  const params = Object.entries(call.query ?? {})
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${value}`);
  const query = params.length > 0 ? `?${params.join('&')}` : '';
  const line = `${call.method} ${call.path}${query}`;
  const body = call.bodyJson ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
  if (body === undefined) return line;
  if (body.length <= SHOWN_BODY) return `${line} ${body}`;
  const bytes = Buffer.byteLength(body, 'utf8').toLocaleString('en-US');
  const excluded = (call.body as { exclude_domains?: unknown[] } | undefined)?.exclude_domains?.length;
  return `${line} (a JSON body of ${bytes} bytes${excluded ? `, ${excluded.toLocaleString('en-US')} excluded domains` : ''})`;
}

/** Prints the preview (a record: a table, or -o json / ndjson / csv) and returns exit code 0. */
export async function printCostPreview(ctx: Context, preview: CostPreview): Promise<number> {
  // The hold of each request: the largest charge seen for this endpoint and size, else the estimate.
  const each = Math.max(
    REQUEST_PRICE_ESTIMATE,
    learntPrice(ctx, preview.priced.endpoint, preview.priced.size),
  );
  const worst = preview.requests * each;
  // One field per request, so that a table shows each on its own line(s) and JSON names each.
  const summary: Record<string, unknown> = {};
  preview.calls.forEach((call, i) => {
    summary[preview.calls.length === 1 ? 'request' : `request_${i + 1}`] = describeCall(call);
  });
  if (preview.nextRequests) summary.next_requests = preview.nextRequests;
  summary.request_count = preview.requests;
  summary.worst_case_per_request = each;
  summary.worst_case_credits = worst;
  // The caps as the purchase path would hold against them now (read, never reserved).
  const purse = await purseOf(ctx, { budget: preview.budget, budgetMonth: preview.budgetMonth });
  const left = await purse.left();
  if (preview.budget !== undefined) summary.budget = preview.budget;
  if (purse.monthCap !== undefined) {
    summary.budget_month = purse.monthCap;
    summary.budget_month_left = left.month;
  }
  const room = Math.min(left.run ?? Number.POSITIVE_INFINITY, left.month ?? Number.POSITIVE_INFINITY);
  if (Number.isFinite(room)) {
    summary.caps_cover_worst_case = room >= worst;
    // A run stops before a request its caps have no room for: this is the most it can charge.
    summary.at_most_charged = Math.min(worst, Math.floor(room / each) * each);
  }
  if (ctx.config.apiKey) {
    try {
      const { account } = await getAccount(ctx);
      if (Number.isFinite(account.balance)) {
        summary.balance = account.balance;
        summary.balance_covers_worst_case = account.balance >= worst;
      }
    } catch (error) {
      if (!isProblem(error)) throw error;
      ctx.io.warn(`warning: could not read the balance (${error.code}); showing costs only`);
    }
  }
  printRecord(ctx, summary, { title: 'Dry run: nothing was sent or charged' });
  return 0;
}
