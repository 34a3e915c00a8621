// What a batch tells the person or the log watching it: a spinner on a terminal, plain progress
// lines with --progress (for cron logs), and one summary line at the end.
import type { IO } from '../types.js';

export interface BatchCounts {
  /** Rows written to the output. */
  rows: number;
  uniqueDomains: number;
  found: number;
  notFound: number;
  /** Rows that carry an error code. */
  errors: number;
  /** Credits charged by this run (journalled results reused from an earlier run cost nothing). */
  charged: number;
  /** Balance after the latest response, when the server said. */
  balance?: number;
  /** Results reused from the journal of an earlier run. */
  reused: number;
  /** Bytes of a file input consumed so far, and its size, for a percentage and an ETA. */
  bytesRead?: number;
  totalBytes?: number;
}

export type ProgressMode = 'spinner' | 'lines' | 'off';

const number = new Intl.NumberFormat('en-US');

export function formatDuration(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const whole = Math.round(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : `${m}m${String(s).padStart(2, '0')}s`;
}

/** One line: rows done, share of the file, found, errors, credits, rate, ETA. Plain ASCII. */
export function formatProgress(c: BatchCounts, elapsedMs: number): string {
  const parts = [`${number.format(c.rows)} rows`];
  const fraction =
    c.totalBytes && c.bytesRead !== undefined
      ? Math.min(1, c.bytesRead / Math.max(1, c.totalBytes))
      : undefined;
  if (fraction !== undefined) parts[0] += ` (${Math.floor(fraction * 100)}%)`;
  parts.push(`${number.format(c.found)} found`, `${number.format(c.errors)} errors`);
  parts.push(`${number.format(c.charged)} credits`);
  const seconds = elapsedMs / 1000;
  if (seconds >= 1) parts.push(`${number.format(Math.round(c.rows / seconds))} rows/s`);
  // Bytes consumed run ahead of rows written by the reorder window, so the ETA is an estimate.
  if (fraction !== undefined && fraction > 0.01 && fraction < 1 && seconds >= 1) {
    parts.push(`ETA ${formatDuration((elapsedMs / fraction) * (1 - fraction))}`);
  }
  return parts.join(', ');
}

export function formatSummary(c: BatchCounts, elapsedMs: number): string {
  const parts = [
    `${number.format(c.rows)} rows`,
    `${number.format(c.uniqueDomains)} unique domains`,
    `${number.format(c.found)} found`,
    `${number.format(c.notFound)} not found`,
    `${number.format(c.errors)} errors`,
    `${number.format(c.charged)} credits charged`,
  ];
  if (c.reused > 0) parts.push(`${number.format(c.reused)} reused from the journal`);
  if (c.balance !== undefined) parts.push(`balance ${number.format(c.balance)}`);
  parts.push(formatDuration(elapsedMs));
  return `Enriched: ${parts.join(', ')}`;
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

export function startProgress(io: IO, options: ProgressOptions): ProgressReporter {
  const now = options.now ?? Date.now;
  const started = now();
  const text = () => formatProgress(options.counts(), now() - started);
  if (options.mode === 'off') return { stop() {} };
  if (options.mode === 'lines') {
    // Asked for explicitly, so shown even with --quiet (a log wants them).
    const timer = setInterval(() => io.warn(`progress: ${text()}`), options.lineIntervalMs ?? 2000);
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
