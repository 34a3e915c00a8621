// --report FILE: one line per input row, in input order, saying what happened to it: bought,
// reused from the store, a duplicate of an earlier row, not found, invalid, refused by a cap, or
// failed, with its credits, attempts and time. JSON lines, or CSV (TSV) by the file's extension.
// Written beside the output as the output is (a temporary file renamed into place when the run
// writes its output), so the two always describe the same rows.
import { extname } from 'node:path';
import { csvCell, csvLine } from '../output/csv.js';
import { usageError } from '../problem.js';
import type { IO } from '../types.js';
import { assertOutputFolder, identity, type OutputTarget, openOutputTarget } from './files.js';
import type { RowResult } from './output.js';

export const OUTCOMES = [
  'bought',
  'stored',
  'duplicate',
  'not_found',
  'invalid',
  'capped',
  'failed',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

const INVALID = new Set(['invalid_domain', 'invalid_input']);
/**
 * Rows not requested because a credit cap was reached, or could no longer be trusted (a charge
 * above its hold stops the run for the caps' sake).
 */
const CAPPED = new Set([
  'budget_exhausted',
  'insufficient_credits',
  'max_credits_exceeded',
  'charge_above_hold',
]);

export function outcomeOf(result: RowResult, duplicate: boolean): Outcome {
  const code = result.error_code;
  if (code) return INVALID.has(code) ? 'invalid' : CAPPED.has(code) ? 'capped' : 'failed';
  if (result.found === false) return 'not_found';
  if (duplicate) return 'duplicate';
  return result.bought_at === null ? 'bought' : 'stored';
}

export interface ReportLine {
  /** 1-based data row of the input (the output's row). */
  row: number;
  /** Where the row is in the input: its line in a CSV file, its row in a sheet. */
  line: number;
  /** The normalised domain, or the cell as given when it is not one. */
  domain: string;
  outcome: Outcome;
  result: RowResult;
}

const COLUMNS = ['row', 'line', 'domain', 'outcome', 'error_code', 'credits', 'attempts', 'ms', 'bought_at'];

function valuesOf(line: ReportLine): unknown[] {
  const { result } = line;
  return [
    line.row,
    line.line,
    line.domain,
    line.outcome,
    result.error_code,
    result.credits_charged,
    line.outcome === 'duplicate' ? 0 : (result.attempts ?? 0),
    line.outcome === 'duplicate' ? null : (result.ms ?? null),
    result.bought_at,
  ];
}

export interface RowReport {
  add(line: ReportLine): void;
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/** --report must name a file of its own: not the input, the output or the summary. */
export async function assertReportPath(
  report: string,
  others: Array<[string | undefined, string]>,
): Promise<void> {
  await assertOutputFolder(report);
  const target = await identity(report);
  for (const [path, flag] of others) {
    if (path === undefined || path === '-') continue;
    if ((await identity(path)) === target)
      throw usageError(
        `--report and ${flag} are the same file (${report})`,
        'Name another file for --report (for example rows.jsonl).',
      );
  }
}

/** Opens --report's file (a temporary file until commit). */
export async function openReport(path: string, io: IO, csvRaw: boolean): Promise<RowReport> {
  const extension = extname(path).toLowerCase();
  const delimiter = extension === '.csv' ? ',' : extension === '.tsv' ? '\t' : undefined;
  const target: OutputTarget = await openOutputTarget(path, io);
  const raw = { raw: csvRaw };
  let pending = '';
  if (delimiter) pending = csvLine(COLUMNS, delimiter);
  const send = () => {
    target.stream.write(pending);
    pending = '';
  };
  return {
    add(line) {
      const values = valuesOf(line);
      if (delimiter)
        pending += csvLine(
          values.map((value) => csvCell(value, raw)),
          delimiter,
        );
      else pending += `${JSON.stringify(Object.fromEntries(COLUMNS.map((name, i) => [name, values[i]])))}\n`;
      if (pending.length >= 64 * 1024) send();
    },
    async commit() {
      send();
      await target.commit();
    },
    discard: () => target.discard(),
  };
}
