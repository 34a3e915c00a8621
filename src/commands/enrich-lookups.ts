// `company-data enrich <domain...>`: a few lookups, shown as a record (one domain) or a table
// (several), with the credits on stderr.
import { catalogRetryHook, loadFields, loadProducts } from '../api/catalogs.js';
import { type EnrichQuery, enrichDomain } from '../api/domains.js';
import type { DomainResult } from '../api/types.js';
import { checkMaxCredits, resolveSelection, type Selection } from '../batch/selection.js';
import { normaliseDomain } from '../domain.js';
import { formatOf, printCredits, printList, printRecord } from '../output/format.js';
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
  let charged: number | undefined;
  let remaining: number | undefined;
  for (const domain of domains) {
    const { result, credits } = await enrichDomain(ctx, domain, query, { onRetry: catalogRetryHook(ctx) });
    results.push(result);
    const cost = result.charged ?? credits.charged;
    if (cost !== undefined) charged = (charged ?? 0) + cost;
    if (credits.remaining !== undefined) remaining = credits.remaining;
  }

  const table = formatOf(ctx) === 'table';
  for (const result of results) {
    if (!result.found) ctx.io.info(`no record for ${oneLine(result.domain)}; nothing charged`);
  }
  if (results.length === 1) {
    const [only] = results;
    // A person reads "no record" on stderr; a script gets the found: false object on stdout.
    if (only.found || !table) printRecord(ctx, rowOf(only, !table));
  } else {
    const fields = selection?.resultFields?.filter((f) => f !== 'domain');
    const rows = results.map((r) => rowOf(r, true));
    printList(ctx, rows, fields ? { columns: ['domain', 'found', ...fields] } : {});
  }
  printCredits(ctx, { charged, remaining });
  return 0;
}
