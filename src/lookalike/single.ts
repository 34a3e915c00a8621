// What a run over one seed prints: the service's own ranking, as lookalike printed it before
// several seeds existed (docs/lookalike.md, "Two forms"). With exclusions the excluded candidates
// are removed and the service's ranks kept, so a gap shows where one was.

import { CANDIDATE_MEMBERS } from '../api/lookalike.js';
import type { Row } from '../api/search.js';
import { noListProblem } from '../api/search.js';
import { excludedRowsNote } from '../exclusions.js';
import { formatOf, printCredits, printJson, printList } from '../output/format.js';
import { summariseEvidence } from '../search/evidence.js';
import type { Context } from '../types.js';
import type { SeedRun } from './fetch.js';
import {
  candidateDomain,
  excludedCandidates,
  fieldsOf,
  listColumns,
  shownRows,
  warnStopped,
} from './output.js';

export interface SingleView {
  requests: ReadonlyArray<{ seed: string; evidence: boolean; include?: readonly string[] }>;
  /** The count to cut to when exclusions made the request ask for more. */
  k: number;
  exclude: ReadonlySet<string>;
  exclusions: number;
  /** The user's exclusions alone: how many came back is said. */
  excluded?: ReadonlySet<string>;
}

const LEAD = ['rank', 'domain', 'score'];

/** Prints the one seed's answer and returns the exit code; throws the problem of a failed request. */
export async function printSingle(ctx: Context, run: SeedRun, view: SingleView): Promise<number> {
  const { seed, evidence, include } = view.requests[0];
  const outcome = run.outcomes[0];
  if (run.fatal) throw run.fatal;
  if (outcome.status === 'failed') throw outcome.problem;
  if (outcome.status === 'not_requested') {
    warnStopped(ctx, outcome.problem, `lookalikes of ${seed} not requested`);
    return 4;
  }
  // Never the raw body on stdout: a script would read it as candidates.
  if (outcome.status === 'unrecognised')
    throw noListProblem(`/api/lookalike/${seed}`, 'candidates', CANDIDATE_MEMBERS);
  const { result, response } = outcome;
  const mode = formatOf(ctx);
  if (!result.found) {
    ctx.io.info(`no lookalikes available for ${seed}; nothing charged`);
    if (mode === 'json') printJson(ctx, result.document);
    return 0;
  }
  let candidates: Row[] = result.candidates;
  let document = result.document;
  const left = excludedCandidates(candidates, view.excluded);
  if (view.exclusions > 0) {
    candidates = candidates
      .filter((c) => !view.exclude.has(candidateDomain(c.domain) ?? ''))
      .slice(0, view.k);
    document = { ...document, k: view.k, results: candidates };
  }
  if (mode === 'json') printJson(ctx, document);
  else if (mode === 'ndjson') printList(ctx, candidates);
  else {
    // With --evidence and no --include, the "why" needs the room more than the default fields
    // do (they stay in every other format); --include brings any of them back.
    const defaults = evidence ? [] : fieldsOf(candidates, new Set(['evidence']));
    const why = evidence ? (row: Row) => summariseEvidence(row.evidence) : undefined;
    printList(ctx, shownRows(ctx, candidates, 3, why), {
      columns: listColumns(LEAD, defaults, { include, evidence }),
    });
  }
  if (left > 0) ctx.io.info(excludedRowsNote(left, false));
  if (candidates.length === 0) ctx.io.info(`No lookalikes for ${seed} match.`);
  else ctx.io.info(`${candidates.length} lookalike${candidates.length === 1 ? '' : 's'} of ${seed}`);
  printCredits(ctx, response.credits);
  return 0;
}
