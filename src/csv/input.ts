// Reads a batch input (a CSV with a header, or a plain list of domains) as a stream of rows in
// file order. Every record becomes exactly one row: a malformed one carries an `invalid_input`
// error instead of stopping the run, so the output keeps one line per input row.
import type { Readable } from 'node:stream';
import { Problem, usageError } from '../problem.js';
import { DOMAIN_COLUMN_NAMES, domainColumnOf, readsAsListEntry } from './domain-columns.js';
import { type CsvAsked, type CsvChoice, type EncodingChoice, notUtf8Problem, openCsv } from './read.js';
import { type CsvRecord, NotUtf8Error, positionOf, type ReadProgress } from './records.js';

export { DOMAIN_COLUMN_NAMES };

export interface InputRow {
  /** 0-based data row (the header does not count). */
  index: number;
  /** 1-based line of the file where the record starts. */
  line: number;
  /** Exactly as parsed, one per header column; for malformed records the best raw text. */
  cells: string[];
  /** The cell of the domain column, untouched (normalisation happens later). */
  domainRaw: string;
  error?: { code: 'invalid_input'; detail: string };
}

export interface InputReader {
  /** null for a plain list of domains (one per line, no header). */
  header: string[] | null;
  domainColumn: number;
  /** The encoding and delimiter the rows are read with, and whether they were sniffed. */
  choice: CsvChoice;
  /** Read with `for await` or forEachRow; a source given as bytes gives them without waiting. */
  rows: AsyncIterable<InputRow> | Iterable<InputRow>;
  /**
   * For a streamed source: the bytes of the file behind the rows taken so far (an estimate), for
   * a progress total and an ETA against the file's size.
   */
  position(): number | undefined;
  /** Set when the rows come from a workbook: its format and the sheet read. */
  workbook?: { format: 'xlsx'; sheet: string };
}

export interface InputOptions {
  /** Header name of the domain column (case-insensitive); found automatically when absent. */
  column?: string;
  /** Field delimiter; `\t` or `tab` for tab-separated files. Sniffed when absent. */
  delimiter?: string;
  /** Sniffed when absent. */
  encoding?: EncodingChoice;
}

function normaliseDelimiter(delimiter: string | undefined): string | undefined {
  if (delimiter === undefined) return undefined;
  if (delimiter === '\\t' || delimiter.toLowerCase() === 'tab') return '\t';
  if (delimiter === '' || /["\r\n]/.test(delimiter)) {
    throw usageError(
      `--delimiter ${JSON.stringify(delimiter)} cannot separate fields`,
      'Use e.g. "," ";" or "tab".',
    );
  }
  return delimiter;
}

function readFailure(error: unknown): Problem {
  if (error instanceof Problem) return error;
  if (error instanceof NotUtf8Error) return notUtf8Problem(error.offset);
  const message = error instanceof Error ? error.message : String(error);
  return new Problem({ code: 'invalid_input', detail: `cannot read the input: ${message}`, cause: error });
}

function listHeader(header: string[]): string {
  return header.map((name) => JSON.stringify(name)).join(', ');
}

function findColumn(header: string[], wanted: string): number {
  const key = wanted.trim().toLowerCase();
  return header.findIndex((name) => name.trim().toLowerCase() === key);
}

function chooseDomainColumn(header: string[], column: string | undefined): number {
  if (column !== undefined) {
    const index = findColumn(header, column);
    if (index === -1) {
      throw usageError(
        `--column ${JSON.stringify(column)} is not in the header; the columns are ${listHeader(header)}`,
      );
    }
    return index;
  }
  // A known name, or a one-column file with its own title: that column can only be the domains.
  const index = domainColumnOf(header);
  if (index !== -1) return index;
  throw usageError(
    `no domain column found; expected one of ${DOMAIN_COLUMN_NAMES.join(', ')}; the columns are ${listHeader(header)}`,
    'Name the column with --column <name>.',
  );
}

function startsPlainList(first: CsvRecord): boolean {
  return !first.malformed && first.cells.length === 1 && readsAsListEntry(first.cells[0]);
}

/** A line of only spaces: no row, like the empty lines the reader already skips. */
function isBlankLine(record: CsvRecord): boolean {
  return !record.malformed && record.cells.length === 1 && record.cells[0].trim() === '';
}

/** Fits a record to the header: missing fields are empty, extra fields rejoin the last one. */
function fitToHeader(cells: string[], width: number, delimiter: string): string[] {
  if (cells.length === width) return cells;
  if (cells.length < width) return [...cells, ...Array<string>(width - cells.length).fill('')];
  return [...cells.slice(0, width - 1), cells.slice(width - 1).join(delimiter)];
}

/**
 * Opens a batch input: reads the first record to tell a header from a plain list and to find
 * the domain column, then streams the rows (backpressure through async iteration). The source
 * is a stream, or the bytes of a whole file already read (parsed at once, without a stream).
 */
export async function openInput(
  source: Readable | Uint8Array,
  options: InputOptions = {},
): Promise<InputReader> {
  const asked: CsvAsked = { delimiter: normaliseDelimiter(options.delimiter), encoding: options.encoding };
  const progress: ReadProgress = { bytes: 0, chars: 0, consumed: 0 };
  let opened: Awaited<ReturnType<typeof openCsv>>;
  try {
    opened = await openCsv(source, asked, progress);
  } catch (error) {
    throw readFailure(error);
  }
  return readerOfRecords(opened.records, {
    column: options.column,
    choice: opened.choice,
    joiner: opened.choice.delimiter,
    close: () => {
      if (!(source instanceof Uint8Array)) source.destroy();
    },
    position: () => (source instanceof Uint8Array ? undefined : positionOf(progress)),
  });
}

/** How the records of a CSV or of a workbook's sheet become rows (readerOfRecords). */
export interface RecordSource {
  column?: string;
  choice: CsvChoice;
  /** Rejoins the extra fields of a record wider than the header (the delimiter of a CSV). */
  joiner: string;
  /** Stops reading the source (a bad header: nothing more is read). */
  close(): void;
  position(): number | undefined;
  /** A sheet's rows end at their last value: shorter rows are padded, not malformed. */
  padShort?: boolean;
  /** What the input is, when it is not a CSV (a workbook's sheet), for messages. */
  workbook?: InputReader['workbook'];
}

/**
 * The rows of a source of records: the first record tells a header from a plain list and finds
 * the domain column; every later record becomes one row, a malformed or ragged one with an
 * `invalid_input` error. CSV files and workbook sheets alike come through here.
 */
export async function readerOfRecords(
  records: AsyncGenerator<CsvRecord> | Generator<CsvRecord>,
  from: RecordSource,
): Promise<InputReader> {
  const { choice } = from;
  const delimiter = from.joiner;
  const options = { column: from.column };
  let first: CsvRecord | undefined;
  try {
    for (;;) {
      const next = await records.next();
      if (next.done) break;
      // A line of only spaces before the header is not the header.
      if (!isBlankLine(next.value)) {
        first = next.value;
        break;
      }
    }
  } catch (error) {
    throw readFailure(error);
  }

  if (first === undefined) {
    return {
      header: null,
      domainColumn: 0,
      choice,
      rows: (async function* () {})(),
      position: () => undefined,
      workbook: from.workbook,
    };
  }
  const plainList = options.column === undefined && startsPlainList(first);
  if (!plainList && first.malformed) {
    from.close();
    throw new Problem({
      code: 'invalid_input',
      detail: `the header on line ${first.line} is malformed: ${first.malformed}`,
    });
  }
  const header = plainList ? null : first.cells;
  let domainColumn = 0;
  if (header) {
    try {
      domainColumn = chooseDomainColumn(header, options.column);
    } catch (error) {
      from.close();
      throw error;
    }
  }
  const width = header?.length ?? 1;
  // A record's place in messages: its line in a CSV file, its row in a sheet.
  const where = from.workbook ? 'row' : 'line';

  const toRow = (record: CsvRecord, index: number): InputRow => {
    let cells = record.cells;
    let error: InputRow['error'];
    if (record.malformed) {
      error = { code: 'invalid_input', detail: `${where} ${record.line}: ${record.malformed}` };
      cells = fitToHeader(cells, width, delimiter);
    } else if (header === null) {
      // A URL in a plain list may hold the delimiter (`?a=1,2`): the whole line is the value.
      cells = cells.length === 1 ? cells : [cells.join(delimiter)];
    } else if (cells.length < width && from.padShort) {
      cells = fitToHeader(cells, width, delimiter);
    } else if (cells.length !== width) {
      error = {
        code: 'invalid_input',
        detail: `${where} ${record.line}: ${cells.length} field${cells.length === 1 ? '' : 's'} where the header has ${width}`,
      };
      cells = fitToHeader(cells, width, delimiter);
    }
    const row: InputRow = { index, line: record.line, cells, domainRaw: cells[domainColumn] ?? '' };
    if (error) row.error = error;
    return row;
  };

  // Bytes in memory: rows without a promise each, read as they are asked for.
  function* rowsOf(records: Iterable<CsvRecord>): Generator<InputRow> {
    let index = 0;
    if (header === null) yield toRow(first!, index++);
    for (const record of records) if (!isBlankLine(record)) yield toRow(record, index++);
  }

  async function* streamedRows(records: AsyncGenerator<CsvRecord>): AsyncGenerator<InputRow> {
    let index = 0;
    if (header === null) yield toRow(first!, index++);
    try {
      for (;;) {
        const next = await records.next();
        if (next.done) return;
        if (!isBlankLine(next.value)) yield toRow(next.value, index++);
      }
    } catch (error) {
      throw readFailure(error);
    } finally {
      await records.return(undefined);
    }
  }

  const rows = Symbol.asyncIterator in records ? streamedRows(records) : rowsOf(records);
  return { header, domainColumn, choice, rows, position: from.position, workbook: from.workbook };
}

/** Calls `each` on every row in order; rows already at hand cost no promise each. */
export async function forEachRow(rows: InputReader['rows'], each: (row: InputRow) => void): Promise<void> {
  if (Symbol.iterator in rows) for (const row of rows) each(row);
  else for await (const row of rows) each(row);
}
