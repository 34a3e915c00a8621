// The physical side of reading a batch input: the records of a CSV stream, in file order, with the
// line on which each one starts.
//
// Two readers give the same records. While the text has no `"`, a record is a line and its cells
// are split at the delimiter: that is all CSV is without quoting, and most batch inputs are like
// that. csv-parse, cold, took 31-42 ms to parse the first 64 KB (2,000 rows) before a batch could
// send its first lookup, where splitting the lines took ~1.5 ms (docs/performance.md, "Twelfth
// pass"). From the line holding the first `"` on, csv-parse reads the rest: it is loaded only
// then. Around csv-parse, this file adds what it does not give reliably, the line on which each
// record starts, and keeps rows flowing after an unclosed quote (which would otherwise swallow
// the rest of the file as one field).
import { pipeline, Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { CsvError, parse as Parse } from 'csv-parse';
import { requireFromSource } from '../source-require.js';

export interface CsvRecord {
  /** The fields as csv-parse returned them. */
  cells: string[];
  /** 1-based line of the file on which the record starts. */
  line: number;
  /** Why the record could not be parsed as CSV; cells then hold the best raw text. */
  malformed?: string;
}

export interface CsvReadOptions {
  delimiter: string;
  encoding: 'utf8' | 'latin1';
}

interface ParsedChunk {
  record: string[];
  raw: string;
}

interface Skipped {
  /** Records emitted before the skipped one (csv-parse counts them in info.records). */
  recordsBefore: number;
  code: string;
  message: string;
  raw: string;
}

const LINE_BREAK = /\r\n|\r|\n/g;
const LEADING_BREAKS = /^(?:\r\n|\r|\n)+/;
/** The raw text of an empty line: nothing but its break (or nothing, at the very end). */
const BLANK_LINE = /^(?:\r\n|\r|\n)?$/;

function countBreaks(text: string): number {
  return text.match(LINE_BREAK)?.length ?? 0;
}

function leadingBreaks(text: string): number {
  const leading = LEADING_BREAKS.exec(text);
  return leading ? countBreaks(leading[0]) : 0;
}

/**
 * Decodes a byte stream as csv-parse's `bom` option does: a UTF-8 or UTF-16LE byte order mark at
 * the start (of at least 3 bytes) sets the encoding, whatever was asked for, and is dropped.
 */
class BomDecoder {
  private decoder: StringDecoder | undefined;
  private head: Buffer | undefined;

  constructor(private readonly encoding: BufferEncoding) {}

  write(chunk: Buffer): string {
    if (this.decoder) return this.decoder.write(chunk);
    const head = this.head ? Buffer.concat([this.head, chunk]) : chunk;
    if (head.length < 3) {
      this.head = head;
      return '';
    }
    this.head = undefined;
    let encoding = this.encoding;
    let skip = 0;
    if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) [encoding, skip] = ['utf8', 3];
    else if (head[0] === 0xff && head[1] === 0xfe) [encoding, skip] = ['utf16le', 2];
    this.decoder = new StringDecoder(encoding);
    return this.decoder.write(head.subarray(skip));
  }

  end(): string {
    // Fewer than 3 bytes in all: read as they are, in the encoding asked for.
    this.decoder ??= new StringDecoder(this.encoding);
    const head = this.head;
    this.head = undefined;
    return head ? this.decoder.write(head) + this.decoder.end() : this.decoder.end();
  }
}

/** One line break of any kind (`\r\n` first, so that it counts once). */
const BREAK = /\r\n|\r|\n/;

/**
 * Streams the records of a CSV source in file order with their starting line. Never throws for
 * malformed CSV: such a record comes back with `malformed` set. Throws only when the source
 * itself fails (unreadable file). The source gives bytes in `options.encoding` (or text).
 */
export async function* readCsvRecords(
  source: Readable,
  options: CsvReadOptions,
  firstLine = 1,
): AsyncGenerator<CsvRecord> {
  const chunks: AsyncIterator<Buffer | string> = source[Symbol.asyncIterator]();
  const decoder = new BomDecoder(options.encoding);
  // Text given as strings is read as its UTF-8 bytes, as csv-parse's stream reads it.
  const decode = (chunk: Buffer | string) =>
    decoder.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  /** The start of a line whose end has not been read yet. */
  let pending = '';
  /** The number of the line `pending` starts. */
  let line = firstLine;
  const records = function* (lines: string[]): Generator<CsvRecord> {
    for (const text of lines) {
      // An empty line is no record, as with csv-parse below.
      if (text !== '') yield { cells: text.split(options.delimiter), line };
      line++;
    }
  };
  try {
    for (;;) {
      const next = await chunks.next();
      const text = next.done ? decoder.end() : decode(next.value);
      const quote = text.indexOf('"');
      if (quote >= 0) {
        // The lines before the quote's are plain; csv-parse reads from the start of its line on.
        // It loads now, before those lines are handed out: a quote in the first chunk is seen
        // while a batch opens its input, before it sets the V8 flag under which csv-parse's
        // code cache would be refused (src/batch/run.ts); later, it compiles from source.
        loadCsvParse();
        const before = (pending + text.slice(0, quote)).split(BREAK);
        const start = before.pop()!;
        yield* records(before);
        const rest = async function* (): AsyncGenerator<string> {
          // csv-parse takes each piece as UTF-8 on its own, so a piece never ends between the two
          // halves of a surrogate pair (UTF-16 decoding can stop there).
          let held = start + text.slice(quote);
          for (let more = await chunks.next(); !more.done; more = await chunks.next()) {
            const piece = held + decode(more.value);
            const high = piece.length > 0 && (piece.charCodeAt(piece.length - 1) & 0xfc00) === 0xd800;
            held = high ? piece.slice(-1) : '';
            const whole = high ? piece.slice(0, -1) : piece;
            if (whole !== '') yield whole;
          }
          const last = held + decoder.end();
          if (last !== '') yield last;
        };
        yield* readWithCsvParse(Readable.from(rest()), { ...options, encoding: 'utf8' }, line, false);
        return;
      }
      if (next.done) {
        yield* records((pending + text).split(BREAK));
        return;
      }
      // A chunk without a break only adds to the line it continues.
      if (!BREAK.test(text)) {
        pending += text;
        continue;
      }
      // A \r at the end may be the first half of a \r\n: it waits for the next chunk.
      const held = text.endsWith('\r') ? 1 : 0;
      const lines = (pending + text.slice(0, text.length - held)).split(BREAK);
      pending = lines.pop()! + text.slice(text.length - held);
      yield* records(lines);
    }
  } finally {
    // Stops and closes the source when the caller stops early (or csv-parse has finished).
    await chunks.return?.();
  }
}

let csvParse: typeof Parse | undefined;

/**
 * csv-parse, loaded on first use: in the esbuild bundle this literal require() reads
 * dist/vendor/csv-parse.cjs; run from source (tests), requireFromSource serves it.
 */
function loadCsvParse(): typeof Parse {
  csvParse ??= (
    (typeof require === 'function'
      ? require('csv-parse')
      : requireFromSource(import.meta.url, 'csv-parse')) as { parse: typeof Parse }
  ).parse;
  return csvParse;
}

/**
 * The same records, read by csv-parse: for text with quoting. Exported for the tests that hold
 * both readers to the same records.
 */
export async function* readWithCsvParse(
  source: Readable,
  options: CsvReadOptions,
  firstLine = 1,
  bom = true,
): AsyncGenerator<CsvRecord> {
  const skipped: Skipped[] = [];
  const parser = loadCsvParse()({
    bom,
    delimiter: options.delimiter,
    encoding: options.encoding,
    // All three line endings at once: files glued together from several sources mix them, and
    // auto-discovery would fix on the first one and leave a stray \r in later cells.
    record_delimiter: ['\r\n', '\n', '\r'],
    // Ragged rows are reported by the caller against the header, not thrown here.
    relax_column_count: true,
    // `5" screen` in an unquoted field is kept literally, as spreadsheets do, instead of
    // throwing the row away.
    relax_quotes: true,
    // Empty lines are skipped below, not by csv-parse: its raw text of the record after a run of
    // empty lines drops a break when `\r\n` and `\n` mix ("a\n\r\n\nb" gave b line 3, not 4).
    skip_empty_lines: false,
    skip_records_with_error: true,
    // csv-parse drops the rest of the input after a record-size error (6.2); a record is
    // therefore unbounded and an unclosed quote is recovered at the end instead.
    max_record_size: 0,
    // raw: the exact text of each record, to count the lines csv-parse miscounts (a CRLF inside
    // quotes counts twice in info.lines) and to recover after an unclosed quote. (`info: true`
    // would cost a copied object per record; the records are counted here instead.)
    raw: true,
    on_skip: (error: CsvError | undefined, raw: string | undefined) => {
      skipped.push({
        recordsBefore: parser.info.records,
        code: error?.code ?? 'CSV_ERROR',
        message: error?.message ?? 'malformed record',
        raw: raw ?? '',
      });
      return undefined;
    },
  });
  // pipeline destroys both streams on failure or early exit; the error reaches the loop below.
  pipeline(source, parser, () => {});

  let breaksSoFar = firstLine - 1;
  const recover = function* (skip: Skipped): Generator<CsvRecord, string | null> {
    const line = breaksSoFar + leadingBreaks(skip.raw) + 1;
    const text = skip.raw.replace(LEADING_BREAKS, '');
    breaksSoFar += countBreaks(skip.raw);
    if (skip.code !== 'CSV_QUOTE_NOT_CLOSED') {
      yield { cells: [text.replace(/(?:\r\n|\r|\n)$/, '')], line, malformed: skip.message };
      return null;
    }
    const lineEnd = /\r\n|\r|\n/.exec(text);
    const firstText = lineEnd ? text.slice(0, lineEnd.index) : text;
    yield {
      cells: firstText.split(options.delimiter),
      line,
      malformed: `a quoted field opened on line ${line} is never closed; the following lines were read on their own`,
    };
    return lineEnd ? text.slice(lineEnd.index + lineEnd[0].length) : null;
  };

  async function* fromSkipped(skip: Skipped): AsyncGenerator<CsvRecord> {
    const startLine = breaksSoFar + leadingBreaks(skip.raw) + 1;
    const rest = yield* recover(skip);
    if (rest !== null && rest !== '') {
      // The rest is already decoded text: parse it as UTF-8 of that text.
      yield* readWithCsvParse(Readable.from([rest]), { ...options, encoding: 'utf8' }, startLine + 1);
    }
  }

  let records = 0;
  for await (const chunk of parser as AsyncIterable<ParsedChunk>) {
    // csv-parse's own count, as it stood when it pushed this record.
    records++;
    while (skipped.length > 0 && skipped[0].recordsBefore < records) {
      yield* fromSkipped(skipped.shift()!);
    }
    if (BLANK_LINE.test(chunk.raw)) {
      breaksSoFar += countBreaks(chunk.raw);
      continue;
    }
    const line = breaksSoFar + leadingBreaks(chunk.raw) + 1;
    breaksSoFar += countBreaks(chunk.raw);
    yield { cells: chunk.record, line };
  }
  while (skipped.length > 0) yield* fromSkipped(skipped.shift()!);
}
