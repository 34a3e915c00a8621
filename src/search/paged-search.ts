// `search --all` / `--max-rows`: runs the paging loop (src/search/paging.ts) with its output
// (src/search/row-stream.ts), its progress on a terminal, Ctrl-C, and what is said at the end:
// the summary, and for a run that stopped early (budget, a failed page, Ctrl-C) the command that
// continues it. docs/search.md has the decisions.
import { fstatSync, readlinkSync } from 'node:fs';
import type { SearchRequest } from '../api/search.js';
import { MAX_SEARCH_LIMIT } from '../api/search.js';
import { excludedRowsNote, MAX_EXCLUSIONS } from '../exclusions.js';
import { formatOf, printCredits } from '../output/format.js';
import { groupDigits } from '../output/numbers.js';
import { Problem, type ProblemInit } from '../problem.js';
import { pacerFor } from '../rate-option.js';
import type { Context } from '../types.js';
import { explainProblem } from './options.js';
import { fetchPages, type PageProgress, type PagingOutcome } from './paging.js';
import { rowStream } from './row-stream.js';

export interface PagingFlags {
  all?: boolean;
  maxRows?: number;
  budget?: number;
  budgetMonth?: number;
  rate?: number;
}

/** A stop whose hint is the way to continue, instead of its code's usual remedy. */
class StoppedEarly extends Problem {
  readonly #hint: string;
  constructor(init: ProblemInit, hint: string) {
    super(init);
    this.#hint = hint;
  }
  override get hint(): string {
    return this.#hint;
  }
}

function companies(n: number): string {
  return `${groupDigits(n)} ${n === 1 ? 'company' : 'companies'}`;
}

function notFetched(n: number): string {
  return `${groupDigits(n)} matching ${n === 1 ? 'company was' : 'companies were'} not fetched`;
}

function credits(n: number): string {
  return `${groupDigits(n)} credit${n === 1 ? '' : 's'}`;
}

function pagesText(n: number): string {
  return `${groupDigits(n)} page${n === 1 ? '' : 's'}`;
}

/** "3,000 of 5,210 companies", or "3,000 companies" when the service gave no total. */
function ofTotal(outcome: PagingOutcome): string {
  return outcome.total === undefined
    ? companies(outcome.fetched)
    : `${groupDigits(outcome.fetched)} of ${companies(outcome.total)}`;
}

function progressText(p: PageProgress): string {
  const of = p.total === undefined ? '' : ` of ~${groupDigits(p.total)}`;
  return `page ${p.page}: ${groupDigits(p.fetched)}${of} ${p.fetched === 1 && !of ? 'row' : 'rows'}`;
}

/** A word the shell reads back as itself. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The path of stdout when it is a regular file (Linux's /proc), else undefined. */
function stdoutPath(ctx: Context): string | undefined {
  const fd = (ctx.io.stdout as { fd?: unknown }).fd;
  if (typeof fd !== 'number') return undefined;
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** The arguments of this run for the next one: --max-rows lowered by what was fetched. */
function nextArgv(argv: readonly string[], maxRowsLeft: number | undefined): string[] {
  const out = [...argv];
  if (maxRowsLeft === undefined) return out;
  for (let i = 0; i < out.length; i++) {
    if (out[i] === '--max-rows' && i + 1 < out.length) out[i + 1] = String(maxRowsLeft);
    else if (out[i].startsWith('--max-rows=')) out[i] = `--max-rows=${maxRowsLeft}`;
  }
  return out;
}

/**
 * How to carry on from where the run stopped: the same command with the rows already written
 * added as an exclusion file (every output format of search is one `--exclude` reads), into
 * another file. A table (or rows shown on a terminal) cannot be excluded: the hint says how to
 * keep the rows in a file next time.
 */
function continueHint(ctx: Context, outcome: PagingOutcome, flags: PagingFlags): string {
  const left = flags.maxRows === undefined ? undefined : flags.maxRows - outcome.fetched;
  const words = ['company-data', ...nextArgv(ctx.argv, left)];
  const format = formatOf(ctx);
  if (outcome.fetched === 0) return '';
  if (format === 'table' || ctx.io.isStdoutTTY) {
    // From the start again: the rows on the screen cannot be excluded.
    const again = ['company-data', ...ctx.argv];
    const keep = format === 'table' ? [...again, '-o', 'csv'] : again;
    return `The rows so far are shown above; to be able to continue after a stop, write them to a file: ${keep.map(shellWord).join(' ')} > companies.${format === 'table' ? 'csv' : format}`;
  }
  const path = stdoutPath(ctx);
  const next = path ? path.replace(/(\.[^./]*)?$/, (ext) => `-2${ext || `.${format}`}`) : `more.${format}`;
  const exclude = path ? shellWord(path) : '<the file holding the rows written so far>';
  return `Continue with: ${words.map(shellWord).join(' ')} --exclude ${exclude} > ${shellWord(next)}`;
}

/**
 * SIGINT / SIGTERM during the run: the page in flight is abandoned (nothing more is written) and
 * the run ends with 130. A second signal ends the process at once. The handler stays until the
 * run ends: a spinner library's own listener (ora's cursor restorer) re-raises a signal that no
 * other listener handles, which would end the process before the rows got so far are shown.
 */
function watchInterrupts(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const dispose = () => {
    for (const name of signals) process.off(name, handler);
  };
  const handler = (name: NodeJS.Signals) => {
    if (!controller.signal.aborted) {
      controller.abort();
      return;
    }
    dispose();
    process.kill(process.pid, name);
  };
  for (const name of signals) process.on(name, handler);
  return { signal: controller.signal, dispose };
}

/** The run's own members of `-o json`, after `rows`. */
function jsonTail(outcome: PagingOutcome): Record<string, unknown> {
  return {
    fetched: outcome.fetched,
    complete: outcome.reason === 'complete',
    stopped: outcome.reason,
    not_fetched: outcome.notFetched ?? null,
    pages: outcome.pages,
    credits: { charged: outcome.charged },
  };
}

/** Runs `search --all` / `--max-rows`; rows are written as they come. */
export async function runPagedSearch(
  ctx: Context,
  request: SearchRequest,
  flags: PagingFlags,
): Promise<number> {
  const stream = rowStream(ctx, request.include);
  const interrupts = watchInterrupts();
  // Progress only where it cannot mix with rows on the same screen.
  const progress =
    ctx.io.isStderrTTY && (!ctx.io.isStdoutTTY || formatOf(ctx) === 'table')
      ? ctx.io.spinner('page 1…')
      : undefined;
  let outcome: PagingOutcome;
  try {
    const { purseOf } = await import('../spend/purse.js');
    outcome = await fetchPages(ctx, request, stream, {
      maxRows: flags.maxRows,
      purse: await purseOf(ctx, { budget: flags.budget, budgetMonth: flags.budgetMonth }),
      pacer: pacerFor(ctx, flags.rate),
      signal: interrupts.signal,
      onPage: (p) => progress?.update(progressText(p)),
      outputGone: () => ctx.io.outputClosed,
    });
  } finally {
    interrupts.dispose();
    progress?.stop();
  }
  stream.finish(jsonTail(outcome));
  return finish(ctx, request, flags, outcome);
}

async function finish(
  ctx: Context,
  request: SearchRequest,
  flags: PagingFlags,
  outcome: PagingOutcome,
): Promise<number> {
  const { io } = ctx;
  const pages = pagesText(outcome.pages);
  if (outcome.excludedReturned > 0) io.warn(excludedRowsNote(outcome.excludedReturned, true));
  switch (outcome.reason) {
    case 'complete':
      io.info(
        outcome.fetched === 0
          ? 'No companies match.'
          : `Fetched all ${companies(outcome.fetched)} (${pages}).`,
      );
      break;
    case 'max_rows':
      io.info(`Stopped at --max-rows ${groupDigits(flags.maxRows ?? 0)}: ${ofTotal(outcome)} (${pages}).`);
      break;
    case 'exclusion_limit': {
      const own = request.excludeDomains?.length ?? 0;
      const reach = MAX_EXCLUSIONS - own + MAX_SEARCH_LIMIT;
      io.warn(
        `Stopped at the service's limit of ${groupDigits(MAX_EXCLUSIONS)} exclusions: ${ofTotal(outcome)} fetched (${pages}); ${notFetched(outcome.notFetched ?? 0)}.`,
      );
      io.warn(
        `A search can page through at most ${groupDigits(reach)} companies${own > 0 ? ` with your ${groupDigits(own)} exclusion${own === 1 ? '' : 's'}` : ''}: split it with --filter (one country at a time, say) and run each part.`,
      );
      break;
    }
    case 'no_new_rows':
      io.warn(
        `Stopped: page ${outcome.pages} brought no company not fetched before, though the service reports ${groupDigits(outcome.notFetched ?? 0)} more; ${ofTotal(outcome)} fetched.`,
      );
      break;
    case 'output_closed':
      // Nobody reads the rows any more; main() decides what that means (docs/architecture.md).
      return 0;
    default:
      break;
  }
  printCredits(ctx, { charged: outcome.charged, remaining: outcome.balance });
  if (outcome.reason === 'complete' || outcome.reason === 'max_rows') return 0;
  if (outcome.reason === 'exclusion_limit' || outcome.reason === 'no_new_rows') return 0;
  throw await stopProblem(ctx, request, flags, outcome);
}

/** The problem that ends a run stopped by its budget, a failed page or Ctrl-C. */
async function stopProblem(
  ctx: Context,
  request: SearchRequest,
  flags: PagingFlags,
  outcome: PagingOutcome,
): Promise<unknown> {
  const hint = continueHint(ctx, outcome, flags);
  const written = `${ofTotal(outcome)} written (${pagesText(outcome.pages)})`;
  if (outcome.reason === 'budget') {
    return new StoppedEarly(
      {
        code: 'budget_exhausted',
        detail: `--budget ${groupDigits(flags.budget ?? 0)} reached after ${credits(outcome.charged)}: ${written}; the next page could cost ${credits(outcome.nextPageCost)}`,
        source: 'client',
      },
      `Raise --budget to fetch more. ${hint}`.trim(),
    );
  }
  if (outcome.reason === 'interrupted') {
    return new StoppedEarly(
      { code: 'interrupted', title: 'Interrupted', detail: `stopped after ${written}`, source: 'client' },
      hint || 'Nothing was written; run the same command again.',
    );
  }
  const error = await explainProblem(ctx, outcome.error, request);
  // A first page that fails is a search that failed: nothing was written, nothing to continue.
  if (!(error instanceof Problem) || outcome.pages === 0) return error;
  return new StoppedEarly(
    {
      code: error.code,
      status: error.status,
      title: error.title,
      detail: `page ${groupDigits(outcome.pages + 1)}: ${error.detail}; ${written} before it`,
      retryable: error.retryable,
      source: error.source,
      retryAfterSeconds: error.retryAfterSeconds,
      cause: error,
    },
    `${error.hint} ${hint}`.trim(),
  );
}
