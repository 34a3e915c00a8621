// The one place values become text, so that tables, `-o csv` and batch output agree on how a
// value looks and server-provided text is always sanitised on its way to a terminal or a
// spreadsheet.
import { oneLine, stripControl } from './sanitize.js';

export type CellMode = 'table' | 'csv';

// Any character stripControl removes (its escape sequences start with one of these too): a batch
// writes a cell per result field per row, and most hold none, so one test spares two replaces.
const CONTROL_CHARACTER = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

export interface CellOptions {
  /** Whether the terminal shows Unicode; decides the "no value" placeholder in tables. */
  unicode?: boolean;
}

/** What a table shows for a missing value (null or undefined). */
export function noValue(unicode = true): string {
  return unicode ? '—' : '-';
}

/**
 * Table cells are single lines stripped of control characters; arrays are joined with ", ".
 * CSV cells keep newlines and tabs (csv-stringify quotes them) but lose escape sequences;
 * arrays are joined with ";" so a cell stays one value for a spreadsheet. Formula
 * neutralisation happens in the CSV writer, because --csv-raw turns it off.
 */
export function cellText(value: unknown, mode: CellMode, options: CellOptions = {}): string {
  if (value === null || value === undefined) return mode === 'table' ? noValue(options.unicode) : '';
  if (Array.isArray(value)) {
    const parts = value.map((item) =>
      item === null || item === undefined ? '' : cellText(item, mode, options),
    );
    return parts.join(mode === 'table' ? ', ' : ';');
  }
  let text: string;
  switch (typeof value) {
    case 'string':
      text = value;
      break;
    case 'number':
    case 'bigint':
      text = String(value);
      break;
    case 'boolean':
      text = mode === 'table' ? (value ? 'yes' : 'no') : String(value);
      break;
    case 'object':
      text = JSON.stringify(value);
      break;
    default:
      text = String(value);
  }
  if (mode === 'table') return oneLine(text);
  return CONTROL_CHARACTER.test(text) ? stripControl(text) : text;
}
