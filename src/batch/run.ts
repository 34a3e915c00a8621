// A batch enrichment run: read -> normalise -> dedupe -> schedule -> journal -> write in order.
//
// Rows flow through a bounded reorder window: each row becomes an entry holding its result (or
// the promise of it), the head is written as soon as it is ready, and reading pauses while the
// window is full. Memory therefore holds the window, the set of domains seen, and the journal's
// offsets; never the results of the whole file.
import { setMaxListeners } from 'node:events';
import { catalogRetryHook, loadFields, loadProducts } from '../api/catalogs.js';
import { normaliseDomain } from '../domain.js';
import { oneLine } from '../output/sanitize.js';
import { createPacer, type RateSource } from '../pace.js';
import { Problem } from '../problem.js';
import type { Context, Format } from '../types.js';
import { writerFor } from './answer-columns.js';
import { createBudget } from './budget.js';
import { doubtfulTitle } from './domain-columns.js';
import { runDryRun } from './dry-run.js';
import { journalPathFor, openInputSource, openOutputTarget, shellQuote } from './files.js';
import { openInput } from './input.js';
import { openJournal, seenDomains } from './journal.js';
import { claimBatchFiles } from './lock.js';
import { DEFAULT_MAX_CONSECUTIVE_FAILURES, errorResult, Lookups } from './lookup.js';
import type { RowResult } from './output.js';
import { type BatchCounts, formatSummary, logLine, progressModeFor, startProgress } from './progress.js';
import { createScheduler } from './scheduler.js';
import { checkMaxCredits, resolveSelection } from './selection.js';
import { watchSignals } from './signals.js';
import { WriteFailures } from './unwritable.js';

export interface BatchOptions {
  input: string;
  output?: string;
  column?: string;
  delimiter?: string;
  encoding?: 'utf8' | 'latin1';
  bom?: boolean;
  products?: string[];
  include?: string[];
  maxCredits?: number;
  budget?: number;
  concurrency: number;
  /** Requests per second (--rate), or asked of the account at the first request; none: no pacing. */
  rate?: RateSource;
  fresh?: boolean;
  journal?: string;
  dryRun?: boolean;
  progress?: boolean;
  /** The command line as typed, for the resume hint. */
  argv: readonly string[];
}

/** Results a re-run would not change: these rows need nothing from a resume. */
const FINAL_ERRORS = new Set(['invalid_domain', 'invalid_input']);
const DRAIN_LIMIT_MS = 10_000;
const OUTPUT_CHUNK_CHARS = 64 * 1024;

/** CSV unless a format was chosen explicitly; a table makes no sense for a file of rows. */
export function batchFormat(ctx: Context): Exclude<Format, 'table'> {
  const { value, source } = ctx.config.format;
  if (source === 'default' || source === 'sandbox') return 'csv';
  if (value === 'table') {
    if (source === 'flag') {
      throw new Problem({
        code: 'usage_error',
        title: 'Usage error',
        detail: 'batch output is csv, json or ndjson (--format table is for single lookups)',
        source: 'client',
      });
    }
    return 'csv';
  }
  return value;
}

export function fingerprintOf(ctx: Context, options: BatchOptions): string {
  return JSON.stringify({
    // --sandbox listens on a new port each time but serves the same deterministic data.
    base_url: ctx.config.baseUrl?.source === 'sandbox' ? 'sandbox' : (ctx.config.baseUrl?.value ?? null),
    products: options.products ? [...options.products].sort() : null,
    include: options.include ? [...options.include].sort() : null,
    max_credits: options.maxCredits ?? null,
  });
}

interface Entry {
  cells: string[];
  /** Set once known, so the head can be written without waiting. */
  result?: RowResult;
  /** The result on its way; a rejection (a bug) surfaces when the head reaches it. */
  pending?: Promise<RowResult>;
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

/** The run, once its files are its own (an output that is the input, a busy journal: refused). */
export async function runBatch(ctx: Context, options: BatchOptions): Promise<number> {
  const lock = await claimBatchFiles(options);
  try {
    return await runLocked(ctx, options);
  } finally {
    await lock?.release();
  }
}

async function runLocked(ctx: Context, options: BatchOptions): Promise<number> {
  const { io } = ctx;
  const format = options.dryRun ? ctx.config.format.value : batchFormat(ctx);
  const catalogs = Promise.all([loadProducts(ctx), loadFields(ctx)]);
  const [products, fields] = await catalogs;
  const selection = resolveSelection({ products, fields }, options);
  checkMaxCredits(selection, options.maxCredits);

  const journalPath = journalPathFor(options);
  const fingerprint = fingerprintOf(ctx, options);
  const source = await openInputSource(options.input, io);
  const reader = await openInput(source.stream, {
    column: options.column,
    delimiter: options.delimiter,
    encoding: options.encoding,
  });
  const title = doubtfulTitle(reader.header, options.column);
  if (title !== undefined) {
    io.warn(
      `note: the first line, "${oneLine(title)}", was read as the column's title, not as a domain to look up; put a title line such as "domain" above the domains, or pass --column "${oneLine(title)}" if it is the title`,
    );
  }
  if (options.dryRun) {
    return runDryRun(ctx, {
      reader,
      selection,
      journalPath,
      fingerprint,
      fresh: Boolean(options.fresh),
      budget: options.budget,
    });
  }
  if (!journalPath) {
    io.warn('warning: reading stdin and writing stdout: no journal is kept, so this run cannot be resumed');
  }
  // A failed write to the output or the journal stops the run (stopSending below).
  const failures = new WriteFailures();
  const journal = journalPath
    ? await openJournal(journalPath, fingerprint, {
        fresh: options.fresh,
        onWriteFailure: (error) => failures.fail(error, journalPath),
      })
    : undefined;
  const target = await openOutputTarget(options.output, io);
  const outputName = target.path ?? 'stdout';
  failures.watch(target.stream, outputName);
  const writer = writerFor(selection, {
    out: target.stream,
    format: format as Exclude<Format, 'table'>,
    inputHeader: reader.header,
    bom: options.bom,
    csvRaw: ctx.config.csvRaw,
    chunkChars: OUTPUT_CHUNK_CHARS,
  });

  const scheduler = createScheduler({ concurrency: options.concurrency, pacer: createPacer(options.rate) });
  const budget = createBudget(options.budget);
  const drain = new AbortController();
  // Every lookup in flight may listen on this signal: Node's warning past 10 listeners must not
  // reach a batch's stderr.
  setMaxListeners(0, drain.signal);
  const lookups = new Lookups({
    client: ctx.client,
    query: { products: options.products, include: options.include, maxCredits: options.maxCredits },
    worstCase: selection.worstCase,
    resultFields: selection.resultFields,
    budget,
    scheduler,
    journal,
    maxConsecutiveFailures: DEFAULT_MAX_CONSECUTIVE_FAILURES,
    signal: drain.signal,
    // An abort (exit 2 or 3) cancels what is in flight at once, not after the rows before it
    // are written: the writer may be waiting for one of them, which could take until its timeout.
    onAbort: () => drain.abort(),
    // A catalog changing under the run: later commands must not read the old one from the cache.
    onRetry: catalogRetryHook(ctx),
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
    totalBytes: source.size,
  };
  const snapshot = (): BatchCounts => ({
    ...counts,
    charged: budget.spent,
    possiblyCharged: budget.possiblyCharged,
    balance: lookups.balance,
    bytesRead: reader.position(),
  });
  const started = ctx.now();
  const progress = startProgress(io, {
    mode: progressModeFor(io, Boolean(options.progress)),
    counts: snapshot,
    now: ctx.now,
  });
  // No new requests; those in flight finish (and are journalled) or are cancelled after a while.
  const stopSending = () => {
    lookups.stop('interrupted');
    setTimeout(() => drain.abort(), DRAIN_LIMIT_MS).unref();
  };
  const signals = watchSignals(io, stopSending);
  failures.whenFailed(stopSending);

  // Domains met in this run: the journal's Map notes them beside the offsets (each domain held once).
  const seen = journal ?? seenDomains();
  let complete = true;
  const entryFor = (row: {
    cells: string[];
    domainRaw: string;
    error?: { code: string; detail: string };
  }): Entry => {
    if (row.error) return { cells: row.cells, result: errorResult(row.error.code, row.error.detail) };
    const normalised = normaliseDomain(row.domainRaw);
    if (!normalised.ok)
      return { cells: row.cells, result: errorResult('invalid_domain', `domain ${normalised.reason}`) };
    const domain = seen.firstSeen(normalised.domain);
    if (domain === undefined) {
      // A duplicate shares the first row's result but costs nothing itself, so the column sums to
      // what the file cost, and a resumed output equals an uninterrupted one.
      const shared = lookups.resultFor(normalised.domain);
      return entryOf(row.cells, shared instanceof Promise ? shared.then(asDuplicate) : asDuplicate(shared));
    }
    counts.uniqueDomains++;
    if (journal?.has(domain)) counts.reused++;
    return entryOf(row.cells, lookups.resultFor(domain));
  };

  const window: Entry[] = [];
  const windowSize = Math.max(256, options.concurrency * 32);
  // The head's result is written at once when known; a promise only to wait for the output.
  const writeHead = (entry: Entry, result: RowResult): Promise<void> | undefined => {
    const writing = writer.add(entry.cells, result);
    counts.rows++;
    if (result.found === true) counts.found++;
    else if (result.found === false) counts.notFound++;
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
    // The output refused a write: the rows in flight still reach the journal (below).
    if (!failures.explains(target.stream, outputName)) {
      progress.stop();
      signals.dispose();
      drain.abort();
      await scheduler.idle();
      await target.discard();
      await journal?.close().catch(() => {});
      throw error;
    }
  }
  progress.stop();
  // Every request still in flight ends here: an abort has cancelled them at once (`onAbort`
  // above: their answers would change nothing), an interrupt drains for at most DRAIN_LIMIT_MS
  // (the timer armed by the signal).
  await scheduler.idle();
  signals.dispose();
  if (failures.problem) outcome = 'unwritable';
  else if (lookups.fatal) outcome = 'aborted';
  else if (signals.interrupted) outcome = 'interrupted';
  else {
    try {
      await writer.end();
      await target.commit();
    } catch (error) {
      // Ending, syncing or renaming the output: an error of the system is a failed write.
      const errno = typeof (error as NodeJS.ErrnoException).code === 'string';
      if (!failures.explains(target.stream, outputName) && !errno) throw error;
      failures.fail(error, outputName);
      outcome = 'unwritable';
    }
  }

  if (outcome !== 'done') {
    // The temporary output goes first: on a full disk, its space lets the journal's last lines in.
    await target.discard();
    let allJournalled = true;
    try {
      await journal?.close();
    } catch (error) {
      if (outcome !== 'unwritable') throw error;
      // Still no room for its last lines: those answers are lost, as after a kill -9.
      allJournalled = false;
    }
    const why =
      outcome === 'aborted'
        ? `aborted: ${lookups.fatal?.code}`
        : outcome === 'unwritable'
          ? `the output could not be written: ${failures.problem?.code}`
          : 'interrupted';
    io.info(logLine(io, ctx.now, formatSummary(snapshot(), ctx.now() - started, why)));
    if (outcome === 'unwritable')
      throw stoppedProblem(failures.problem!, journalPath, options.argv, allJournalled);
    if (outcome === 'aborted') throw lookups.fatal!;
    throw interruptedProblem(counts.rows, journalPath, options.argv);
  }

  if (journal) {
    if (complete) await journal.remove();
    else await journal.close();
  }
  io.info(logLine(io, ctx.now, formatSummary(snapshot(), ctx.now() - started)));
  const spent = budget.possiblyCharged
    ? `${budget.spent} credits charged and up to ${budget.possiblyCharged} more possibly charged`
    : `${budget.spent} credits`;
  return finish(lookups, spent, options, counts.errors, journalPath, complete);
}

function finish(
  lookups: Lookups,
  spent: string,
  options: BatchOptions,
  rowErrors: number,
  journalPath: string | undefined,
  complete: boolean,
): number {
  const resume = journalPath && !complete ? ` Results so far are kept in ${journalPath}.` : '';
  switch (lookups.stopReason) {
    case 'budget_exhausted':
      throw new Problem({
        code: 'budget_exhausted',
        detail: `--budget ${options.budget} reached after ${spent} credits; the rows not requested carry error_code budget_exhausted.${resume}`,
        source: 'client',
      });
    case 'insufficient_credits':
    case 'max_credits_exceeded':
      throw new Problem({
        code: lookups.stopReason,
        detail: `the service refused further lookups; the rows not requested carry error_code ${lookups.stopReason}.${resume}`,
        source: 'server',
        hint: 'Re-run the same command afterwards: journalled results are reused at no cost.',
      });
    case 'retry_after_too_long': {
      const at = new Date(lookups.retryAt ?? Date.now()).toISOString().replace(/\.\d+Z$/, 'Z');
      throw new Problem({
        code: 'retry_after_too_long',
        title: 'Service asked to wait too long',
        detail: `the service asked to wait until ${at}, longer than company-data waits on its own; the run stopped sending lookups, and the rows not requested carry error_code retry_after_too_long.${resume}`,
        source: 'server',
        hint: journalPath
          ? `retry after ${at}: ${resumeCommand(options.argv)}`
          : `retry after ${at} (without a journal the run starts over).`,
      });
    }
    case 'too_many_failures':
      throw new Problem({
        code: 'too_many_failures',
        detail: `${DEFAULT_MAX_CONSECUTIVE_FAILURES} requests in a row failed; the rows not requested carry error_code too_many_failures.${resume}`,
        source: 'client',
      });
    default:
      break;
  }
  return rowErrors > 0 ? 6 : 0;
}

function interruptedProblem(rows: number, journalPath: string | undefined, argv: readonly string[]): Problem {
  const where = journalPath ? `results so far are journalled in ${journalPath}` : 'no journal was kept';
  return new Problem({
    code: 'interrupted',
    title: 'Interrupted',
    detail: `stopped after writing ${rows} rows; ${where}`,
    source: 'client',
    hint: journalPath ? `Resume with: ${resumeCommand(argv)}` : 'Without a journal the run starts over.',
  });
}

/** A failed write, with what the run kept and how to resume it. */
function stoppedProblem(
  problem: Problem,
  journalPath: string | undefined,
  argv: readonly string[],
  allJournalled: boolean,
): Problem {
  let kept = journalPath ? `every result bought is kept in ${journalPath}` : 'no journal was kept';
  if (!allJournalled)
    kept = `the results bought are kept in ${journalPath} except the last ones, which did not fit (they will be bought again)`;
  return new Problem({
    code: problem.code,
    title: problem.title,
    detail: `${problem.detail}; the run stopped sending lookups, and ${kept}`,
    source: 'client',
    hint: journalPath ? `Resume with: ${resumeCommand(argv)}` : 'Without a journal the run starts over.',
    cause: problem.cause,
  });
}

/**
 * The command that resumes this run, pasteable into a POSIX shell: the command as typed, without
 * `--fresh`, which would throw away what this run bought and pay for it again.
 */
export function resumeCommand(argv: readonly string[]): string {
  const end = argv.indexOf('--');
  const options = end === -1 ? argv : argv.slice(0, end);
  const rest = end === -1 ? [] : argv.slice(end);
  return shellQuote(['company-data', ...options.filter((arg) => arg !== '--fresh'), ...rest]);
}
