// `company-data enrich <domain...>`: a few lookups. On a terminal, a record (one domain) or a table
// (several), with the credits on stderr. For scripts, one shape however many domains were given
// (docs/contract.md, "Output of enrich <domain>"): -o json is { results: [...], credits }, like
// search and lookalike; -o ndjson and -o csv give one row per domain, each with credits_charged and
// bought_at. An answer younger than its age limit comes from the result store, at no cost, with a
// line on stderr saying so; an answer bought goes to the store.

import { catalogRetryHook } from '../api/catalogs.js';
import { type EnrichQuery, type EnrichResponse, enrichDomain } from '../api/domains.js';
import type { DomainResult } from '../api/types.js';
import { isoSecond } from '../batch/run-store.js';
import { checkMaxCredits, type Selection } from '../batch/selection.js';
import { normaliseDomain } from '../domain.js';
import { formatOf, printCredits, printJson, printList, printRecord } from '../output/format.js';
import { oneLine } from '../output/sanitize.js';
import { isProblem, Problem } from '../problem.js';
import { domainReported } from '../spend/charges.js';
import { repriceSelection, selectionOf } from '../spend/pricing.js';
import { purchase } from '../spend/purchase.js';
import { type Purse, purseOf } from '../spend/purse.js';
import { ageText, freshnessAt, isPostgresUrl, scopeOf } from '../store/location.js';
import type { AnswerStore } from '../store/types.js';
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

function rowOf(result: DomainResult, withFound: boolean): Record<string, unknown> {
  const row: Record<string, unknown> = { domain: result.domain };
  if (withFound) row.found = result.found;
  return Object.assign(row, result.record);
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
): Promise<Lookups> {
  const domains = normaliseArguments(inputs);
  // The catalog (cached) says the worst case that each lookup holds and sends as max_credits.
  const selection = await selectionOf(ctx, flags);
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
  for (const domain of domains) {
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
    const catalogHook = catalogRetryHook(ctx);
    const { response, charged: cost } = await purchase<EnrichResponse>({
      purse,
      worstCase: selection.worstCase,
      send: (maxCredits, onRetry) => enrichDomain(ctx, domain, query, { onRetry, maxCredits }),
      reported: domainReported,
      backed: true,
      onRetry: catalogHook,
      reprice: (_refused, held) => repriceSelection(ctx, flags, selection, held),
    });
    const { result, credits } = response;
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

export async function runLookups(
  ctx: Context,
  inputs: readonly string[],
  flags: LookupFlags,
): Promise<number> {
  const { selection, results, costs, bought, charged, remaining } = await lookupDomains(ctx, inputs, flags);
  const format = formatOf(ctx);
  for (const result of results) {
    if (!result.found) ctx.io.info(`no record for ${oneLine(result.domain)}; nothing charged`);
  }
  const fields =
    flags.products || flags.include ? selection.resultFields?.filter((f) => f !== 'domain') : undefined;
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
