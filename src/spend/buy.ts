// The one buyer: for each paid endpoint, its price (what a purchase holds) and its charge rule
// (how an answer's cost is read), and the only code that sends a paid request. Operations, the
// batch and `api` buy here; test/architecture/imports.test.ts fails the build if anything else
// imports a paid sender (src/api/domains.ts enrichDomain and domainLookup, src/api/search.ts
// searchCompanies and fetchBreakdown, src/api/lookalike.ts fetchLookalikes).
import { catalogRetryHook } from '../api/catalogs.js';
import {
  type DomainLookupOptions,
  domainLookup,
  type EnrichQuery,
  type EnrichResponse,
} from '../api/domains.js';
import { adaptLookalikeResponse, fetchLookalikes, type LookalikeRequest } from '../api/lookalike.js';
import { type BreakdownRequest, fetchBreakdown, type SearchRequest, searchCompanies } from '../api/search.js';
import type { ApiResponse, Context, RequestOptions } from '../types.js';
import { answerReported, domainReported, type Reported } from './charges.js';
import { learntPrice, notePrice, type PricedEndpoint } from './prices.js';
import { type OnRetry, type Purchase, type PurchaseSpec, purchase } from './purchase.js';
import type { Hold, Purse } from './purse.js';

/** What every purchase of one request can be given by the operation that makes it. */
export interface BuyOptions {
  /** A hold taken already (a batch's claim, a paging run's page). */
  hold?: Hold;
  /** The worst case, when the caller knows more than the learnt price (a paging run's next page). */
  worstCase?: number;
  signal?: AbortSignal;
  stopped?: () => boolean;
  spinner?: false;
  /** The caller's hook before a retry (pacing). */
  onRetry?: OnRetry;
}

/** A lookalike answer: "none found" costs nothing (the spec), whatever its figures say. */
export function lookalikeReported(answer: {
  data: unknown;
  credits: ApiResponse<unknown>['credits'];
}): Reported {
  const result = adaptLookalikeResponse(answer.data);
  return answerReported(answer, result !== undefined && !result.found);
}

/** A domain answer as the service sent it (through `api`): read as enrich reads it. */
function rawDomainReported(answer: { data: unknown; credits: ApiResponse<unknown>['credits'] }): Reported {
  const body = answer.data as { found?: unknown } | null;
  return answerReported(answer, typeof body === 'object' && body !== null && body.found === false);
}

/**
 * A request of an endpoint without a published price: held at the largest charge seen for its
 * size (src/spend/prices.ts), and a charge above that learnt for the next purchase.
 */
async function buyPriced(
  ctx: Context,
  purse: Purse,
  priced: { endpoint: PricedEndpoint; size: number | undefined },
  options: BuyOptions,
  spec: Pick<PurchaseSpec<ApiResponse<unknown>>, 'send' | 'reported'>,
): Promise<Purchase<ApiResponse<unknown>>> {
  const learnt = learntPrice(ctx, priced.endpoint, priced.size);
  const bought = await purchase({
    purse,
    worstCase: Math.max(options.worstCase ?? learnt, learnt),
    hold: options.hold,
    signal: options.signal,
    stopped: options.stopped,
    onRetry: combine(catalogRetryHook(ctx), options.onRetry),
    ...spec,
  });
  if (!bought.unreadable) notePrice(ctx, priced.endpoint, priced.size, bought.charged);
  return bought;
}

export function buySearch(
  ctx: Context,
  purse: Purse,
  request: SearchRequest,
  options: BuyOptions = {},
): Promise<Purchase<ApiResponse<unknown>>> {
  return buyPriced(ctx, purse, { endpoint: 'search', size: request.limit }, options, {
    send: (_max, onRetry) =>
      searchCompanies(ctx, request, { onRetry, signal: options.signal, spinner: options.spinner }),
    reported: (answer) => answerReported(answer),
  });
}

export function buyBreakdown(
  ctx: Context,
  purse: Purse,
  request: BreakdownRequest,
  options: BuyOptions = {},
): Promise<Purchase<ApiResponse<unknown>>> {
  return buyPriced(ctx, purse, { endpoint: 'breakdown', size: request.limit }, options, {
    send: (_max, onRetry) => fetchBreakdown(ctx, request, { onRetry }),
    reported: (answer) => answerReported(answer),
  });
}

export function buyLookalike(
  ctx: Context,
  purse: Purse,
  request: LookalikeRequest,
  options: BuyOptions = {},
): Promise<Purchase<ApiResponse<unknown>>> {
  return buyPriced(ctx, purse, { endpoint: 'lookalike', size: request.k }, options, {
    send: (_max, onRetry) => fetchLookalikes(ctx, request, { onRetry, spinner: options.spinner }),
    reported: lookalikeReported,
  });
}

/** One domain's purchase, as the buyer of a lookup selection makes it. */
export type DomainPurchase = Pick<
  PurchaseSpec<EnrichResponse>,
  'purse' | 'worstCase' | 'hold' | 'onRetry' | 'reprice' | 'along' | 'stopped' | 'signal'
>;

/**
 * The buyer of domain lookups with one selection (a few domains, a batch): the query is built once;
 * each lookup carries max_credits = its hold, and its charge is read as a domain answer's.
 */
export function domainBuyer(
  ctx: { client: Context['client'] },
  query: EnrichQuery,
  options: DomainLookupOptions,
): (domain: string, spec: DomainPurchase) => Promise<Purchase<EnrichResponse>> {
  const lookup = domainLookup(ctx, query, options);
  return (domain, spec) =>
    purchase<EnrichResponse>({
      ...spec,
      send: (maxCredits, onRetry) => lookup(domain, onRetry, maxCredits),
      reported: domainReported,
      backed: true,
    });
}

/** What `api` buys: the endpoint a path names, for its charge rule. */
export type RawKind = 'domain' | 'lookalike' | 'paid';

/** A whole number a server would read from a query parameter or a JSON body's member. */
function sizeOf(request: RequestOptions, name: string): number | undefined {
  const body = typeof request.body === 'object' && request.body !== null ? request.body : {};
  const raw = request.query?.[name] ?? (body as Record<string, unknown>)[name];
  const n =
    typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\+?\d+\s*$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * The endpoint without a published price that a raw request is, priced as its command prices it
 * (a lookalike by k, a search or breakdown by limit); undefined for a domain lookup (its
 * selection's worst case) or a path of no known endpoint.
 */
function rawPriced(
  request: RequestOptions,
  kind: RawKind,
): { endpoint: PricedEndpoint; size: number | undefined } | undefined {
  if (kind === 'lookalike') return { endpoint: 'lookalike', size: sizeOf(request, 'k') };
  if (kind !== 'paid' || !/^\/*api\/+search\/*$/i.test(request.path)) return undefined;
  const body = typeof request.body === 'object' && request.body !== null ? request.body : {};
  const breakdown =
    request.query?.breakdown !== undefined || (body as Record<string, unknown>).breakdown !== undefined;
  return { endpoint: breakdown ? 'breakdown' : 'search', size: sizeOf(request, 'limit') };
}

/**
 * A raw request of `api` on a paid path, bought like the command of its endpoint: a domain lookup
 * carries max_credits = its hold, and a domain or lookalike not found costs nothing; a lookalike,
 * search or breakdown holds the price learnt for its size, and teaches it.
 */
export async function buyRaw(
  ctx: Context,
  purse: Purse,
  request: RequestOptions,
  kind: RawKind,
  worstCase: number,
): Promise<Purchase<ApiResponse<unknown>>> {
  const priced = rawPriced(request, kind);
  const bought = await purchase<ApiResponse<unknown>>({
    purse,
    worstCase: priced ? Math.max(worstCase, learntPrice(ctx, priced.endpoint, priced.size)) : worstCase,
    send: (maxCredits, onRetry) =>
      ctx.client.request<unknown>({
        ...request,
        query: kind === 'domain' ? { ...request.query, max_credits: maxCredits } : request.query,
        onRetry,
      }),
    onRetry: catalogRetryHook(ctx),
    backed: kind === 'domain',
    reported:
      kind === 'domain'
        ? rawDomainReported
        : kind === 'lookalike'
          ? lookalikeReported
          : (answer) => answerReported(answer),
  });
  if (priced && !bought.unreadable) notePrice(ctx, priced.endpoint, priced.size, bought.charged);
  return bought;
}

function combine(first: OnRetry, second: OnRetry | undefined): OnRetry {
  if (!second) return first;
  return async (problem, attempt, delayMs) => {
    await first(problem, attempt, delayMs);
    await second(problem, attempt, delayMs);
  };
}
