// `company-data enrich <domain...>`: a few lookups. On a terminal, a record (one domain) or a table
// (several), with the credits on stderr. For scripts, one shape however many domains were given
// (docs/contract.md, "Output of enrich <domain>"): -o json is { results: [...], credits }, like
// search and lookalike; -o ndjson and -o csv give one row per domain, each with credits_charged and
// bought_at. An answer younger than its age limit comes from the result store, at no cost, with a
// line on stderr saying so; an answer bought goes to the store.
import { catalogRetryHook, loadFields, loadProducts } from '../api/catalogs.js';
import { type EnrichQuery, type EnrichResponse, enrichDomain } from '../api/domains.js';
import type { DomainResult } from '../api/types.js';
import { checkMaxCredits, resolveSelection, type Selection } from '../batch/selection.js';
import { normaliseDomain } from '../domain.js';
import { mayHaveBeenCharged } from '../http/outcome.js';
import { formatOf, printCredits, printJson, printList, printRecord } from '../output/format.js';
import { oneLine } from '../output/sanitize.js';
import { isProblem, Problem } from '../problem.js';
import { ageText, freshnessAt, scopeOf } from '../store/location.js';
import { monthBudgetOf } from '../store/month-budget.js';
import { isoSecond } from '../store/run-store.js';
import type { SqliteStore } from '../store/sqlite.js';
import { plural } from '../text.js';
import type { Context } from '../types.js';

export interface LookupFlags {
  products?: string[];
  include?: string[];
  maxCredits?: number;
  refresh?: boolean;
  maxAgeMs?: number;
  notFoundMaxAgeMs?: number;
  budgetMonth?: number;
}

/** The store for a few lookups: one that cannot be opened costs a warning, not the answers. */
async function lookupStore(ctx: Context, needed: boolean): Promise<SqliteStore | undefined> {
  if (ctx.store.path === false) return undefined;
  try {
    return await ctx.store.open();
  } catch (error) {
    if (needed || !isProblem(error)) throw error;
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

function rowOf(result: DomainResult, withFound: boolean): Record<string, unknown> {
  const row: Record<string, unknown> = { domain: result.domain };
  if (withFound) row.found = result.found;
  return Object.assign(row, result.record);
}

export async function runLookups(
  ctx: Context,
  inputs: readonly string[],
  flags: LookupFlags,
): Promise<number> {
  const domains = normaliseArguments(inputs);
  let selection: Selection | undefined;
  // Without options there is nothing to check, so a plain lookup costs no catalog round trip.
  if (flags.products || flags.include || flags.maxCredits !== undefined || flags.budgetMonth !== undefined) {
    const [products, fields] = await Promise.all([loadProducts(ctx), loadFields(ctx)]);
    selection = resolveSelection({ products, fields }, flags);
    checkMaxCredits(selection, flags.maxCredits);
  }
  const query: EnrichQuery = {
    products: flags.products,
    include: flags.include,
    maxCredits: flags.maxCredits,
  };
  const store = await lookupStore(ctx, flags.budgetMonth !== undefined);
  const scope = store?.scopeId(scopeOf(ctx.config, query));
  const now = ctx.now();
  const fresh = freshnessAt(now, { ...flags, refreshSince: flags.refresh ? now : undefined });
  const month =
    store && flags.budgetMonth !== undefined ? monthBudgetOf(ctx, store, flags.budgetMonth) : undefined;
  const results: DomainResult[] = [];
  const costs: Array<number | undefined> = [];
  const bought: Array<string | null> = [];
  let charged: number | undefined;
  let remaining: number | undefined;
  for (const domain of domains) {
    const stored = store && scope !== undefined ? store.find(scope, domain, fresh) : undefined;
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
    const worstCase = selection?.worstCase ?? 0;
    const reservation = month?.tryReserve(worstCase);
    if (month && !reservation) {
      throw new Problem({
        code: 'budget_exhausted',
        detail: `--budget-month ${flags.budgetMonth} (this key's spend in this calendar month, UTC, across runs) leaves no room for a lookup of up to ${plural(worstCase, 'credit')}`,
        source: 'client',
      });
    }
    let response: EnrichResponse;
    try {
      response = await enrichDomain(ctx, domain, query, { onRetry: catalogRetryHook(ctx) });
    } catch (error) {
      if (reservation) {
        if (isProblem(error) && mayHaveBeenCharged(error)) month?.settleUnknown(reservation);
        else month?.settle(reservation, 0);
      }
      throw error;
    }
    const { result, credits } = response;
    if (reservation) month?.settle(reservation, result.charged ?? credits.charged ?? worstCase);
    results.push(result);
    const cost = result.charged ?? credits.charged;
    costs.push(cost);
    bought.push(null);
    if (cost !== undefined) charged = (charged ?? 0) + cost;
    if (credits.remaining !== undefined) remaining = credits.remaining;
    if (store && scope !== undefined) {
      try {
        store.save(scope, domain, {
          found: result.found,
          record: result.found ? { domain, ...result.record } : null,
          credits: cost ?? 0,
          boughtAt: ctx.now(),
          run: null,
        });
      } catch (error) {
        if (!isProblem(error)) throw error;
        ctx.io.warn(`warning: the answer for ${oneLine(domain)} could not be kept: ${error.detail}`);
      }
    }
  }

  const format = formatOf(ctx);
  for (const result of results) {
    if (!result.found) ctx.io.info(`no record for ${oneLine(result.domain)}; nothing charged`);
  }
  const fields = selection?.resultFields?.filter((f) => f !== 'domain');
  if (format === 'table') {
    if (results.length === 1) {
      // A person reads "no record" on stderr.
      if (results[0].found) printRecord(ctx, rowOf(results[0], false));
    } else {
      const rows = results.map((r) => rowOf(r, true));
      printList(ctx, rows, fields ? { columns: ['domain', 'found', ...fields] } : {});
    }
    printCredits(ctx, { charged, remaining });
    return 0;
  }
  const rows = results.map((r, i) => ({
    ...rowOf(r, true),
    credits_charged: costs[i] ?? null,
    bought_at: bought[i],
  }));
  if (format === 'json')
    printJson(ctx, { results: rows, credits: { charged: charged ?? null, remaining: remaining ?? null } });
  else {
    const columns = fields ? ['domain', 'found', ...fields, 'credits_charged', 'bought_at'] : undefined;
    printList(ctx, rows, columns ? { columns } : {});
  }
  return 0;
}
