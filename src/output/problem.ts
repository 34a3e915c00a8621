// How a failure is shown: a readable message for people; one JSON object for scripts.
import type { Problem } from '../problem.js';
import type { IO } from '../types.js';
import { oneLine } from './sanitize.js';

const RED = '\x1b[31m';
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

/**
 * Writes the problem to stderr. stderr follows stderr (gh's rule): when stderr is not a terminal
 * and the format is json or ndjson, it is exactly one JSON line (code, status, title, detail,
 * retryable, hint) so scripts can parse errors like results; otherwise, and always when a person
 * reads stderr on a terminal (even with stdout redirected to a file), "error: <title> (<code>)",
 * the detail, and what to do next.
 */
export function reportProblem(io: IO, problem: Problem, format: string | undefined): void {
  if ((format === 'json' || format === 'ndjson') && !io.isStderrTTY) {
    const json = problem.toJSON();
    for (const key of ['title', 'detail', 'hint'] as const) json[key] = oneLine(String(json[key] ?? ''));
    // In a timestamped log the line stays one JSON object, with its time as a member.
    io.error(JSON.stringify(io.logTime ? { time: io.logTime(), ...json } : json));
    return;
  }
  const color = io.color && io.isStderrTTY;
  const head = `error: ${oneLine(problem.title)} (${problem.code}${problem.status ? `, HTTP ${problem.status}` : ''})`;
  io.error(color ? `${RED}${head}${RESET}` : head);
  const detail = oneLine(problem.detail);
  if (detail && detail !== problem.title) io.error(`  ${detail}`);
  const hint = oneLine(problem.hint);
  if (hint) io.error(color ? `  ${DIM}${hint}${RESET}` : `  ${hint}`);
}
