// What a run over several seeds prints (docs/lookalike.md): the fused rows on stdout in the
// chosen format, each seed's fate and the totals on stderr, and the exit code the outcomes add
// up to. The one-seed form prints through src/lookalike/single.ts, with the helpers shared here.

import type { Row } from '../api/search.js';
import { excludedRowsNote, rowDomainKey } from '../exclusions.js';
import { formatOf, printCredits, printJson, printList } from '../output/format.js';
import { oneLine } from '../output/sanitize.js';
import { Problem } from '../problem.js';
import { summariseEvidence } from '../search/evidence.js';
import { runExitCode } from '../spend/stops.js';
import { plural } from '../text.js';
import type { Context } from '../types.js';
import type { SeedOutcome, SeedRun } from './fetch.js';
import { fuseRankings } from './fusion.js';

export interface FusedView {
  /** The final number of rows. */
  k: number;
  evidence: boolean;
  include?: readonly string[];
  /** Domains left out: the seeds and the exclusions. */
  exclude: ReadonlySet<string>;
  /** The user's exclusions alone (--exclude, --exclude-domain): how many came back is said. */
  excluded?: ReadonlySet<string>;
}

/** How many distinct candidates of the answers name one of the user's exclusions. */
export function excludedCandidates(
  rows: ReadonlyArray<{ domain?: unknown }>,
  excluded: ReadonlySet<string> | undefined,
): number {
  if (!excluded?.size) return 0;
  const named = new Set<string>();
  for (const row of rows) {
    const key = rowDomainKey(row.domain);
    if (key !== undefined && excluded.has(key)) named.add(key);
  }
  return named.size;
}

/** The members every fused row starts with; the candidate's own fields follow. */
const FUSED_MEMBERS = ['rank', 'domain', 'score', 'seed_count', 'similar_to'];
const PER_SEED_MEMBERS = new Set([...FUSED_MEMBERS, 'seed_ranks', 'seed_scores', 'evidence']);

interface Candidate {
  domain: string;
  rank: number;
  row: Row;
}

/** The domain a candidate is fused and excluded by: normalised like the seeds and exclusions. */
export const candidateDomain = rowDomainKey;

function candidatesOf(outcome: SeedOutcome): Candidate[] {
  if (outcome.status !== 'found') return [];
  return outcome.result.candidates.flatMap((row) => {
    const domain = candidateDomain(row.domain);
    return domain === undefined ? [] : [{ domain, rank: row.rank as number, row }];
  });
}

/** The fused rows, best first: fused rank and score, the seeds, then the candidate's fields. */
export function fusedRows(outcomes: readonly SeedOutcome[], view: FusedView): Row[] {
  const lists = outcomes.map((outcome) => ({ seed: outcome.seed, candidates: candidatesOf(outcome) }));
  return fuseRankings(lists, { exclude: view.exclude, limit: view.k }).map((fused, index) => {
    const {
      rank: _rank,
      score: _score,
      domain: _domain,
      evidence: _evidence,
      ...fields
    } = fused.matches[0].candidate.row;
    const perSeed = (pick: (row: Row) => unknown) =>
      Object.fromEntries(
        fused.matches
          .map(({ seed, candidate }) => [seed, pick(candidate.row)] as const)
          .filter(([, value]) => value !== undefined),
      );
    const row: Row = {
      rank: index + 1,
      domain: fused.domain,
      score: fused.score,
      seed_count: fused.matches.length,
      similar_to: fused.matches.map((m) => m.seed),
      seed_ranks: perSeed((r) => r.rank),
      seed_scores: perSeed((r) => r.score),
      ...fields,
    };
    if (view.evidence) row.evidence = perSeed((r) => r.evidence);
    return row;
  });
}

/** The keys of the rows in first-seen order, but those in `skip`. */
export function fieldsOf(rows: readonly Row[], skip: ReadonlySet<string>): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) if (!skip.has(key)) seen.add(key);
  return [...seen];
}

/**
 * Table and CSV columns: the leading members, the fields (--include's, else `defaults`), and
 * "why" with --evidence.
 */
export function listColumns(
  lead: readonly string[],
  defaults: readonly string[],
  view: Pick<FusedView, 'include' | 'evidence'>,
): string[] {
  const fields = view.include ?? defaults;
  const columns = [...lead, ...fields.filter((f) => !lead.includes(f))];
  return view.evidence ? [...columns, 'why'] : columns;
}

/** Rows as a table or CSV shows them: the score rounded for a person, and "why" with --evidence. */
export function shownRows(
  ctx: Context,
  rows: readonly Row[],
  decimals: number,
  why: ((row: Row) => string) | undefined,
): Row[] {
  const table = formatOf(ctx) === 'table';
  const scale = 10 ** decimals;
  return rows.map((row) => ({
    ...row,
    score: table && typeof row.score === 'number' ? Math.round(row.score * scale) / scale : row.score,
    why: why?.(row),
  }));
}

/** Each seed in the -o json document: what happened to it, the same members for every seed. */
function seedStatus(outcome: SeedOutcome): Record<string, unknown> {
  const failed = outcome.status === 'failed' || outcome.status === 'not_requested';
  const problem = failed ? outcome.problem : undefined;
  return {
    seed: outcome.seed,
    status: outcome.status,
    candidates:
      outcome.status === 'found' || outcome.status === 'not_available'
        ? outcome.result.candidates.length
        : null,
    credits_charged: 'charged' in outcome ? outcome.charged : null,
    error_code: problem?.code ?? null,
    error_detail: problem ? problem.detail || problem.title : null,
  };
}

/** An answer without a recognisable list cannot be fused: that seed failed. */
function recognised(outcome: SeedOutcome): SeedOutcome {
  if (outcome.status !== 'unrecognised') return outcome;
  const problem = new Problem({
    code: 'unexpected_response',
    detail: 'lookalike response has no recognisable list of candidates',
    source: 'client',
  });
  return { seed: outcome.seed, status: 'failed', problem };
}

function reportSeeds(ctx: Context, outcomes: readonly SeedOutcome[], run: SeedRun): void {
  for (const outcome of outcomes) {
    const seed = oneLine(outcome.seed);
    if (outcome.status === 'not_available')
      ctx.io.info(`no lookalikes available for ${seed}; nothing charged`);
    if (outcome.status === 'failed') {
      const { title, code, detail } = outcome.problem;
      ctx.io.warn(
        `warning: lookalikes of ${seed} failed: ${oneLine(title)} (${code})${detail ? `: ${oneLine(detail)}` : ''}`,
      );
    }
  }
  const skipped = outcomes.filter((o) => o.status === 'not_requested').map((o) => oneLine(o.seed));
  if (skipped.length > 0 && run.stopped) {
    warnStopped(ctx, run.stopped, `${plural(skipped.length, 'seed')} not requested (${skipped.join(', ')})`);
  }
}

/** What stopped the run for credits, what it left out, and what to do next. */
export function warnStopped(ctx: Context, stopped: Problem, left: string): void {
  const budget = stopped.code === 'budget_exhausted';
  const why = budget ? stopped.detail : `${oneLine(stopped.title)} (${stopped.code})`;
  ctx.io.warn(`warning: ${why}: ${left}`);
  // The batch's hint speaks of its journal; a lookalike run keeps nothing, so every seed is bought again.
  const raise = stopped.detail.startsWith('--budget-month')
    ? 'Raise --budget-month (or wait for the next month) and run again; every seed is requested again.'
    : 'Raise --budget and run again; every seed is requested again.';
  ctx.io.warn(`  ${budget ? raise : oneLine(stopped.hint)}`);
}

/**
 * Prints the fused result and returns the exit code: 4 when credits stopped the run, 6 when some
 * seeds failed and others answered, 0 otherwise. Throws when no seed answered for another reason
 * (the first failure's problem, with its own exit code) or when the run was aborted.
 */
export function printFused(ctx: Context, run: SeedRun, view: FusedView): number {
  if (run.fatal) throw run.fatal;
  const outcomes = run.outcomes.map(recognised);
  const answered = outcomes.filter((o) => o.status === 'found' || o.status === 'not_available').length;
  const firstFailure = outcomes.find((o) => o.status === 'failed');
  if (answered === 0 && !run.stopped && firstFailure?.status === 'failed') throw firstFailure.problem;

  const rows = fusedRows(outcomes, view);
  const mode = formatOf(ctx);
  if (mode === 'json') {
    printJson(ctx, {
      seeds: outcomes.map(seedStatus),
      k: view.k,
      results: rows,
      credits: { charged: run.credits.charged ?? null, remaining: run.credits.remaining ?? null },
    });
  } else if (mode === 'ndjson') printList(ctx, rows);
  else {
    // On a terminal similar_to takes the room of the default fields, as "why" does with one
    // seed; -o csv keeps them; --include names the fields either shows.
    const defaults = mode === 'table' || view.evidence ? [] : fieldsOf(rows, PER_SEED_MEMBERS);
    const why = view.evidence
      ? (row: Row) =>
          Object.entries(row.evidence as Record<string, unknown>)
            .map(([seed, evidence]) => `${seed}: ${summariseEvidence(evidence)}`)
            .join(' | ')
      : undefined;
    printList(ctx, shownRows(ctx, rows, 4, why), { columns: listColumns(FUSED_MEMBERS, defaults, view) });
  }
  reportSeeds(ctx, outcomes, run);
  const left = excludedCandidates(
    outcomes.flatMap((o) => (o.status === 'found' ? o.result.candidates : [])),
    view.excluded,
  );
  if (left > 0) ctx.io.info(excludedRowsNote(left, false));
  const fused = outcomes.filter((o) => o.status === 'found').length;
  if (rows.length > 0) ctx.io.info(`${plural(rows.length, 'lookalike')} from ${plural(fused, 'seed')}`);
  else if (answered > 0) ctx.io.info(`No lookalikes from ${plural(answered, 'seed')}.`);
  printCredits(ctx, run.credits);
  return runExitCode(firstFailure ? 1 : 0, run.stopped);
}
