// The lookups of a few domains (`enrich <domain...>` and the mcp server's `enrich`): every input
// normalised first, the store's fresh answers reused, the rest bought one by one through the one
// buyer (src/spend/buy.ts), each answer bought kept in the store. A stop ends the loop between
// domains: what was bought is returned, marked incomplete.

import { integerFields } from '../api/catalog-views.js';
import { catalogRetryHook, loadFields, loadProducts } from '../api/catalogs.js';
import type { EnrichQuery } from '../api/domains.js';
import type { DomainResult } from '../api/types.js';
import { keepUnreadable, unreadableDir, unreadableProblem } from '../api/unreadable.js';
import { isoSecond } from '../batch/run-store.js';
import { normaliseDomain } from '../domain.js';
import { oneLine } from '../output/sanitize.js';
import { isProblem, Problem } from '../problem.js';
import { domainBuyer } from '../spend/buy.js';
import { repriceSelection } from '../spend/pricing.js';
import { type Purse, purseOf } from '../spend/purse.js';
import { checkMaxCredits, resolveSelection, type Selection } from '../spend/selection.js';
import { ageText, freshnessAt, isPostgresUrl, scopeOf } from '../store/location.js';
import type { AnswerStore } from '../store/types.js';
import type { Context } from '../types.js';
import type { OpControl } from './control.js';

export interface LookupFlags {
  products?: string[];
  include?: string[];
  maxCredits?: number;
  refresh?: boolean;
  maxAgeMs?: number;
  notFoundMaxAgeMs?: number;
  budgetMonth?: number;
}

/**
 * The store for a few lookups: a file that cannot be opened costs a warning, not the answers. A
 * shared database is another matter: buying without it would pay again for what the fleet
 * bought, so it stops the command (exit 2), as under a month cap.
 */
async function lookupStore(ctx: Context, needed: boolean): Promise<AnswerStore | undefined> {
  if (ctx.store.path === false) return undefined;
  try {
    return await ctx.store.open();
  } catch (error) {
    if (needed || !isProblem(error) || isPostgresUrl(ctx.store.path)) throw error;
    ctx.io.warn(`warning: answers are neither reused nor kept: ${error.detail}`);
    return undefined;
  }
}

/** Every input normalised first: one bad argument fails the command before anything is spent. */
export function normaliseArguments(inputs: readonly string[]): string[] {
  const domains: string[] = [];
  for (const input of inputs) {
    const result = normaliseDomain(input);
    if (!result.ok) {
      throw new Problem({
        code: 'invalid_domain',
        title: 'Not a domain',
        detail: `"${oneLine(input)}": ${result.reason}`,
        source: 'client',
        hint: 'Give a domain such as example.com or a URL such as https://www.example.com/.',
      });
    }
    if (!domains.includes(result.domain)) domains.push(result.domain);
  }
  return domains;
}

/** What a few lookups bought or reused, in the order of the distinct domains given. */
export interface Lookups {
  selection: Selection;
  results: DomainResult[];
  /** Credits charged per domain (0 from the store; undefined when the answer said none). */
  costs: Array<number | undefined>;
  /** When a reused answer was bought (ISO second); null for an answer bought now. */
  bought: Array<string | null>;
  charged: number | undefined;
  remaining: number | undefined;
  /**
   * Stopped before every domain was looked up: the domains not looked up, in order, and the
   * problem that stopped the lookups (a cap, the balance, a fault), absent for a stop asked for.
   */
  incomplete?: { notLookedUp: string[]; problem?: Problem };
}

/**
 * The lookups of `enrich <domain...>` (and of the mcp server's `enrich`): every input normalised,
 * the store's fresh answers reused, the rest bought one by one through the purchase path with
 * `purse` (the command's own when none is given), each answer bought kept in the store.
 */
export async function lookupDomains(
  ctx: Context,
  inputs: readonly string[],
  flags: LookupFlags,
  givenPurse?: Purse,
  control: OpControl = {},
): Promise<Lookups> {
  const { signal, progress } = control;
  const domains = normaliseArguments(inputs);
  // The catalog (cached) says the worst case that each lookup holds and sends as max_credits.
  // Read once for both: a second read of an empty cache would ask the service again.
  const [products, fields] = await Promise.all([loadProducts(ctx), loadFields(ctx)]);
  const selection = resolveSelection({ products, fields }, flags);
  const integers = integerFields(fields);
  checkMaxCredits(selection, flags.maxCredits);
  const query: EnrichQuery = {
    products: flags.products,
    include: flags.include,
    maxCredits: flags.maxCredits,
  };
  const store = await lookupStore(ctx, flags.budgetMonth !== undefined);
  const scope = await store?.scopeId(scopeOf(ctx.config, query));
  const now = ctx.now();
  const fresh = freshnessAt(now, { ...flags, refreshSince: flags.refresh ? now : undefined });
  const purse = givenPurse ?? (await purseOf(ctx, { budgetMonth: flags.budgetMonth }));
  const results: DomainResult[] = [];
  const costs: Array<number | undefined> = [];
  const bought: Array<string | null> = [];
  let charged: number | undefined;
  let remaining: number | undefined;
  const buy = domainBuyer(ctx, query, { expected: selection.resultFields, integers });
  /** What was looked up before domain `index`, marked incomplete (with the problem, if one stopped it). */
  const partial = (index: number, problem?: Problem): Lookups => ({
    selection,
    results,
    costs,
    bought,
    charged,
    remaining,
    incomplete: { notLookedUp: domains.slice(index), ...(problem ? { problem } : {}) },
  });
  for (const [index, domain] of domains.entries()) {
    if (signal?.aborted) return partial(index);
    progress?.(index, domains.length, domain);
    const stored = store && scope !== undefined ? await store.find(scope, domain, fresh) : undefined;
    if (stored) {
      const { domain: _, ...record } = stored.record ?? {};
      results.push({ domain, found: stored.found, record });
      costs.push(0);
      charged ??= 0;
      bought.push(isoSecond(stored.boughtAt));
      ctx.io.info(
        `${oneLine(domain)}: from the store, bought ${ageText(now - stored.boughtAt)}; --refresh buys it again`,
      );
      continue;
    }
    let purchased: Awaited<ReturnType<typeof buy>>;
    try {
      purchased = await buy(domain, {
        purse,
        worstCase: selection.worstCase,
        onRetry: catalogRetryHook(ctx),
        reprice: (_refused, held) => repriceSelection(ctx, flags, selection, held),
        signal,
      });
    } catch (error) {
      if (!isProblem(error)) throw error;
      // Stopped while waiting for room: this domain and the rest are not looked up.
      const stopped = error.code === 'interrupted' && signal?.aborted;
      // A cap, the balance or a fault after some domains were looked up: what was bought is
      // returned with the problem, never lost with it (a face that wants the error throws it).
      if (!stopped && results.length === 0) throw error;
      return partial(index, stopped ? undefined : error);
    }
    const { response, charged: cost } = purchased;
    const { result, credits } = response;
    if (result.fieldsUnread) {
      // Bought (the ledger has its charge) but not readable: nothing is written or kept for it,
      // and no further domain is bought.
      const asked = selection.resultFields;
      const saved = keepUnreadable(unreadableDir(ctx.config.cacheDir), domain, result, asked, ctx.now());
      throw unreadableProblem(domain, result, asked, saved);
    }
    results.push(result);
    costs.push(cost);
    bought.push(null);
    charged = (charged ?? 0) + cost;
    if (credits.remaining !== undefined) remaining = credits.remaining;
    if (store && scope !== undefined) {
      try {
        await store.save(scope, domain, {
          found: result.found,
          record: result.found ? { domain, ...result.record } : null,
          credits: cost,
          boughtAt: ctx.now(),
          run: null,
        });
      } catch (error) {
        if (!isProblem(error)) throw error;
        ctx.io.warn(`warning: the answer for ${oneLine(domain)} could not be kept: ${error.detail}`);
      }
    }
  }
  return { selection, results, costs, bought, charged, remaining };
}
