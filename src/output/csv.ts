// The one CSV writer, for `-o csv` and for batch output alike, so that a value looks the same in
// both and a cell a spreadsheet would run as a formula is neutralised in both, unless the user
// asked for raw output. csv-stringify does the quoting.
import { stringify } from 'csv-stringify/sync';
import { cellText } from './cell.js';
import { neutraliseFormula } from './sanitize.js';

export interface CsvOptions {
  /** --csv-raw: keep cells exactly as the data has them (no formula neutralisation). */
  raw: boolean;
}

/** Unix line ends whatever the platform: the same bytes from every run, resumed or not. */
const STRINGIFY_OPTIONS = { record_delimiter: 'unix', quote_record_delimiter: true } as const;

/** A value as the text of one CSV cell: sanitised, and neutralised unless `raw`. */
export function csvCell(value: unknown, options: CsvOptions): string {
  const text = cellText(value, 'csv');
  return options.raw ? text : neutraliseFormula(text);
}

/**
 * An input cell of a batch as the text of one CSV cell: as it was read, except that a cell a
 * spreadsheet would run is neutralised (unless `raw`): the one rule every CSV cell follows.
 */
export function csvInputCell(text: string, options: CsvOptions): string {
  return options.raw ? text : neutraliseFormula(text);
}

/** One CSV line (or TSV, with a tab delimiter), its line break included, of cells that are text already. */
export function csvLine(cells: readonly string[], delimiter = ','): string {
  return stringify([cells], delimiter === ',' ? STRINGIFY_OPTIONS : { ...STRINGIFY_OPTIONS, delimiter });
}

/** The header is written even with no records, so an empty result is still a valid CSV. */
export function renderCsv(
  columns: string[],
  records: Record<string, unknown>[],
  options: CsvOptions,
): string {
  const header = columns.map((c) => csvCell(c, options));
  const lines = records.map((record) => columns.map((c) => csvCell(record[c], options)));
  return stringify([header, ...lines], STRINGIFY_OPTIONS);
}
