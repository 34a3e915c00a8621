// The one CSV reader: batch inputs and exclusion lists (through input.ts) both come here, so a
// file reads the same, with the same line numbers in its errors, whatever it is given to.
//
// csv-parse does the parsing. Around it, this file adds what csv-parse does not give reliably:
// - the text: the bytes are decoded here (a UTF-8, UTF-16LE or UTF-16BE byte order mark wins over
//   --encoding, which only chooses between UTF-8 and Latin-1) and csv-parse is fed UTF-8, because
//   csv-parse knows no UTF-16BE and numbers the lines of UTF-16LE wrongly after an empty one;
// - the line each record starts on: counted from the `raw` text of every record, empty lines
//   included, because csv-parse's `info.lines` counts a CRLF inside quotes twice, and its raw
//   text after a run of skipped empty lines loses a break when `\r\n` and `\n` mix;
// - recovery after an unclosed quote, which would otherwise make the rest of the file one field.
// Records stream out as the source is read: a batch input can be a million rows.
import { pipeline, Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { type CsvError, parse } from 'csv-parse';

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
  /** How bytes without a byte order mark are read. */
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
/**
 * The raw text of an empty line: nothing but its break (or nothing, at the very end). csv-parse's
 * raw text keeps only the `\r` of a `\r\n` that ends a record; either way it is one break.
 */
const BLANK_LINE = /^(?:\r\n|\r|\n)?$/;

function countBreaks(text: string): number {
  return text.match(LINE_BREAK)?.length ?? 0;
}

function leadingBreaks(text: string): number {
  const leading = LEADING_BREAKS.exec(text);
  return leading ? countBreaks(leading[0]) : 0;
}

/** UTF-16BE, which StringDecoder lacks, as UTF-16LE with each pair of bytes swapped. */
class Utf16BeDecoder {
  private readonly decoder = new StringDecoder('utf16le');
  private odd: Buffer | undefined;

  write(chunk: Buffer): string {
    const bytes = this.odd ? Buffer.concat([this.odd, chunk]) : chunk;
    const even = bytes.length - (bytes.length % 2);
    this.odd = even < bytes.length ? bytes.subarray(even) : undefined;
    return this.decoder.write(Buffer.from(bytes.subarray(0, even)).swap16());
  }

  end(): string {
    const odd = this.odd;
    this.odd = undefined;
    return this.decoder.write(odd ?? Buffer.alloc(0)) + this.decoder.end();
  }
}

/**
 * Decodes a byte stream: a UTF-8, UTF-16LE or UTF-16BE byte order mark at the start (of at least
 * 3 bytes, as csv-parse has always required) sets the encoding, whatever was asked for, and is
 * dropped.
 */
class BomDecoder {
  private decoder: StringDecoder | Utf16BeDecoder | undefined;
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
    let skip = 0;
    if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) {
      this.decoder = new StringDecoder('utf8');
      skip = 3;
    } else if (head[0] === 0xff && head[1] === 0xfe) {
      this.decoder = new StringDecoder('utf16le');
      skip = 2;
    } else if (head[0] === 0xfe && head[1] === 0xff) {
      this.decoder = new Utf16BeDecoder();
      skip = 2;
    } else {
      this.decoder = new StringDecoder(this.encoding);
    }
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

/**
 * The text of a byte source, in pieces that never end between the two halves of a surrogate pair:
 * csv-parse turns each piece into UTF-8 on its own, and UTF-16 decoding can stop there. Strings
 * given by the source are read as their UTF-8 bytes.
 */
async function* decodedText(source: Readable, encoding: BufferEncoding): AsyncGenerator<string> {
  const decoder = new BomDecoder(encoding);
  let held = '';
  for await (const chunk of source as AsyncIterable<Buffer | string>) {
    const piece = held + decoder.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    const high = piece.length > 0 && (piece.charCodeAt(piece.length - 1) & 0xfc00) === 0xd800;
    held = high ? piece.slice(-1) : '';
    const whole = high ? piece.slice(0, -1) : piece;
    if (whole !== '') yield whole;
  }
  const last = held + decoder.end();
  if (last !== '') yield last;
}

/**
 * Streams the records of a CSV source in file order with their starting line. Empty lines give
 * no record. Never throws for malformed CSV: such a record comes back with `malformed` set.
 * Throws only when the source itself fails (unreadable file). The source gives bytes (or text,
 * read as UTF-8).
 */
export function readCsvRecords(source: Readable, options: CsvReadOptions): AsyncGenerator<CsvRecord> {
  return parseText(Readable.from(decodedText(source, options.encoding)), options.delimiter, 1);
}

/** The records of decoded text whose first line is `firstLine` of the file. */
async function* parseText(text: Readable, delimiter: string, firstLine: number): AsyncGenerator<CsvRecord> {
  const skipped: Skipped[] = [];
  const parser = parse({
    // The text is decoded already: a U+FEFF left at its start is a character, not a mark.
    bom: false,
    delimiter,
    encoding: 'utf8',
    // All three line endings at once: files glued together from several sources mix them, and
    // auto-discovery would fix on the first one and leave a stray \r in later cells.
    record_delimiter: ['\r\n', '\n', '\r'],
    // Ragged rows are reported by the caller against the header, not thrown here.
    relax_column_count: true,
    // `5" screen` in an unquoted field is kept literally, as spreadsheets do, instead of
    // throwing the row away.
    relax_quotes: true,
    // Empty lines come through as records and are dropped below: with csv-parse skipping them,
    // the raw text of the next record can lose a break ("a\n\r\n\nb" gave b line 3, not 4).
    skip_empty_lines: false,
    skip_records_with_error: true,
    // csv-parse drops the rest of the input after a record-size error (6.2); a record is
    // therefore unbounded and an unclosed quote is recovered at the end instead.
    max_record_size: 0,
    // raw: the exact text of each record, to count lines and to recover after an unclosed quote.
    // (`info: true` would cost a copied object per record; the records are counted here.)
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
  pipeline(text, parser, () => {});

  let breaksSoFar = firstLine - 1;

  /** The record csv-parse skipped, then the records of the lines after an unclosed quote. */
  async function* fromSkipped(skip: Skipped): AsyncGenerator<CsvRecord> {
    const line = breaksSoFar + leadingBreaks(skip.raw) + 1;
    const body = skip.raw.replace(LEADING_BREAKS, '');
    breaksSoFar += countBreaks(skip.raw);
    if (skip.code !== 'CSV_QUOTE_NOT_CLOSED') {
      yield { cells: [body.replace(/(?:\r\n|\r|\n)$/, '')], line, malformed: skip.message };
      return;
    }
    const lineEnd = /\r\n|\r|\n/.exec(body);
    yield {
      cells: (lineEnd ? body.slice(0, lineEnd.index) : body).split(delimiter),
      line,
      malformed: `a quoted field opened on line ${line} is never closed; the following lines were read on their own`,
    };
    const rest = lineEnd ? body.slice(lineEnd.index + lineEnd[0].length) : '';
    if (rest !== '') yield* parseText(Readable.from([rest]), delimiter, line + 1);
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
