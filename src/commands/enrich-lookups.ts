// `company-data enrich <domain...>`: a few lookups. On a terminal, a record (one domain) or a table
// (several), with the credits on stderr. For scripts, one shape however many domains were given
// (docs/contract.md, "Output of enrich <domain>"): -o json is { results: [...], credits }, like
// search and lookalike; -o ndjson and -o csv give one row per domain, each with credits_charged.
import { catalogRetryHook, loadFields, loadProducts } from '../api/catalogs.js';
import { type EnrichQuery, enrichDomain } from '../api/domains.js';
import type { DomainResult } from '../api/types.js';
import { checkMaxCredits, resolveSelection, type Selection } from '../batch/selection.js';
import { normaliseDomain } from '../domain.js';
import { formatOf, printCredits, printJson, printList, printRecord } from '../output/format.js';
import { oneLine } from '../output/sanitize.js';
import { Problem } from '../problem.js';
import type { Context } from '../types.js';

export interface LookupFlags {
  products?: string[];
  include?: string[];
  maxCredits?: number;
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
  if (flags.products || flags.include || flags.maxCredits !== undefined) {
    const [products, fields] = await Promise.all([loadProducts(ctx), loadFields(ctx)]);
    selection = resolveSelection({ products, fields }, flags);
    checkMaxCredits(selection, flags.maxCredits);
  }
  const query: EnrichQuery = {
    products: flags.products,
    include: flags.include,
    maxCredits: flags.maxCredits,
  };
  const results: DomainResult[] = [];
  const costs: Array<number | undefined> = [];
  let charged: number | undefined;
  let remaining: number | undefined;
  for (const domain of domains) {
    const { result, credits } = await enrichDomain(ctx, domain, query, { onRetry: catalogRetryHook(ctx) });
    results.push(result);
    const cost = result.charged ?? credits.charged;
    costs.push(cost);
    if (cost !== undefined) charged = (charged ?? 0) + cost;
    if (credits.remaining !== undefined) remaining = credits.remaining;
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
  const rows = results.map((r, i) => ({ ...rowOf(r, true), credits_charged: costs[i] ?? null }));
  if (format === 'json')
    printJson(ctx, { results: rows, credits: { charged: charged ?? null, remaining: remaining ?? null } });
  else {
    const columns = fields ? ['domain', 'found', ...fields, 'credits_charged'] : undefined;
    printList(ctx, rows, columns ? { columns } : {});
  }
  return 0;
}
