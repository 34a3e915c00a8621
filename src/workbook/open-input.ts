// A batch input of any kind the tool reads: the first bytes say whether it is text (a CSV or a
// list of domains, src/csv/input.ts) or an .xlsx workbook (read.ts); other spreadsheet formats
// are refused by their signature (signature.ts) before anything is bought.
import { Readable } from 'node:stream';
import { type InputOptions, type InputReader, openInput, readerOfRecords } from '../csv/input.js';
import { Problem, usageError } from '../problem.js';
import { inputKindOf, kindIsClear, refusedWorkbook, SIGNATURE_BYTES } from './signature.js';

export interface BatchInputOptions extends InputOptions {
  /** The input as messages name it: its path, or `stdin`. */
  name: string;
  /** --sheet: a workbook's sheet by name or position (1 is the first); default the first. */
  sheet?: string;
  /** The input from its start again (a file, not stdin): a workbook read that went wrong is retried. */
  reopen?: () => Readable;
}

/** Reads of a workbook before its fault is given up on (read.ts SharedStringsLost). */
export const WORKBOOK_ATTEMPTS = 3;

/** The first bytes of a stream, and a stream that gives them again followed by the rest. */
async function peek(source: Readable, bytes: number): Promise<{ head: Buffer; replay: Readable }> {
  const chunks = (source as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  const seen: Buffer[] = [];
  let size = 0;
  let done = false;
  while (size < bytes && !kindIsClear(Buffer.concat(seen))) {
    const next = await chunks.next();
    if (next.done) {
      done = true;
      break;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    seen.push(chunk);
    size += chunk.length;
  }
  const head = Buffer.concat(seen);
  async function* again(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    if (done) return;
    for (let next = await chunks.next(); !next.done; next = await chunks.next())
      yield typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
  }
  const replay = Readable.from(again(), { objectMode: false });
  replay.once('close', () => source.destroy());
  return { head, replay };
}

export async function openBatchInput(source: Readable, options: BatchInputOptions): Promise<InputReader> {
  const { head, replay } = await peek(source, SIGNATURE_BYTES);
  const kind = inputKindOf(head, options.name);
  if (kind.kind === 'refused') {
    replay.destroy();
    throw refusedWorkbook(options.name, kind.what);
  }
  if (kind.kind === 'text') {
    if (options.sheet !== undefined) {
      replay.destroy();
      throw usageError(
        `--sheet applies to a workbook, and ${options.name} is read as CSV text`,
        'Leave out --sheet for a CSV file.',
      );
    }
    return openInput(replay, options);
  }
  for (const [value, flag] of [
    [options.delimiter, '--delimiter'],
    [options.encoding, '--encoding'],
  ] as const) {
    if (value !== undefined) {
      replay.destroy();
      throw usageError(
        `${flag} applies to CSV input, and ${options.name} is an .xlsx workbook`,
        `Leave out ${flag}; use --sheet to choose a sheet.`,
      );
    }
  }
  const { openSheetRecords, SharedStringsLost, SheetEmpty } = await import('./read.js');
  let bytes = replay;
  for (let attempt = 1; ; attempt++) {
    const sheet = await openSheetRecords(bytes, options.sheet);
    const workbook = { format: 'xlsx' as const, sheet: '' };
    try {
      // Reads the header: a fault of the reader shows there, before any row is used.
      const reader = await readerOfRecords(sheet.records, {
        column: options.column,
        choice: { encoding: 'utf8', encodingWhy: 'option', delimiter: ',', delimiterWhy: 'option' },
        joiner: ',',
        padShort: true,
        close: sheet.close,
        position: sheet.position,
        workbook,
      });
      workbook.sheet = sheet.sheetName() ?? '';
      return reader;
    } catch (error) {
      sheet.close();
      // readerOfRecords gives a read's failure as a problem, its cause kept.
      const fault = (e: unknown) => e instanceof SharedStringsLost || e instanceof SheetEmpty;
      const lost = fault(error) || (error instanceof Problem && fault(error.cause));
      if (!lost || !options.reopen || attempt >= WORKBOOK_ATTEMPTS) throw error;
      bytes = options.reopen();
    }
  }
}
