// The records of one sheet of an .xlsx workbook, read as the file streams in (ExcelJS's
// streaming WorkbookReader), as CSV records are: every row of the sheet up to its last non-empty
// one becomes one record of its cells' text (cell-text.ts), numbered by its row in the sheet, so
// that the sheet reads exactly as its CSV export (docs/workbooks.md).
import { type Readable, Transform } from 'node:stream';
import type { CsvRecord } from '../csv/records.js';
import { Problem, usageError } from '../problem.js';
import { cellText } from './cell-text.js';

export interface SheetRecords {
  records: AsyncGenerator<CsvRecord>;
  /** The sheet read, once the first record is out. */
  sheetName(): string | undefined;
  /** Bytes of the workbook read so far, for a progress total. */
  position(): number;
  close(): void;
}

interface SheetEntry {
  name: string;
}

/** Which sheet `--sheet` names: a sheet of that name, else its position (1 is the first). */
function wantedSheet(sheets: SheetEntry[], asked: string | undefined): string {
  if (asked === undefined) return sheets[0].name;
  const named = sheets.find((sheet) => sheet.name === asked);
  if (named) return named.name;
  const at = /^[1-9][0-9]*$/.test(asked) ? Number(asked) : Number.NaN;
  if (at <= sheets.length) return sheets[at - 1].name;
  throw usageError(
    `--sheet ${JSON.stringify(asked)} is not a sheet of the workbook; its sheets are ${sheets
      .map((sheet, i) => `${i + 1} ${JSON.stringify(sheet.name)}`)
      .join(', ')}`,
    'Name the sheet, or give its position (1 for the first).',
  );
}

/**
 * ExcelJS 4.4's streaming reader now and then misses a workbook's table of shared strings and
 * gives their indexes for the text (exceljs/exceljs#683, a fix not yet released): the cells would
 * read as empty. Thrown instead, so that the read is started again (open-input.ts) or fails
 * loudly, never read as blanks.
 */
export class SharedStringsLost extends Error {
  constructor() {
    super(
      "the workbook's shared strings were not read (a known fault of ExcelJS's streaming reader, exceljs/exceljs#683); run the same command again",
    );
  }
}

/**
 * A sheet that gave no row. Also what the streaming reader's faults under load look like (a sheet
 * read before the workbook's names, its name half-read), so a file is read again before the
 * sheet is believed empty (open-input.ts).
 */
export class SheetEmpty extends Error {
  constructor(sheet: string) {
    super(`the sheet ${sheet} holds no data`);
  }
}

function isUnresolved(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'sharedString' in value;
}

/** A row's cells, trailing empty ones dropped (a sheet's rows end where their last value does). */
function cellsOf(values: unknown): string[] {
  const cells: string[] = [];
  if (!Array.isArray(values)) return cells;
  for (let i = 1; i < values.length; i++) {
    if (isUnresolved(values[i])) throw new SharedStringsLost();
    cells.push(cellText(values[i]));
  }
  while (cells.length > 0 && cells[cells.length - 1] === '') cells.pop();
  return cells;
}

function unreadable(error: unknown): Problem | SharedStringsLost {
  if (error instanceof Problem || error instanceof SharedStringsLost) return error;
  const raw = error instanceof Error ? error.message : String(error);
  // unzipper's word for a ZIP that stops before its end.
  const message = raw === 'FILE_ENDED' ? 'the file ends before the workbook does (was it cut short?)' : raw;
  return new Problem({
    code: 'invalid_input',
    title: 'Cannot read the workbook',
    detail: `the input is not a readable .xlsx workbook: ${message}`,
    hint: 'Open it in your spreadsheet program and save it again as .xlsx, or as CSV.',
    source: 'client',
    cause: error,
  });
}

export async function openSheetRecords(source: Readable, sheet: string | undefined): Promise<SheetRecords> {
  const { stream } = await import('./exceljs.js');
  let bytes = 0;
  const counted = source.pipe(
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
    }),
  );
  source.once('error', (error) => counted.destroy(error));
  const reader = new stream.xlsx.WorkbookReader(counted, {
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'cache',
    worksheets: 'emit',
    entries: 'ignore',
  });
  let chosen: string | undefined;

  async function* records(): AsyncGenerator<CsvRecord> {
    let found = false;
    try {
      for await (const worksheet of reader as AsyncIterable<
        AsyncIterable<{ number: number; values: unknown }> & { name?: string }
      >) {
        const sheets: SheetEntry[] =
          (reader as unknown as { model?: { sheets?: SheetEntry[] } }).model?.sheets ?? [];
        chosen ??= wantedSheet(sheets.length > 0 ? sheets : [{ name: worksheet.name ?? '1' }], sheet);
        if (found || worksheet.name !== chosen) {
          for await (const _ of worksheet) {
            // Another sheet: read through, so the workbook's stream goes on to the one wanted.
          }
          continue;
        }
        found = true;
        let next: number | undefined;
        for await (const row of worksheet) {
          // Empty rows between two rows with values are rows of empty cells, as in a CSV export;
          // those above the first are not (the header is the first row with values).
          for (next ??= row.number; next < row.number; next++) yield { cells: [], line: next };
          yield { cells: cellsOf(row.values), line: row.number };
          next = row.number + 1;
        }
        break;
      }
    } catch (error) {
      throw unreadable(error);
    } finally {
      counted.destroy();
      source.destroy();
    }
    if (!found && chosen !== undefined) throw unreadable(new SheetEmpty(chosen));
  }

  return {
    records: records(),
    sheetName: () => chosen,
    position: () => bytes,
    close: () => {
      counted.destroy();
      source.destroy();
    },
  };
}
