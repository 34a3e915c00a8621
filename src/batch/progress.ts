// What a batch tells the person or the log watching it: a spinner on a terminal, plain progress
// lines with --progress (for cron logs), and one summary line at the end.

import { logTimestamp } from '../io.js';
import { groupDigits } from '../output/numbers.js';
import { plural } from '../text.js';
import type { IO } from '../types.js';

export interface BatchCounts {
  /** Rows written to the output. Every other count is of these rows (issue 46). */
  rows: number;
  /** Distinct domains among the rows written; found, not found and failed split them. */
  uniqueDomains: number;
  found: number;
  notFound: number;
  /** Domains whose lookup ended in an error (uniqueDomains = found + notFound + failed). */
  failed?: number;
  /**
   * Credits charged for the rows written (each domain's on its first row). After an interrupt
   * the answers still in flight may add some: `charged` has them, and they are in the store.
   */
  chargedInRows?: number;
  /** Rows that carry an error code. */
  errors: number;
  /** Credits charged by this run (answers reused from the store cost nothing). */
  charged: number;
  /**
   * Credits of attempts whose answer never arrived (a timeout, a connection closed after sending,
   * a gateway's 502 or 504): the service may have charged them (docs/batch.md, "Credits").
   */
  possiblyCharged?: number;
  /** Balance after the latest response, when the server said. */
  balance?: number;
  /** Answers reused from the result store (an earlier run, or this run before an interruption). */
  reused: number;
  /** Rows taken from the reader (ahead of `rows` by the reorder window). */
  rowsRead?: number;
  /** Bytes of a file input consumed so far, and its size, for an estimated total and an ETA. */
  bytesRead?: number;
  totalBytes?: number;
}

export type ProgressMode = 'spinner' | 'lines' | 'off';

export function formatDuration(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const whole = Math.round(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : `${m}m${String(s).padStart(2, '0')}s`;
}

/**
 * The rows a file probably holds: rows read so far scaled by the share of its bytes consumed.
 * Rows vary in length, so it is an estimate; undefined for stdin.
 */
export function estimatedTotalRows(c: BatchCounts): number | undefined {
  if (!c.totalBytes || c.bytesRead === undefined || c.rowsRead === undefined || c.bytesRead <= 0)
    return undefined;
  const fraction = Math.min(1, c.bytesRead / c.totalBytes);
  return Math.max(c.rowsRead, Math.round(c.rowsRead / fraction));
}

/** One line: rows done (of the estimated total), found, errors, credits, rate, ETA. Plain ASCII. */
export function formatProgress(c: BatchCounts, elapsedMs: number): string {
  const total = estimatedTotalRows(c);
  const done =
    total === undefined ? plural(c.rows, 'row') : `${groupDigits(c.rows)}/~${groupDigits(total)} rows`;
  const parts = [done, `${groupDigits(c.found)} found`, plural(c.errors, 'error')];
  parts.push(plural(c.charged, 'credit'));
  const seconds = elapsedMs / 1000;
  const rate = seconds >= 1 ? c.rows / seconds : 0;
  if (rate > 0) parts.push(`${groupDigits(Math.round(rate))} rows/s`);
  if (total !== undefined && rate > 0 && total > c.rows)
    parts.push(`ETA ${formatDuration(((total - c.rows) / rate) * 1000)}`);
  return parts.join(', ');
}

/**
 * The last line of a run. A run that stopped before the end of its input says so first: how many
 * rows of how many (estimated from the bytes read, for a file) were written, and why.
 */
export function formatSummary(c: BatchCounts, elapsedMs: number, stoppedBecause?: string): string {
  const split = [`${groupDigits(c.found)} found`, `${groupDigits(c.notFound)} not found`];
  if (c.failed) split.push(`${groupDigits(c.failed)} failed`);
  const parts = [
    plural(c.rows, 'row'),
    `${plural(c.uniqueDomains, 'unique domain')} (${split.join(', ')})`,
    plural(c.errors, 'error'),
    `${plural(c.chargedInRows ?? c.charged, 'credit')} charged`,
  ];
  // Answers that came after the last row written (an interrupt lets those in flight finish): paid
  // for (and stored, unless --no-store), but not in these rows.
  const after = c.charged - (c.chargedInRows ?? c.charged);
  if (after > 0)
    parts.push(`${plural(after, 'credit')} more for answers that came after the last row written`);
  if (c.possiblyCharged) parts.push(`up to ${groupDigits(c.possiblyCharged)} more possibly charged`);
  if (c.reused > 0) parts.push(`${groupDigits(c.reused)} reused from the store`);
  if (c.balance !== undefined) parts.push(`balance ${groupDigits(c.balance)}`);
  parts.push(formatDuration(elapsedMs));
  const summary = `Enriched: ${parts.join(', ')}`;
  if (stoppedBecause === undefined) return summary;
  const total = estimatedTotalRows(c);
  const of = total === undefined ? '' : ` of ~${groupDigits(total)}`;
  return `Stopped after ${groupDigits(c.rows)}${of} row${c.rows === 1 && !of ? '' : 's'} (${stoppedBecause}). ${summary}`;
}

export interface ProgressReporter {
  /** Ends the spinner or the periodic lines (the summary is printed separately). */
  stop(): void;
}

export interface ProgressOptions {
  mode: ProgressMode;
  counts: () => BatchCounts;
  now?: () => number;
  /** Between plain progress lines (default 2 s). */
  lineIntervalMs?: number;
}

/** The mode a run gets: --progress forces lines; otherwise a spinner on a terminal only. */
export function progressModeFor(io: IO, forceLines: boolean): ProgressMode {
  if (forceLines) return 'lines';
  return io.isStderrTTY && !io.quiet ? 'spinner' : 'off';
}

/**
 * A line for a log: off a terminal it starts with the time, so a cron log shows when it was
 * (with --log-format timestamped every stderr line does, and the IO adds it).
 */
export function logLine(io: IO, now: () => number, text: string): string {
  return io.isStderrTTY || io.logTime ? text : `${logTimestamp(now())} ${text}`;
}

export function startProgress(io: IO, options: ProgressOptions): ProgressReporter {
  const now = options.now ?? Date.now;
  const started = now();
  const text = () => formatProgress(options.counts(), now() - started);
  if (options.mode === 'off') return { stop() {} };
  if (options.mode === 'lines') {
    // Asked for explicitly, so shown even with --quiet (a log wants them).
    const timer = setInterval(
      () => io.warn(logLine(io, now, `progress: ${text()}`)),
      options.lineIntervalMs ?? 2000,
    );
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }
  const spinner = io.spinner(text());
  const timer = setInterval(() => spinner.update(text()), 200);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      spinner.stop();
    },
  };
}
