// The paid tools: enrich, search, breakdown, lookalike. Thin adapters over the operations the
// commands of the same name use (src/ops/): each plans from its arguments, runs the operation with
// the session's purse, the call's stop and progress, and answers with the rows projected to the
// fields asked for, within the cap.

import { excludedRowsNote } from '../exclusions.js';
import { fusedRows } from '../lookalike/output.js';
import { breakdownOnce, planBreakdown } from '../ops/breakdown.js';
import type { OpControl as ToolCall } from '../ops/control.js';
import { lookupDomains } from '../ops/enrich.js';
import { DEFAULT_CONCURRENCY, lookalikesOf, planLookalike } from '../ops/lookalike.js';
import { planSearch, searchOnce } from '../ops/search.js';
import type { Problem } from '../problem.js';
import { explainProblem } from '../search/options.js';
import { credits } from '../spend/purse.js';
import { answer, fitRows, incompleteOf, type Json, project, type ToolResult, truncation } from './answers.js';
import type { ArgsOf } from './schemas.js';
import type { Session } from './session.js';

/** Shell-quoted for a command line a person can paste. */
function quote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

function filterFlags(filters: Record<string, string[]> | undefined): string[] {
  return filters && Object.keys(filters).length > 0 ? ['--filters', quote(JSON.stringify(filters))] : [];
}

/** What a list of rows cut at the cap says: how many more, and the three ways to get them. */
function rowsTruncation(shown: number, omitted: number, cli: string): Json | undefined {
  return truncation(
    shown,
    omitted,
    `${omitted} more rows were left out. Ask for fewer fields (include) or fewer rows (limit), or have the user run \`${cli}\` to get them all in a file.`,
  );
}

function countOf(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export async function enrichTool(
  session: Session,
  args: ArgsOf<'enrich'>,
  call: ToolCall,
): Promise<ToolResult> {
  const { ctx, purse } = session;
  const flags = { products: args.products, include: args.include };
  const lookups = await lookupDomains(ctx, args.domains, flags, purse, call);
  const rows = lookups.results.map((result, i) => ({
    domain: result.domain,
    found: result.found,
    ...result.record,
    credits_charged: lookups.costs[i] ?? null,
    bought_at: lookups.bought[i],
  }));
  const shown = project(rows, args.include, ['found', 'credits_charged', 'bought_at']);
  const report = await session.credits(lookups.charged, lookups.remaining);
  const cli = ['company-data enrich', ...lookups.results.map((r) => r.domain)];
  if (args.products) cli.push('--products', args.products.join(','));
  if (args.include) cli.push('--include', args.include.join(','));
  const stop = lookups.incomplete;
  const incomplete = stop && incompleteOf(stop.problem, stop.notLookedUp);
  const build = (kept: Json[], omitted: number): Json => ({
    results: kept,
    credits: report,
    truncated: rowsTruncation(kept.length, omitted, `${cli.join(' ')} -o csv > enriched.csv`),
    ...(incomplete ? { incomplete } : {}),
  });
  const fitted = fitRows(shown, build);
  const found = rows.filter((r) => r.found).length;
  const stopped = incomplete
    ? ` Stopped before ${countOf(stop.notLookedUp.length, 'domain')} (${incomplete.detail}); those were not looked up.`
    : '';
  return answer(
    `${countOf(rows.length, 'domain')}, ${found} found; ${credits(lookups.charged ?? 0)} charged.${stopped} ${await session.describeCaps()}.`,
    build(fitted.rows, fitted.omitted),
  );
}

export async function searchTool(
  session: Session,
  args: ArgsOf<'search'>,
  call: ToolCall,
): Promise<ToolResult> {
  const { ctx } = session;
  const request = await planSearch(ctx, args.query, {
    filters: args.filters ? JSON.stringify(args.filters) : undefined,
    include: args.include?.join(','),
    limit: args.limit,
    excludeDomain: args.exclude_domains,
  });
  const {
    result,
    rows: kept,
    dropped,
    charged,
    credits: reported,
  } = await searchOnce(ctx, request, {
    purse: session.purse,
    signal: call.signal,
    spinner: false,
  });
  // The exclusions hold on the client too, as for `company-data search`: a row naming one is left out.
  if (dropped > 0) ctx.io.warn(excludedRowsNote(dropped, true));
  const rows = project(kept, args.include);
  const report = await session.credits(charged, reported.remaining);
  const cli = [
    'company-data search',
    ...(args.query ? [quote(args.query)] : []),
    ...filterFlags(args.filters),
  ];
  if (args.include) cli.push('--include', args.include.join(','));
  if (args.limit) cli.push('--limit', String(args.limit));
  const excluded = request.excludeDomains ?? [];
  if (excluded.length > 10) cli.push('--exclude excluded.txt');
  else for (const domain of excluded) cli.push('--exclude-domain', domain);
  cli.push(
    `-o csv > rows.csv${excluded.length > 10 ? ' (excluded.txt: the exclude_domains, one per line)' : ''}`,
  );
  const build = (kept: Json[], omitted: number): Json => ({
    total: result.total,
    rows: kept,
    credits: report,
    truncated: rowsTruncation(kept.length, omitted, cli.join(' ')),
  });
  const fitted = fitRows(rows, build);
  const shownNote = fitted.omitted > 0 ? ` (${fitted.omitted} more left out: see truncated)` : '';
  return answer(
    `${countOf(fitted.rows.length, 'row')} of ${result.total} matching companies${shownNote}; ${credits(charged)} charged. ${await session.describeCaps()}.`,
    build(fitted.rows, fitted.omitted),
  );
}

export async function breakdownTool(
  session: Session,
  args: ArgsOf<'breakdown'>,
  call: ToolCall,
): Promise<ToolResult> {
  const { ctx } = session;
  const request = await planBreakdown(ctx, args.field, args.query, {
    filters: args.filters ? JSON.stringify(args.filters) : undefined,
    limit: args.limit,
  });
  const {
    result,
    charged,
    credits: reported,
  } = await breakdownOnce(ctx, request, {
    purse: session.purse,
    signal: call.signal,
  });
  const { field } = result;
  return answer(
    `Breakdown of ${result.segment.size ?? 'the'} companies by ${field} in ${countOf(result.buckets.length, 'bucket')}; ${credits(charged)} charged. ${await session.describeCaps()}.`,
    { ...result.document, field, credits: await session.credits(charged, reported.remaining) },
  );
}

export async function lookalikeTool(
  session: Session,
  args: ArgsOf<'lookalike'>,
  call: ToolCall,
): Promise<ToolResult> {
  const { ctx } = session;
  const flags = {
    k: args.k,
    include: args.include?.join(','),
    evidence: args.evidence,
    filters: args.filters ? JSON.stringify(args.filters) : undefined,
  };
  const plan = await planLookalike(ctx, args.seeds, flags);
  const run = await lookalikesOf(ctx, plan, {
    concurrency: DEFAULT_CONCURRENCY,
    purse: session.purse,
    pacer: plan.requests.length > 1 ? session.pacer() : undefined,
    spinner: false,
    ...call,
  });
  const first = plan.requests[0];
  const explain = (error: Problem) => explainProblem(ctx, error, { filters: first.filters, limit: first.k });
  if (run.fatal) throw await explain(run.fatal);
  const answered = run.outcomes.filter((o) => o.status === 'found' || o.status === 'not_available');
  if (answered.length === 0) {
    const failed = run.outcomes.find((o) => o.status === 'failed' || o.status === 'not_requested');
    if (failed && 'problem' in failed) throw await explain(run.stopped ?? failed.problem);
  }
  let results: Json[];
  if (plan.single) {
    const outcome = run.outcomes[0];
    results = outcome.status === 'found' ? outcome.result.candidates : [];
  } else {
    results = fusedRows(run.outcomes, {
      k: plan.k,
      evidence: first.evidence,
      include: first.include,
      exclude: plan.exclude,
    });
  }
  const keep = ['rank', 'score', 'seed_count', 'similar_to', 'seed_ranks', 'seed_scores', 'evidence'];
  const rows = project(results, args.include, keep);
  const seeds = run.outcomes.map((o) => ({
    seed: o.seed,
    status: o.status,
    credits_charged: 'charged' in o ? o.charged : null,
    error_code: 'problem' in o ? o.problem.code : null,
  }));
  const charged = run.outcomes.reduce((n, o) => n + ('charged' in o ? o.charged : 0), 0);
  const report = await session.credits(charged, run.credits.remaining);
  const cli = ['company-data lookalike', ...plan.requests.map((r) => r.seed), ...filterFlags(args.filters)];
  if (args.k) cli.push('-k', String(args.k));
  if (args.include) cli.push('--include', args.include.join(','));
  if (args.evidence) cli.push('--evidence');
  const notRequested = run.outcomes.filter((o) => o.status === 'not_requested').map((o) => o.seed);
  const incomplete =
    run.stopped || notRequested.length > 0 ? incompleteOf(run.stopped, notRequested) : undefined;
  const build = (kept: Json[], omitted: number): Json => ({
    results: kept,
    seeds,
    credits: report,
    truncated: rowsTruncation(kept.length, omitted, `${cli.join(' ')} -o json > lookalikes.json`),
    ...(incomplete ? { incomplete } : {}),
  });
  const fitted = fitRows(rows, build);
  const stoppedNote = run.stopped ? ` Stopped early: ${run.stopped.detail}.` : '';
  return answer(
    `${countOf(fitted.rows.length, 'lookalike')} of ${plan.requests.map((r) => r.seed).join(', ')}; ${credits(charged)} charged.${stoppedNote} ${await session.describeCaps()}.`,
    build(fitted.rows, fitted.omitted),
  );
}
