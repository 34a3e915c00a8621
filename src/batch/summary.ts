// --summary-json FILE (or `-` for one line on stderr): the run's figures as one JSON object, so a
// cron job alerts on numbers instead of parsing the human summary. Written however the run ends
// (complete, stopped by a cap, interrupted, aborted), with the exit code it ends with.
import { writeFile } from 'node:fs/promises';
import { Problem } from '../problem.js';
import type { IO } from '../types.js';
import type { BatchCounts } from './progress.js';
import { OUTCOMES, type Outcome } from './report.js';

export interface RunFigures {
  counts?: BatchCounts;
  outcomes: Record<Outcome, number>;
  merged?: Record<string, { filled: number; changed: number }>;
  stopReason?: string;
  elapsedMs?: number;
}

export function emptyOutcomes(): Record<Outcome, number> {
  return Object.fromEntries(OUTCOMES.map((name) => [name, 0])) as Record<Outcome, number>;
}

export function summaryOf(
  figures: RunFigures,
  ending: { exitCode: number; problem?: Problem },
  files: { input: string; output?: string; report?: string },
): Record<string, unknown> {
  const c = figures.counts;
  const status =
    ending.exitCode === 0 || ending.exitCode === 6
      ? 'done'
      : ending.problem?.code === 'interrupted'
        ? 'interrupted'
        : 'stopped';
  return {
    status,
    exit_code: ending.exitCode,
    error_code: ending.problem?.code ?? null,
    input: files.input,
    output: files.output ?? null,
    report: files.report ?? null,
    rows: c?.rows ?? 0,
    unique_domains: c?.uniqueDomains ?? 0,
    found: c?.found ?? 0,
    not_found: c?.notFound ?? 0,
    errors: c?.errors ?? 0,
    outcomes: figures.outcomes,
    credits_charged: c?.charged ?? 0,
    possibly_charged: c?.possiblyCharged ?? 0,
    reused_from_store: c?.reused ?? 0,
    balance: c?.balance ?? null,
    merged: figures.merged ?? null,
    elapsed_ms: figures.elapsedMs ?? null,
  };
}

/** Writes the summary to `target` (a file, or `-` for one line on stderr); a failure is a warning. */
export async function writeSummary(io: IO, target: string, summary: Record<string, unknown>): Promise<void> {
  const line = `${JSON.stringify(summary)}\n`;
  if (target === '-') {
    io.warn(line.trimEnd());
    return;
  }
  try {
    await writeFile(target, line, { mode: 0o600 });
  } catch (error) {
    io.warn(
      `warning: --summary-json ${target} could not be written (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
}

/**
 * Runs a batch and writes its summary to `target` however it ends: its exit code, or the code of
 * the problem it ends with (which is thrown on).
 */
export async function withSummary(
  io: IO,
  target: string,
  figures: RunFigures,
  files: { input: string; output?: string; report?: string },
  run: () => Promise<number>,
): Promise<number> {
  let exitCode = 1;
  let problem: Problem | undefined;
  try {
    exitCode = await run();
    return exitCode;
  } catch (error) {
    if (error instanceof Problem) {
      problem = error;
      exitCode = error.exitCode;
    }
    throw error;
  } finally {
    const { input, output, report } = files;
    await writeSummary(io, target, summaryOf(figures, { exitCode, problem }, { input, output, report }));
  }
}
