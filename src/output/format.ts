// Format selection: every command hands its data here and never writes stdout itself.
// table -> people (sanitised, fitted, coloured on a TTY); json / ndjson / csv -> scripts.
import type { Context, Credits, Format } from '../types.js';
import { cellText } from './cell.js';
import { renderCsv } from './csv.js';
import { groupDigits } from './numbers.js';
import { oneLine } from './sanitize.js';
import { renderRecordTable, renderTable, type TableCell } from './table.js';

export { cellText } from './cell.js';

export interface ListOptions {
  /**
   * Columns, in order, for table and CSV (default: the union of the rows' keys in first-seen
   * order). JSON and NDJSON always carry the whole rows: columns are a view, not a filter.
   */
  columns?: string[];
  /** Said on stderr when there are no rows. */
  emptyMessage?: string;
  /**
   * Columns of text a table may shorten besides lists and prose (a problem's title): the rest of
   * a row names what it is about, so the table stays side by side on a narrow terminal.
   */
  shorten?: string[];
}

export function formatOf(ctx: Context): Format {
  return ctx.config.format.value;
}

/** Whether the output goes to a program rather than a person (json or ndjson). */
export function isJsonFormat(ctx: Context): boolean {
  const format = formatOf(ctx);
  return format === 'json' || format === 'ndjson';
}

export function columnsOf(rows: Record<string, unknown>[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...seen];
}

/** Header text of a table column: `credit_units` reads as "credit units". */
function headerText(column: string): string {
  return oneLine(column).replaceAll('_', ' ');
}

function tableCell(value: unknown, unicode: boolean): TableCell {
  return value === null || value === undefined ? null : cellText(value, 'table', { unicode });
}

/**
 * Whether a table may wrap a column's values over several lines: lists (`tech`), nested objects
 * and prose. Names, numbers, years and ranges stay on one line (issue 30): a table that cannot
 * show them whole becomes one block per record.
 */
function mayShorten(value: unknown, cell: TableCell): boolean {
  if (Array.isArray(value) || (typeof value === 'object' && value !== null)) return true;
  return typeof value === 'string' && cell !== null && cell.length > PROSE_LENGTH;
}

/** A string value longer than this is prose (a description), shortened like a list. */
const PROSE_LENGTH = 40;

function tableStyle(ctx: Context) {
  return { columns: ctx.io.columns, unicode: ctx.io.unicode, color: ctx.io.color };
}

export function printList(ctx: Context, rows: Record<string, unknown>[], options: ListOptions = {}): void {
  const { io } = ctx;
  if (rows.length === 0 && options.emptyMessage) io.info(options.emptyMessage);
  const columns = options.columns ?? columnsOf(rows);
  switch (formatOf(ctx)) {
    case 'json':
      io.out(`${JSON.stringify(rows, null, 2)}\n`);
      return;
    case 'ndjson':
      io.out(rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
      return;
    case 'csv':
      io.out(renderCsv(columns, rows, { raw: ctx.config.csvRaw }));
      return;
    default: {
      if (rows.length === 0) return;
      const cells = rows.map((row) => columns.map((c) => tableCell(row[c], io.unicode)));
      const shrinkable = columns.map(
        (c, i) => options.shorten?.includes(c) || rows.some((row, r) => mayShorten(row[c], cells[r][i])),
      );
      io.out(renderTable(columns.map(headerText), cells, tableStyle(ctx), { shrinkable }));
    }
  }
}

export function printRecord(
  ctx: Context,
  record: Record<string, unknown>,
  options: { title?: string } = {},
): void {
  const { io } = ctx;
  switch (formatOf(ctx)) {
    case 'json':
      io.out(`${JSON.stringify(record, null, 2)}\n`);
      return;
    case 'ndjson':
      io.out(`${JSON.stringify(record)}\n`);
      return;
    case 'csv':
      io.out(renderCsv(Object.keys(record), [record], { raw: ctx.config.csvRaw }));
      return;
    default: {
      if (options.title) {
        const title = oneLine(options.title);
        io.out(`${io.color ? `\x1b[1m${title}\x1b[0m` : title}\n`);
      }
      const cells = Object.entries(record).map(([key, value]): [string, TableCell] => [
        oneLine(key),
        tableCell(value, io.unicode),
      ]);
      io.out(renderRecordTable(['field', 'value'], cells, tableStyle(ctx)));
    }
  }
}

/**
 * Raw passthrough of a response. NDJSON writes arrays one element per line, anything else as
 * one compact line; every other format gets a pretty document, since there is no table view.
 */
export function printJson(ctx: Context, data: unknown): void {
  if (formatOf(ctx) === 'ndjson') {
    const items = Array.isArray(data) ? data : [data];
    ctx.io.out(items.map((item) => `${JSON.stringify(item)}\n`).join(''));
    return;
  }
  ctx.io.out(`${JSON.stringify(data, null, 2)}\n`);
}

/** "Credits: charged 2, balance 999,998" on stderr, for people only (table format, not --quiet). */
export function printCredits(ctx: Context, credits: Credits): void {
  if (formatOf(ctx) !== 'table') return;
  const parts: string[] = [];
  if (typeof credits.charged === 'number') parts.push(`charged ${groupDigits(credits.charged)}`);
  if (typeof credits.remaining === 'number') parts.push(`balance ${groupDigits(credits.remaining)}`);
  if (parts.length > 0) ctx.io.info(`Credits: ${parts.join(', ')}`);
}
