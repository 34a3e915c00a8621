// Writes batch results in input order: each input row as it was read, then the result columns.
// Input cells are not modified (the user's data goes back as it came), with one exception in CSV:
// a cell a spreadsheet would run as a formula is neutralised, as every cell of `-o csv` is, unless
// --csv-raw (src/output/csv.ts holds the one rule). Result cells are server text, so they also
// lose control characters. With --merge, result fields go into the input's own columns
// (merge.ts). The columns and each row's values come from row-shape.ts, which a workbook output
// (workbook-output.ts) shares.

import type { Writable } from 'node:stream';
import { csvCell, csvInputCell, csvLine } from '../output/csv.js';
import { escapeForTerminal } from '../text.js';
import type { MergeOptions } from './merge.js';
import { rowShape } from './row-shape.js';

export { resultColumnNames } from './row-shape.js';

/** The outcome of one row. */
export interface RowResult {
  /** null when the row has no answer (invalid input, or an error). */
  found: boolean | null;
  /** The returned fields, narrowed to the requested ones; null when not found or failed. */
  record: Record<string, unknown> | null;
  /** Credits this run paid for the row: 0 for an answer reused from the store, or a duplicate. */
  credits_charged: number;
  /**
   * When the answer was bought (ISO 8601, to the second) if it came from the store, bought by an
   * earlier run or by another run meanwhile; null when this run bought it (a resumed run is the
   * same run) or there is no answer.
   */
  bought_at: string | null;
  error_code: string | null;
  error_detail: string | null;
  /** Requests sent for the domain by this run, retries included (0 or absent: none). */
  attempts?: number;
  /** How long the purchase took, in ms (absent: nothing was bought). */
  ms?: number;
}

export type BatchFormat = 'csv' | 'tsv' | 'json' | 'ndjson' | 'xlsx';

export interface BatchWriterOptions {
  /** Not ended by the writer: its owner closes it (a file is renamed into place, stdout stays). */
  out: Writable;
  format: BatchFormat;
  /** null for a plain list of domains, written as one column named `domain`. */
  inputHeader: string[] | null;
  /** The returned field names, in order. */
  resultFields: string[];
  /** --merge and --map: result fields written into matching input columns. */
  merge?: MergeOptions;
  /** The input's domain column (never a merge target). */
  domainColumn?: number;
  /** A workbook output's sheet name. */
  sheetName?: string;
  /** A UTF-8 byte order mark first, for spreadsheets that need it (CSV only). */
  bom?: boolean;
  /** Leave result cells that start like a formula as they are (CSV only). */
  csvRaw?: boolean;
  /**
   * Gather rows and hand them to `out` in chunks of about this many characters (0: one write per
   * row). Rows never wait long: `flush()`, `end()` and a short timer send what is gathered.
   */
  chunkChars?: number;
  /**
   * The output is a terminal: JSON rows have the controls the service's text may carry written as
   * \uXXXX escapes (the same JSON value), never raw (src/text.ts escapeForTerminal).
   */
  terminal?: boolean;
}

export interface BatchWriter {
  /** The output column names: input columns, then result columns (renamed on a clash). */
  readonly columns: string[];
  /** Writes one row; resolves once the output can take more (backpressure). */
  write(row: { cells: string[]; result: RowResult }): Promise<void>;
  /**
   * As write(), with a promise only when the caller must wait for the output (backpressure):
   * a batch writes hundreds of thousands of rows. Throws when the output has closed.
   */
  add(cells: string[], result: RowResult): Promise<void> | undefined;
  /** Hands the rows gathered so far to the output (when waiting for the next one, say). */
  flush(): Promise<void>;
  /** Completes the document (header of an empty CSV, closing bracket of JSON); does not end `out`. */
  end(): Promise<void>;
  /** Cells filled (empty before) and changed (overwritten) by --merge so far, by input column. */
  merged(): Record<string, { filled: number; changed: number }>;
}

// Rows gathered but not yet written reach a pipe within this time even if no more arrive.
const GATHER_MS = 100;

/** An object literal built as text: keeps column order (even `2024`) and any name (even `__proto__`). */
function jsonObject(keys: string[], values: unknown[]): string {
  const members = keys.map((key, i) => `${JSON.stringify(key)}:${JSON.stringify(values[i] ?? null)}`);
  return `{${members.join(',')}}`;
}

/** Resolves when `out` drains; rejects when it fails or closes first. */
export function waitForDrain(out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      out.off('drain', onDrain);
      out.off('error', onError);
      out.off('close', onClose);
    };
    const onDrain = () => {
      cleanup();
      resolve();
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('the output closed before every row was written'));
    };
    out.on('drain', onDrain);
    out.on('error', onError);
    out.on('close', onClose);
  });
}

export function createBatchWriter(options: BatchWriterOptions): BatchWriter {
  const { out, format } = options;
  const shape = rowShape(options);
  const { columns, jsonKeys } = shape;
  const delimiter = format === 'tsv' ? '\t' : ',';
  let started = false;
  let rows = 0;
  const chunkChars = Math.max(0, options.chunkChars ?? 0);
  let gathered = '';
  let timer: NodeJS.Timeout | undefined;

  const assertOpen = () => {
    if (out.destroyed || out.writableEnded) throw new Error('the output closed before every row was written');
  };

  // One Writable.write per row was ~8% of a batch's CPU (a Buffer and a writev entry each).
  const push = async (text: string): Promise<void> => {
    assertOpen();
    // A timer's write does not wait: the next push honours the backpressure it left.
    if (out.writableNeedDrain) await waitForDrain(out);
    if (!out.write(text)) await waitForDrain(out);
  };

  const sendGathered = async (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (gathered === '') return;
    const text = gathered;
    gathered = '';
    await push(text);
  };

  const gather = (text: string): Promise<void> | undefined => {
    if (chunkChars === 0) return push(text);
    assertOpen();
    gathered += text;
    if (gathered.length >= chunkChars) return sendGathered();
    timer ??= setTimeout(() => {
      timer = undefined;
      if (gathered === '' || out.destroyed || out.writableEnded) return;
      const text = gathered;
      gathered = '';
      out.write(text);
    }, GATHER_MS).unref();
    return undefined;
  };

  const raw = { raw: options.csvRaw === true };
  const isCsv = format === 'csv' || format === 'tsv';
  const opening = (): string => {
    if (isCsv)
      return (
        (options.bom ? '\ufeff' : '') +
        csvLine(
          columns.map((name, i) => (i < shape.inputWidth ? csvInputCell(name, raw) : name)),
          delimiter,
        )
      );
    return format === 'json' ? '[\n' : '';
  };

  const csvRow = (cells: string[], result: RowResult): string => {
    const { values, replaced } = shape.inputOf(cells, result);
    const line: string[] = [];
    for (let i = 0; i < values.length; i++)
      line.push(replaced?.[i] ? csvCell(values[i], raw) : csvInputCell(values[i] as string, raw));
    for (const value of shape.resultOf(result)) line.push(csvCell(value, raw));
    return csvLine(line, delimiter);
  };

  const add = (cells: string[], result: RowResult): Promise<void> | undefined => {
    const prefix = started ? '' : opening();
    started = true;
    let text: string;
    if (isCsv) text = csvRow(cells, result);
    else {
      const object = jsonObject(jsonKeys, [
        ...shape.inputOf(cells, result).values,
        ...shape.resultOf(result),
      ]);
      const shown = options.terminal ? escapeForTerminal(object) : object;
      text = format === 'json' ? `${rows === 0 ? '' : ',\n'}${shown}` : `${shown}\n`;
    }
    rows++;
    return gather(prefix + text);
  };

  return {
    columns,
    add,
    async write({ cells, result }) {
      await add(cells, result);
    },
    merged: shape.merged,
    flush: sendGathered,
    async end() {
      const prefix = started ? '' : opening();
      started = true;
      const closing = format === 'json' ? (rows === 0 ? ']\n' : '\n]\n') : '';
      gathered += prefix + closing;
      await sendGathered();
    },
  };
}
