// A batch enrichment run: read -> normalise -> dedupe -> store or schedule -> write in order.
//
// Rows flow through a bounded reorder window: each row becomes an entry holding its result (or
// the promise of it), the head is written as soon as it is ready, and reading pauses while the
// window is full. Memory therefore holds the window only: the domains met are in a private
// temporary SQLite database of the run (src/batch/seen.ts), the results in the result store
// (src/store/).
import { setMaxListeners } from 'node:events';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { integerFields } from '../api/catalog-views.js';
import { catalogRetryHook, loadFields, loadProducts } from '../api/catalogs.js';
import { keepUnreadable, unreadableDir, unreadableProblem } from '../api/unreadable.js';
import { doubtfulTitle } from '../csv/domain-columns.js';
import type { InputReader, InputRow } from '../csv/input.js';
import { choiceNote, type EncodingChoice } from '../csv/read.js';
import { normaliseDomain } from '../domain.js';
import { mayHaveBeenCharged } from '../http/outcome.js';
import { oneLine } from '../output/sanitize.js';
import { createPacer, type RateSource, type SharedRate } from '../pace.js';
import { Problem } from '../problem.js';
import { fleetRateOf } from '../rate-option.js';
import { repriceSelection } from '../spend/pricing.js';
import { type Purse, purseOf } from '../spend/purse.js';
import { checkMaxCredits, resolveSelection } from '../spend/selection.js';
import { runExitCode } from '../spend/stops.js';
import { freshnessAt, scopeOf } from '../store/location.js';
import { openSqliteStore } from '../store/sqlite.js';
import type { AnswerStore, RunHandle } from '../store/types.js';
import { plural } from '../text.js';
import type { Context } from '../types.js';
import { openBatchInput } from '../workbook/open-input.js';
import { writerFor } from './answer-columns.js';
import { runDryRun } from './dry-run.js';
import { assertSeparateFiles, identity, openInputSource, openOutputTarget, shellQuote } from './files.js';
import { firstRows, headNote } from './head.js';
import { DEFAULT_MAX_CONSECUTIVE_FAILURES, errorResult, Lookups } from './lookup.js';
import { checkMerge, type MergeOptions } from './merge.js';
import type { BatchFormat, RowResult } from './output.js';
import { outputFormatOf } from './output-format.js';
import { ownCopy } from './own-copy.js';
import { type BatchCounts, formatSummary, logLine, progressModeFor, startProgress } from './progress.js';
import { assertReportPath, openReport, outcomeOf } from './report.js';
import { isoSecond, type RunStore, runStoreOf } from './run-store.js';
import { createScheduler } from './scheduler.js';
import { type SeenSet, seenSet } from './seen.js';
import { watchSignals } from './signals.js';
import { emptyOutcomes, type RunFigures, withSummary } from './summary.js';
import { WriteFailures } from './unwritable.js';

export interface BatchOptions {
  input: string;
  output?: string;
  column?: string;
  /** --sheet: a workbook input's sheet, by name or position. */
  sheet?: string;
  delimiter?: string;
  encoding?: EncodingChoice;
  bom?: boolean;
  products?: string[];
  include?: string[];
  maxCredits?: number;
  budget?: number;
  concurrency: number;
  /** Buy again whatever the store holds (answers bought by this run itself excepted). */
  refresh?: boolean;
  /** How long a found answer is reused (default 30 days); not-found answers (default 7 days). */
  maxAgeMs?: number;
  notFoundMaxAgeMs?: number;
  /** A cap on the calendar month's spend of this key, across runs (--budget-month). */
  budgetMonth?: number;
  /** Requests per second (--rate), or asked of the account at the first request; none: no pacing. */
  rate?: RateSource;
  dryRun?: boolean;
  progress?: boolean;
  /** --head: only the first N data rows (a trial run). */
  head?: number;
  /** --merge and --map (merge.ts); absent: append, as always. */
  merge?: MergeOptions;
  /** --report: a line per input row (report.ts). */
  report?: string;
  /** --summary-json: the run's figures as JSON, to a file or (`-`) stderr (summary.ts). */
  summaryJson?: string;
  /** The command line as typed, for the resume hint. */
  argv: readonly string[];
}

/** Results a re-run would not change: these rows need nothing from a resume. */
const FINAL_ERRORS = new Set(['invalid_domain', 'invalid_input']);
const DRAIN_LIMIT_MS = 10_000;
const OUTPUT_CHUNK_CHARS = 64 * 1024;

/**
 * What a run writes (its fingerprint: one process at a time on it, exit 7 for another) and what it
 * reads and asks for (its detail). A run interrupted (kill, Ctrl-C, exit 4 or 5) is continued by
 * the next invocation with both the same. stdin to stdout names no file: each such invocation is a
 * run of its own (it still reuses the store's answers).
 */
async function runIdentity(
  options: BatchOptions,
  scope: number,
): Promise<{ fingerprint: string; detail: string } | undefined> {
  const input = options.input === '-' ? '-' : await identity(options.input);
  const detail = JSON.stringify({ input, scope });
  if (options.output !== undefined && options.output !== '-')
    return { fingerprint: `output:${resolve(options.output)}`, detail };
  if (input === '-') return undefined;
  return { fingerprint: `stdout:${input}`, detail };
}

/** The store of a run: the user's, or with --no-store a scratch one, gone when the run ends. */
async function storeForRun(ctx: Context): Promise<{ store: AnswerStore; discard(): Promise<void> }> {
  if (ctx.store.path !== false) return { store: await ctx.store.open(), discard: async () => {} };
  const dir = await mkdtemp(join(tmpdir(), 'company-data-run-'));
  const store = await openSqliteStore(join(dir, 'scratch.db'));
  return {
    store,
    async discard() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

interface Entry {
  cells: string[];
  /** A later row naming a domain met before (for --report and the summary's outcomes). */
  duplicate?: true;
  /** Where the row is, kept only for --report. */
  place?: { row: number; line: number; domain: string };
  /** Set once known, so the head can be written without waiting. */
  result?: RowResult;
  /** The result on its way; a rejection (a bug) surfaces when the head reaches it. */
  pending?: Promise<RowResult>;
  /** The first row naming its domain: the summary counts the domain when this row is written. */
  first?: boolean;
}

/** An entry whose `result` is filled in when its promise settles. */
function entryOf(cells: string[], result: RowResult | Promise<RowResult>): Entry {
  if (!(result instanceof Promise)) return { cells, result };
  const entry: Entry = { cells, pending: result };
  result.then(
    (settled) => {
      entry.result = settled;
    },
    () => {},
  );
  return entry;
}

/** A duplicate row's result: the first row's, costing nothing itself. */
function asDuplicate(result: RowResult): RowResult {
  return { ...result, credits_charged: 0 };
}

export async function runBatch(ctx: Context, options: BatchOptions): Promise<number> {
  const figures: RunFigures = { outcomes: emptyOutcomes() };
  if (options.summaryJson === undefined || options.dryRun) return runBatchOnce(ctx, options, figures);
  return withSummary(ctx.io, options.summaryJson, figures, options, () =>
    runBatchOnce(ctx, options, figures),
  );
}

async function runBatchOnce(ctx: Context, options: BatchOptions, figures: RunFigures): Promise<number> {
  const { io } = ctx;
  // An output that is the input (or the store) under any name would destroy it.
  await assertSeparateFiles({
    input: options.input,
    output: options.output,
    store: ctx.store.path || undefined,
  });
  if (options.report !== undefined)
    await assertReportPath(options.report, [
      [options.input, '--input'],
      [options.output, '--output'],
      [options.summaryJson, '--summary-json'],
      [ctx.store.path || undefined, 'the result store'],
    ]);
  // Checked in a dry run too: a name and a format that disagree are refused before anything else.
  const written = outputFormatOf(ctx, options.output);
  const catalogs = Promise.all([loadProducts(ctx), loadFields(ctx)]);
  const [products, fields] = await catalogs;
  const selection = resolveSelection({ products, fields }, options);
  checkMaxCredits(selection, options.maxCredits);

  const query = { products: options.products, include: options.include, maxCredits: options.maxCredits };
  const scope = scopeOf(ctx.config, query);
  const fresh = (run?: number, since?: number) =>
    freshnessAt(
      ctx.now(),
      { ...options, refreshSince: options.refresh ? (since ?? ctx.now()) : undefined },
      run,
    );
  const source = await openInputSource(options.input, io);
  const reader = await openBatchInput(source.stream, {
    name: options.input === '-' ? 'stdin' : options.input,
    column: options.column,
    delimiter: options.delimiter,
    encoding: options.encoding,
    sheet: options.sheet,
    reopen: options.input === '-' ? undefined : () => createReadStream(options.input),
  });
  const note = choiceNote(options.input === '-' ? 'stdin' : options.input, reader.choice);
  if (note !== undefined) io.info(note);
  const title = doubtfulTitle(reader.header, options.column);
  if (title !== undefined) {
    io.warn(
      `note: the first line, "${oneLine(title)}", was read as the column's title, not as a domain to look up; put a title line such as "domain" above the domains, or pass --column "${oneLine(title)}" if it is the title`,
    );
  }
  if (options.merge)
    checkMerge(options.merge, reader.header, new Set(fields.map((f) => f.name)), reader.domainColumn);
  if (options.dryRun) {
    // Only an existing store is read: a dry run creates nothing.
    const stored = await ctx.store.openIfExists();
    const scopeId = await stored?.scopeId(scope);
    const rows = options.head === undefined ? reader.rows : await firstRows(reader, options.head);
    return runDryRun(ctx, {
      reader: { ...reader, rows },
      selection,
      storedAnswer:
        stored && scopeId !== undefined ? async (domain) => stored.find(scopeId, domain, fresh()) : undefined,
      merge: options.merge,
      storeNote: stored ? stored.path : ctx.store.path === false ? 'none (--no-store)' : 'none yet',
      budget: options.budget,
    });
  }
  const { store, discard } = await storeForRun(ctx);
  try {
    const scopeId = await store.scopeId(scope);
    const named = await runIdentity(options, scopeId);
    const run = named
      ? await store.beginRun(named.fingerprint, named.detail, ctx.now())
      : await store.beginRun(`unnamed:${process.pid}:${ctx.now()}:${Math.random()}`, '', ctx.now());
    if ('busy' in run) {
      const what =
        options.output && options.output !== '-' ? options.output : `the batch of ${options.input}`;
      throw new Problem({
        code: 'run_busy',
        title: 'Another run is writing this output',
        detail: `${run.busy} is writing ${what} (runs are told apart in the store ${store.path})`,
        source: 'client',
      });
    }
    // Left open unless complete: the same command continues it, with what it bought as its own.
    let complete = false;
    try {
      const purse = await purseOf(ctx, {
        budget: options.budget,
        budgetMonth: options.budgetMonth,
        store: ctx.store.path === false ? undefined : store,
      });
      let rows = reader.rows;
      if (options.head !== undefined) {
        // A trial: its rows first, and what they may cost, before anything is bought.
        const runFresh = fresh(run.id, run.startedAt);
        const head = await firstRows(reader, options.head);
        rows = head;
        io.info(
          await headNote(
            options.head,
            head,
            async (domain) => (await store.find(scopeId, domain, runFresh)) !== undefined,
            selection.worstCase,
          ),
        );
      }
      const runPlan: RunPlan = {
        reader: { ...reader, rows },
        size: source.size,
        selection,
        integers: integerFields(fields),
        format: written,
        store: runStoreOf(store, scopeId, fresh(run.id, run.startedAt), run, ctx.now),
        storePath: ctx.store.path === false ? undefined : store.path,
        seen: await seenSet(),
        // Hosts sharing the store share the key's rate (none with --no-store: a scratch store).
        sharedRate: fleetRateOf(ctx),
        purse,
        run,
        figures,
      };
      try {
        const outcome = await runWithStore(ctx, options, runPlan);
        complete = outcome.complete;
        return outcome.code;
      } finally {
        runPlan.seen.close();
      }
    } finally {
      try {
        await store.endRun(run, complete);
      } catch {
        // A full disk, say: the run stays open, and its owner being gone lets the next one in.
      }
    }
  } finally {
    await discard();
  }
}

interface RunPlan {
  reader: InputReader;
  size: number | undefined;
  selection: ReturnType<typeof resolveSelection>;
  /** Fields the catalog types as whole numbers: read as numbers when sent as text. */
  integers: ReadonlySet<string>;
  format: BatchFormat;
  store: RunStore;
  /** The user's store; undefined with --no-store (nothing kept: a re-run buys again). */
  storePath: string | undefined;
  /** Domains met by this run (src/batch/seen.ts). */
  seen: SeenSet;
  /** The rate shared with the other hosts of the store (docs/store.md); none on SQLite. */
  sharedRate: SharedRate | undefined;
  purse: Purse;
  run: RunHandle;
  /** What the run did, for --summary-json (filled as it ends). */
  figures: RunFigures;
}

async function runWithStore(
  ctx: Context,
  options: BatchOptions,
  plan: RunPlan,
): Promise<{ code: number; complete: boolean }> {
  const { io } = ctx;
  const { reader, selection, format, purse, storePath } = plan;
  // A failed write to the output or the store stops the run (stopSending below).
  const failures = new WriteFailures();
  const target = await openOutputTarget(options.output, io);
  const outputName = target.path ?? 'stdout';
  failures.watch(target.stream, outputName);
  const report = options.report ? await openReport(options.report, io, ctx.config.csvRaw) : undefined;
  const writer = await writerFor(selection, {
    out: target.stream,
    format,
    inputHeader: reader.header,
    domainColumn: reader.domainColumn,
    merge: options.merge,
    sheetName: reader.workbook?.sheet,
    bom: options.bom,
    csvRaw: ctx.config.csvRaw,
    chunkChars: OUTPUT_CHUNK_CHARS,
    terminal: target.path === undefined && io.isStdoutTTY,
  });

  const pacer = createPacer(options.rate, { shared: plan.sharedRate, note: (line) => io.debug(line) });
  // The service's RateLimit headers, when it sends them, pace the run too (src/pace.ts).
  const unwatch = ctx.client.watchRateLimits?.((limits) => pacer.observe(limits));
  const scheduler = createScheduler({ concurrency: options.concurrency, pacer });
  const drain = new AbortController();
  // Every lookup in flight may listen on this signal: Node's warning past 10 listeners must not
  // reach a batch's stderr.
  setMaxListeners(0, drain.signal);
  const lookups = new Lookups({
    client: ctx.client,
    query: { products: options.products, include: options.include, maxCredits: options.maxCredits },
    worstCase: selection.worstCase,
    resultFields: selection.resultFields,
    purse,
    scheduler,
    store: plan.store,
    reprice: (_refused, held) => repriceSelection(ctx, options, selection, held),
    onStoreFailure: (problem) =>
      failures.fail(problem.cause ?? problem, storePath ?? "the run's scratch store"),
    maxConsecutiveFailures: DEFAULT_MAX_CONSECUTIVE_FAILURES,
    signal: drain.signal,
    // An abort (exit 2 or 3) cancels what is in flight at once, not after the rows before it
    // are written: the writer may be waiting for one of them, which could take until its timeout.
    // Not when the service answered the abort's problem (a 401, a 400 for every row): it is
    // answering, so the requests in flight are finished and read, as after Ctrl-C (for at most
    // DRAIN_LIMIT_MS); cancelled, their outcome would be unknown and counted as possibly charged.
    onAbort: (problem) => {
      if (mayHaveBeenCharged(problem)) drain.abort();
      else setTimeout(() => drain.abort(), DRAIN_LIMIT_MS).unref();
    },
    // A catalog changing under the run: later commands must not read the old one from the cache.
    onRetry: catalogRetryHook(ctx),
    integers: plan.integers,
    onUnreadable: (domain, result) =>
      unreadableProblem(
        domain,
        result,
        selection.resultFields,
        keepUnreadable(unreadableDir(ctx.config.cacheDir), domain, result, selection.resultFields, ctx.now()),
      ),
  });

  const counts: BatchCounts = {
    rows: 0,
    uniqueDomains: 0,
    found: 0,
    notFound: 0,
    errors: 0,
    charged: 0,
    reused: 0,
    rowsRead: 0,
    totalBytes: plan.size,
  };
  const snapshot = (): BatchCounts => ({
    ...counts,
    charged: purse.spent,
    possiblyCharged: purse.possiblyCharged,
    balance: lookups.balance,
    bytesRead: reader.position(),
  });
  const started = ctx.now();
  const progress = startProgress(io, {
    mode: progressModeFor(io, Boolean(options.progress)),
    counts: snapshot,
    now: ctx.now,
  });
  // No new requests; those in flight finish (and are stored) or are cancelled after a while.
  const stopSending = () => {
    lookups.stop('interrupted');
    setTimeout(() => drain.abort(), DRAIN_LIMIT_MS).unref();
  };
  const signals = watchSignals(io, stopSending);
  failures.whenFailed(stopSending);

  // Domains met in this run: in the run's own temporary SQLite database (seen.ts), not in memory.
  const seen = plan.seen;
  let complete = true;
  let rowNumber = 0;
  const entryFor = (row: InputRow): Entry => {
    const entry = entryOfRow(row);
    rowNumber++;
    if (report) {
      const normalised = row.error ? undefined : normaliseDomain(row.domainRaw);
      entry.place = {
        row: rowNumber,
        line: row.line,
        domain: normalised?.ok ? normalised.domain : row.domainRaw,
      };
    }
    return entry;
  };
  const entryOfRow = (row: InputRow): Entry => {
    if (row.error) return { cells: row.cells, result: errorResult(row.error.code, row.error.detail) };
    const normalised = normaliseDomain(row.domainRaw);
    if (!normalised.ok)
      return { cells: row.cells, result: errorResult('invalid_domain', `domain ${normalised.reason}`) };
    if (!seen.add(normalised.domain)) {
      // A duplicate shares the first row's result but costs nothing itself, so the column sums to
      // what the run cost, and a resumed output equals an uninterrupted one.
      const shared = lookups.resultFor(normalised.domain);
      const entry = entryOf(
        row.cells,
        shared instanceof Promise ? shared.then(asDuplicate) : asDuplicate(shared),
      );
      entry.duplicate = true;
      return entry;
    }
    const domain = ownCopy(normalised.domain);
    // The same object: entryOf fills in its result when the answer comes.
    const entry = entryOf(row.cells, lookups.resultFor(domain));
    entry.first = true;
    return entry;
  };

  const window: Entry[] = [];
  const windowSize = Math.max(256, options.concurrency * 32);
  // The head's result is written at once when known; a promise only to wait for the output.
  const writeHead = (entry: Entry, result: RowResult): Promise<void> | undefined => {
    const writing = writer.add(entry.cells, result);
    const outcome = outcomeOf(result, entry.duplicate === true);
    plan.figures.outcomes[outcome]++;
    if (report && entry.place) report.add({ ...entry.place, outcome, result });
    // Every count is of the rows written (issue 46): after an interrupt the rows read ahead and
    // the answers still in flight are not in them. Found and not found count domains, once each.
    counts.rows++;
    counts.chargedInRows = (counts.chargedInRows ?? 0) + result.credits_charged;
    if (entry.first) {
      counts.uniqueDomains++;
      if (result.found === true) counts.found++;
      else if (result.found === false) counts.notFound++;
      else counts.failed = (counts.failed ?? 0) + 1;
    }
    if (result.error_code) counts.errors++;
    if (result.found === null && !FINAL_ERRORS.has(result.error_code ?? '')) complete = false;
    return writing;
  };
  const stopping = () => signals.interrupted || lookups.fatal !== undefined || failures.problem !== undefined;
  /** Writes the ready head rows, and waits for the head when the window is full (or `all`). */
  const writeReady = async (all: boolean): Promise<void> => {
    while (window.length > 0 && !stopping()) {
      const entry = window[0];
      let result = entry.result;
      if (result === undefined) {
        if (!all && window.length < windowSize) return;
        window.shift();
        result = await entry.pending!;
        // The answer that settled the head has just freed a slot, and the next request is on its
        // way out a few promise turns later (through a proxy, undici writes it only when the
        // event loop reaches its check phase). Writing rows and reading input waits a turn: the
        // request leaves first, and the rows that other answers of the same turn settled are
        // written together (measured over undici at zero latency: 10 % more rows/s and 7 % less
        // CPU per row).
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (stopping()) return;
      } else window.shift();
      const writing = writeHead(entry, result);
      if (writing) await writing;
    }
  };

  let outcome: 'done' | 'interrupted' | 'aborted' | 'unwritable' = 'done';
  try {
    for await (const row of reader.rows) {
      if (stopping()) break;
      counts.rowsRead = (counts.rowsRead ?? 0) + 1;
      window.push(entryFor(row));
      if (window[0].result !== undefined || window.length >= windowSize) await writeReady(false);
    }
    await writeReady(true);
  } catch (error) {
    // The output refused a write: the answers in flight still reach the store (below).
    if (!failures.explains(target.stream, outputName)) {
      progress.stop();
      signals.dispose();
      drain.abort();
      await scheduler.idle();
      await target.discard();
      await report?.discard();
      throw error;
    }
  }
  progress.stop();
  // Every request still in flight ends here: an abort has cancelled them at once (`onAbort`
  // above: their answers would change nothing), an interrupt drains for at most DRAIN_LIMIT_MS
  // (the timer armed by the signal).
  await scheduler.idle();
  signals.dispose();
  unwatch?.();
  // No more turns asked of a shared store that is about to close.
  pacer.stop();
  counts.reused = lookups.reused;
  if (failures.problem) outcome = 'unwritable';
  else if (lookups.fatal) outcome = 'aborted';
  else if (signals.interrupted) outcome = 'interrupted';
  else {
    try {
      await writer.end();
      await target.commit();
      await report?.commit();
    } catch (error) {
      // Ending, syncing or renaming the output: an error of the system is a failed write.
      const errno = typeof (error as NodeJS.ErrnoException).code === 'string';
      if (!failures.explains(target.stream, outputName) && !errno) throw error;
      failures.fail(error, outputName);
      outcome = 'unwritable';
    }
  }

  plan.figures.counts = snapshot();
  plan.figures.merged = options.merge && options.merge.mode !== 'append' ? writer.merged() : undefined;
  plan.figures.stopReason = lookups.stopReason;
  plan.figures.elapsedMs = ctx.now() - started;
  // Told whatever the outcome: the figure is the service's, not the run's.
  const unaccounted = await purse.unaccountedWarning();
  if (unaccounted) io.warn(unaccounted);
  if (outcome !== 'done') {
    // The rows gathered for the next write go out first (stdout keeps what a stopped run wrote),
    // so that the output holds every row the summary counts.
    if (outcome !== 'unwritable') await writer.flush().catch(() => {});
    await target.discard();
    await report?.discard();
    const why =
      outcome === 'aborted'
        ? `aborted: ${lookups.fatal?.code}`
        : outcome === 'unwritable'
          ? `the output could not be written: ${failures.problem?.code}`
          : 'interrupted';
    io.info(logLine(io, ctx.now, formatSummary(snapshot(), ctx.now() - started, why)));
    if (outcome === 'unwritable')
      throw stoppedProblem(failures.problem!, storePath, options.argv, lookups.unkept);
    if (outcome === 'aborted') throw resumable(lookups.fatal!, storePath, options.argv);
    throw interruptedProblem(counts.rows, storePath, options.argv);
  }

  io.info(logLine(io, ctx.now, formatSummary(snapshot(), ctx.now() - started)));
  const code = finish(lookups, purse, options, counts.errors, storePath);
  return { code, complete };
}

/** The budget's remedy when nothing is kept: a re-run pays again for everything. */
const NO_STORE_BUDGET_REMEDY =
  'Raise --budget (or --budget-month) and re-run; with --no-store nothing was kept, so the re-run buys every answer again.';

/** Where a stopped run's answers are, for its messages. */
function keptIn(storePath: string | undefined): string {
  return storePath
    ? `the answers bought so far are kept in the store (${storePath})`
    : 'nothing was kept (--no-store)';
}

function finish(
  lookups: Lookups,
  purse: Purse,
  options: BatchOptions,
  rowErrors: number,
  storePath: string | undefined,
): number {
  const spent = purse.describeSpent();
  const resume = ` The rows not requested carry error_code ${lookups.stopReason}; ${keptIn(storePath)}.`;
  switch (lookups.stopReason) {
    case 'budget_exhausted': {
      const cap =
        purse.refusedBy === 'month'
          ? `--budget-month ${purse.monthCap} (this key's spend in this calendar month, UTC, across runs and commands) reached; this run charged ${spent}.`
          : `--budget ${options.budget} reached after ${spent}.`;
      throw new Problem({
        code: 'budget_exhausted',
        detail: `${cap}${resume}`,
        source: 'client',
        remedy: storePath ? undefined : NO_STORE_BUDGET_REMEDY,
      });
    }
    case 'insufficient_credits':
    case 'max_credits_exceeded':
      throw new Problem({
        code: lookups.stopReason,
        detail: `the service refused further lookups.${resume}`,
        source: 'server',
        hint: storePath
          ? 'Re-run the same command afterwards: answers already bought are reused from the store at no cost.'
          : 'With --no-store a re-run buys every answer again.',
      });
    case 'retry_after_too_long': {
      const at = isoSecond(lookups.retryAt ?? Date.now());
      throw new Problem({
        code: 'retry_after_too_long',
        title: 'Service asked to wait too long',
        detail: `the service asked to wait until ${at}, longer than company-data waits on its own; the run stopped sending lookups.${resume}`,
        source: 'server',
        hint: storePath
          ? `retry after ${at}: ${resumeCommand(options.argv)}`
          : `retry after ${at} (with --no-store the run starts over).`,
      });
    }
    case 'charge_above_hold':
      throw new Problem({
        code: 'charge_above_hold',
        detail: `an answer reported a charge above what was held for it (see -v); this run charged ${spent}.${resume}`,
        source: 'client',
      });
    case 'too_many_failures':
      throw new Problem({
        code: 'too_many_failures',
        detail: `${DEFAULT_MAX_CONSECUTIVE_FAILURES} requests in a row failed.${resume}`,
        source: 'client',
      });
    default:
      break;
  }
  return runExitCode(rowErrors);
}

function interruptedProblem(rows: number, storePath: string | undefined, argv: readonly string[]): Problem {
  return new Problem({
    code: 'interrupted',
    title: 'Interrupted',
    detail: `stopped after writing ${plural(rows, 'row')}; ${keptIn(storePath)}`,
    source: 'client',
    hint: storePath ? `Resume with: ${resumeCommand(argv)}` : 'With --no-store the run starts over.',
  });
}

/**
 * The problem an abort ends the run with. A connection to a shared store lost mid-run is the one
 * abort a re-run mends once the database is back: it names the command that resumes the run.
 */
function resumable(problem: Problem, storePath: string | undefined, argv: readonly string[]): Problem {
  if (problem.code !== 'store_lost' || !storePath) return problem;
  return new Problem({
    code: problem.code,
    title: problem.title,
    detail: `${problem.detail}; the run stopped, and ${keptIn(storePath)}`,
    source: 'client',
    hint: `Once the database is reachable again, resume with: ${resumeCommand(argv)}`,
    cause: problem.cause,
  });
}

/** A failed write, with what the run kept and how to resume it. */
function stoppedProblem(
  problem: Problem,
  storePath: string | undefined,
  argv: readonly string[],
  unkept: number,
): Problem {
  const lost =
    unkept > 0
      ? `, except ${unkept} that did not fit (${unkept === 1 ? 'it' : 'they'} will be bought again)`
      : '';
  return new Problem({
    code: problem.code,
    title: problem.title,
    detail: `${problem.detail}; the run stopped sending lookups, and ${keptIn(storePath)}${lost}`,
    source: 'client',
    hint: storePath ? `Resume with: ${resumeCommand(argv)}` : 'With --no-store the run starts over.',
    cause: problem.cause,
  });
}

/**
 * The command that resumes this run, pasteable into a POSIX shell: the command as typed. With
 * `--refresh` kept: the resumed run is the same run, whose refresh point stays the first start
 * (RunHandle.startedAt), so it buys again only what the interrupted run had not bought yet.
 */
export function resumeCommand(argv: readonly string[]): string {
  return shellQuote(['company-data', ...argv]);
}
