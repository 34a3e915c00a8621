// A batch output as an .xlsx workbook (ExcelJS's streaming WorkbookWriter): the same columns and
// rows as the CSV (row-shape.ts), one sheet, its header row frozen, its columns sized to
// their first rows. No cell styles (a bold header): ExcelJS's styles made writing 100,000 rows
// three times slower (10.8 s against 3.2 s, docs/performance.md). Input cells go back as the text they were read as (leading zeros
// kept); result fields keep their types: numbers as numbers, everything else as text. A text cell
// is never run as a formula, so nothing needs neutralising here, whatever its first character.
// Like a CSV output, the file is written to a temporary file and renamed into place when complete
// (src/batch/files.ts): a killed run leaves nothing half written, and what it bought is in the
// store, so the next run writes the whole workbook again at no cost.
import { cellText } from '../output/cell.js';
import type * as Library from '../workbook/exceljs.js';
import type { BatchWriter, BatchWriterOptions, RowResult } from './output.js';
import { waitForDrain } from './output.js';
import { rowShape } from './row-shape.js';

/** Rows held to size the columns before the first is written (a streamed sheet cannot go back). */
const SIZING_ROWS = 100;
const MIN_WIDTH = 8;
const MAX_WIDTH = 60;
/** Characters XML 1.0 cannot hold, which a workbook would be unreadable with. */
const NOT_XML = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/;
const ALL_NOT_XML = new RegExp(NOT_XML.source, 'g');

/** A result value as a workbook cell: a number stays one, anything else is the CSV's text. */
function resultCell(value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const text = cellText(value, 'csv');
  return text === '' ? null : text;
}

function inputCell(text: string): string | null {
  if (text === '') return null;
  return NOT_XML.test(text) ? text.replace(ALL_NOT_XML, '') : text;
}

export function createWorkbookWriter(options: BatchWriterOptions, library: typeof Library): BatchWriter {
  const { out } = options;
  const shape = rowShape(options);
  const workbook = new library.stream.xlsx.WorkbookWriter({
    stream: out,
    useStyles: false,
    useSharedStrings: false,
  });
  const sheet = workbook.addWorksheet(sheetName(options.sheetName), {
    views: [{ state: 'frozen', ySplit: 1 }],
  });
  let held: Array<Array<string | number | null>> | undefined = [];
  let rows = 0;

  const valuesOf = (cells: string[], result: RowResult): Array<string | number | null> => {
    const { values, replaced } = shape.inputOf(cells, result);
    const row = values.map((value, i) => (replaced?.[i] ? resultCell(value) : inputCell(value as string)));
    for (const value of shape.resultOf(result)) row.push(resultCell(value));
    return row;
  };

  /** Sizes the columns to the header and the rows held, writes the header and those rows. */
  const start = (): void => {
    const rowsHeld = held ?? [];
    held = undefined;
    sheet.columns = shape.columns.map((name, i) => {
      let width = name.length;
      for (const row of rowsHeld) width = Math.max(width, String(row[i] ?? '').split('\n')[0].length);
      return { width: Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, width + 2)) };
    });
    sheet.addRow(shape.columns.map(inputCell)).commit();
    for (const row of rowsHeld) sheet.addRow(row).commit();
  };

  const add = (cells: string[], result: RowResult): Promise<void> | undefined => {
    if (out.destroyed || out.writableEnded) throw new Error('the output closed before every row was written');
    const row = valuesOf(cells, result);
    rows++;
    if (held) {
      held.push(row);
      if (held.length >= SIZING_ROWS) start();
      return undefined;
    }
    sheet.addRow(row).commit();
    // The compressed sheet reaches the file as ExcelJS's archiver gets to it; a slow disk holds
    // the rows back rather than memory.
    if (rows % 1000 === 0 && out.writableNeedDrain) return waitForDrain(out);
    return undefined;
  };

  return {
    get columns() {
      return shape.columns;
    },
    add,
    async write({ cells, result }) {
      await add(cells, result);
    },
    // A workbook is complete only at its end: nothing to hand over before.
    flush: async () => {},
    merged: shape.merged,
    async end() {
      if (held) start();
      sheet.commit();
      await workbook.commit();
    },
  };
}

/** A sheet name a spreadsheet accepts: at most 31 characters, none of : \ / ? * [ ]. */
function sheetName(name: string | undefined): string {
  const cleaned = (name ?? '')
    .replace(/[:\\/?*[\]]/g, ' ')
    .trim()
    .slice(0, 31);
  return cleaned === '' ? 'Sheet1' : cleaned;
}
