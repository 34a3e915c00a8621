// `company-data enrich <domain...>`: a few lookups. On a terminal, a record (one domain) or a table
// (several), with the credits on stderr. For scripts, one shape however many domains were given
// (docs/contract.md, "Output of enrich <domain>"): -o json is { results: [...], credits }, like
// search and lookalike; -o ndjson and -o csv give one row per domain, each with credits_charged and
// bought_at. An answer younger than its age limit comes from the result store, at no cost, with a
// line on stderr saying so; an answer bought goes to the store.

import type { DomainResult } from '../api/types.js';
import { type LookupFlags, lookupDomains } from '../ops/enrich.js';
import { formatOf, printCredits, printJson, printList, printRecord } from '../output/format.js';
import { oneLine } from '../output/sanitize.js';
import type { Context } from '../types.js';

export type { LookupFlags };

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
  const { selection, results, costs, bought, charged, remaining, incomplete } = await lookupDomains(
    ctx,
    inputs,
    flags,
  );
  // The command stops on the problem, as it always has (with a store, what it bought is reused).
  if (incomplete?.problem) throw incomplete.problem;
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
