// CSV for spreadsheets and scripts: a header row, then one line per record. Cells that a
// spreadsheet would run as a formula are neutralised unless the user asked for raw output.
import type * as CsvStringify from 'csv-stringify/sync';
import { requireFromSource } from '../source-require.js';
import { cellText } from './cell.js';
import { neutraliseFormula } from './sanitize.js';

let csvStringify: typeof CsvStringify | undefined;

/**
 * csv-stringify, loaded on the first CSV: every command imports this file through the output
 * formats, and `-o json` or a table never needed it (its load was ~2.5 ms of a one-request
 * command's start; docs/performance.md, "Ninth pass"). In the esbuild bundle this literal
 * require() reads dist/vendor/csv-stringify.cjs; run from source (tests) requireFromSource serves it.
 */
function stringify(): typeof CsvStringify.stringify {
  csvStringify ??= (
    typeof require === 'function'
      ? require('csv-stringify/sync')
      : requireFromSource(import.meta.url, 'csv-stringify/sync')
  ) as typeof CsvStringify;
  return csvStringify.stringify;
}

export interface CsvOptions {
  /** --csv-raw: keep cells exactly as the data has them (no formula neutralisation). */
  raw: boolean;
}

export function csvCell(value: unknown, options: CsvOptions): string {
  const text = cellText(value, 'csv');
  return options.raw ? text : neutraliseFormula(text);
}

/** The header is written even with no records, so an empty result is still a valid CSV. */
export function renderCsv(
  columns: string[],
  records: Record<string, unknown>[],
  options: CsvOptions,
): string {
  const header = columns.map((c) => csvCell(c, options));
  const lines = records.map((record) => columns.map((c) => csvCell(record[c], options)));
  return stringify()([header, ...lines], { record_delimiter: 'unix' });
}
