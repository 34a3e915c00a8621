// The records of a CSV source once its encoding and delimiter are known (sniff.ts and read.ts
// decide them): batch inputs, exclusion lists and lookalike seeds all come here, so a file reads
// the same, with the same line numbers in its errors, whatever it is given to.
//
// csv-parse does the parsing. Around it, this file adds what csv-parse does not give reliably:
// - the text: the bytes are decoded here with TextDecoder (a UTF-8, UTF-16LE or UTF-16BE byte
//   order mark wins over the encoding asked for) and csv-parse is fed UTF-8, because csv-parse
//   knows no UTF-16BE nor Windows-1252 and numbers the lines of UTF-16LE wrongly after an empty one;
// - the line each record starts on: counted from the `raw` text of every record, empty lines
//   included, because csv-parse's `info.lines` counts a CRLF inside quotes twice, and its raw
//   text after a run of skipped empty lines loses a break when `\r\n` and `\n` mix;
// - recovery after an unclosed quote, which would otherwise make the rest of the file one field.
// Records stream out as the source is read: a batch input can be a million rows. A file already
// in memory (an exclusion list) is parsed in one call instead; both readings go through
// RecordLines, the one place that turns csv-parse's output into records and lines.
import { pipeline, Readable } from 'node:stream';
import { type CsvError, type Options, parse } from 'csv-parse';
import { parse as parseWhole } from 'csv-parse/sync';

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
  encoding: CsvEncoding;
  /** Bytes invalid in the encoding throw NotUtf8Error (for a guessed UTF-8) instead of becoming U+FFFD. */
  strict?: boolean;
}

interface ParsedChunk {
  record: string[];
  raw: string;
}

interface Skipped {
  /** Records emitted before the skipped one (csv-parse's info.records, carried by its error). */
  recordsBefore: number;
  code: string;
  message: string;
  raw: string;
}

const LEADING_BREAKS = /^(?:\r\n|\r|\n)+/;

/** Line breaks in `text`, a `\r\n` counting as one (a character loop: no array per record). */
function countBreaks(text: string): number {
  let breaks = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) breaks++;
    else if (c === 13) {
      breaks++;
      if (text.charCodeAt(i + 1) === 10) i++;
    }
  }
  return breaks;
}

function leadingBreaks(text: string): number {
  let breaks = 0;
  for (let i = 0; ; breaks++) {
    const c = text.charCodeAt(i);
    if (c === 10) i++;
    else if (c === 13) i += text.charCodeAt(i + 1) === 10 ? 2 : 1;
    else return breaks;
  }
}

/**
 * The raw text of an empty line: nothing but its break (or nothing, at the very end). csv-parse's
 * raw text keeps only the `\r` of a `\r\n` that ends a record; either way it is one break.
 */
function isBlankLine(raw: string): boolean {
  return raw === '' || raw === '\n' || raw === '\r' || raw === '\r\n';
}

/** The encodings the reader decodes: what --encoding accepts, and UTF-16BE (by its byte order mark). */
export type CsvEncoding = 'utf8' | 'utf16le' | 'utf16be' | 'windows-1252' | 'iso-8859-15' | 'latin1';

/** WHATWG labels for TextDecoder; `latin1` is Windows-1252 there, as in every browser. */
export const DECODER_LABELS: Record<CsvEncoding, string> = {
  utf8: 'utf-8',
  utf16le: 'utf-16le',
  utf16be: 'utf-16be',
  'windows-1252': 'windows-1252',
  'iso-8859-15': 'iso-8859-15',
  latin1: 'windows-1252',
};

/** The encoding a byte order mark at the start of `head` declares, and its length; undefined without one. */
export function byteOrderMark(head: Uint8Array): { encoding: CsvEncoding; length: number } | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf8', length: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf16le', length: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf16be', length: 2 };
  return undefined;
}

/** Thrown when bytes read as UTF-8 because their start was UTF-8 turn out not to be, further on. */
export class NotUtf8Error extends Error {
  constructor(readonly offset: number) {
    super(`the bytes after byte ${offset} are not valid UTF-8`);
  }
}

/**
 * Decodes a byte stream: a UTF-8, UTF-16LE or UTF-16BE byte order mark at the start (of at least
 * 3 bytes, as csv-parse has always required) sets the encoding, whatever was asked for, and is
 * dropped. TextDecoder carries a character cut between two chunks over to the next. `strict`:
 * bytes that are not valid in the encoding throw NotUtf8Error instead of becoming U+FFFD (the
 * encoding was a guess from the start of the file, and the rest must not be quietly damaged).
 */
class BomDecoder {
  private decoder: InstanceType<typeof TextDecoder> | undefined;
  private head: Buffer | undefined;
  private offset = 0;

  constructor(
    private readonly encoding: CsvEncoding,
    private readonly strict = false,
  ) {}

  private start(head: Buffer): Buffer {
    const mark = head.length >= 3 ? byteOrderMark(head) : undefined;
    const label = DECODER_LABELS[mark?.encoding ?? this.encoding];
    // The mark is dropped here; a second U+FEFF after it is a character, kept.
    this.decoder = new TextDecoder(label, { fatal: this.strict, ignoreBOM: true });
    this.offset = mark?.length ?? 0;
    return head.subarray(mark?.length ?? 0);
  }

  private decode(bytes: Buffer, stream: boolean): string {
    try {
      const text = this.decoder!.decode(bytes, { stream });
      this.offset += bytes.length;
      return text;
    } catch {
      throw new NotUtf8Error(this.offset);
    }
  }

  write(chunk: Buffer): string {
    if (this.decoder) return this.decode(chunk, true);
    const head = this.head ? Buffer.concat([this.head, chunk]) : chunk;
    if (head.length < 3) {
      this.head = head;
      return '';
    }
    this.head = undefined;
    return this.decode(this.start(head), true);
  }

  end(): string {
    // Fewer than 3 bytes in all: read as they are, in the encoding asked for.
    const head = this.head ?? Buffer.alloc(0);
    this.head = undefined;
    if (!this.decoder) return this.decode(this.start(head), false);
    return this.decode(head, false);
  }
}

/**
 * The text of a byte source, in pieces that never end between the two halves of a surrogate pair:
 * csv-parse turns each piece into UTF-8 on its own, and UTF-16 decoding can stop there. Strings
 * given by the source are read as their UTF-8 bytes.
 */
async function* decodedText(
  source: Readable,
  options: CsvReadOptions,
  progress: ReadProgress | undefined,
): AsyncGenerator<string> {
  const decoder = new BomDecoder(options.encoding, options.strict);
  let held = '';
  for await (const chunk of source as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const piece = held + decoder.write(bytes);
    const high = piece.length > 0 && (piece.charCodeAt(piece.length - 1) & 0xfc00) === 0xd800;
    held = high ? piece.slice(-1) : '';
    const whole = high ? piece.slice(0, -1) : piece;
    if (progress) {
      progress.bytes += bytes.length;
      progress.chars += whole.length;
    }
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
export function readCsvRecords(
  source: Readable,
  options: CsvReadOptions,
  progress?: ReadProgress,
): AsyncGenerator<CsvRecord> {
  return streamText(Readable.from(decodedText(source, options, progress)), options.delimiter, 1, progress);
}

/**
 * How far a streamed reading has got: the bytes decoded and the characters they gave, and the
 * characters of the records handed out so far. The parser reads ahead of the records taken (a
 * small file is read whole at once), so the bytes read say nothing of the rows done; the
 * records' own text does (`positionOf`).
 */
export interface ReadProgress {
  bytes: number;
  chars: number;
  consumed: number;
}

/** The bytes of the file behind the records handed out so far (an estimate, for progress). */
export function positionOf(progress: ReadProgress): number | undefined {
  if (progress.chars === 0) return undefined;
  return Math.round(progress.consumed * (progress.bytes / progress.chars));
}

/**
 * The records of a whole file already in memory, as readCsvRecords gives them, read in one call
 * to csv-parse: no stream, no promise per record (an exclusion list of 20,000 lines).
 */
export function csvRecordsOf(bytes: Uint8Array, options: CsvReadOptions): Generator<CsvRecord> {
  const decoder = new BomDecoder(options.encoding, options.strict);
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return wholeText(decoder.write(buffer) + decoder.end(), options.delimiter, 1);
}

/**
 * What csv-parse gives, made records with lines: the one place that decides which records there
 * are and where each starts, for streamed and whole text alike. Feed it csv-parse's records in
 * order (`take`), and after each and at the end the records it skipped (`skippedBefore`).
 */
class RecordLines {
  private readonly skipped: Skipped[] = [];
  /** Line breaks before the text csv-parse has given so far. */
  private breaksSoFar: number;
  /** csv-parse's records taken so far, empty lines included. */
  private records = 0;
  readonly options: Options;

  constructor(
    private readonly delimiter: string,
    firstLine: number,
  ) {
    this.breaksSoFar = firstLine - 1;
    this.options = {
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
        // A CsvError carries csv-parse's counts as they stood, records emitted among them.
        const before = error?.records;
        this.skipped.push({
          recordsBefore: typeof before === 'number' ? before : this.records,
          code: error?.code ?? 'CSV_ERROR',
          message: error?.message ?? 'malformed record',
          raw: raw ?? '',
        });
        return undefined;
      },
    };
  }

  /** Whether records csv-parse skipped wait to be given out (see skippedBefore). */
  get skipsWaiting(): boolean {
    return this.skipped.length > 0;
  }

  /** The record for csv-parse's next one, or undefined for an empty line. */
  take(chunk: ParsedChunk): CsvRecord | undefined {
    this.records++;
    const first = this.breaksSoFar;
    this.breaksSoFar += countBreaks(chunk.raw);
    if (isBlankLine(chunk.raw)) return undefined;
    return { cells: chunk.record, line: first + leadingBreaks(chunk.raw) + 1 };
  }

  /**
   * The next record csv-parse skipped before the one to be taken next (any, once `atEnd`), as a
   * malformed record; after an unclosed quote, also the text after its first line, to be read on
   * its own from line `restLine`.
   */
  skippedBefore(atEnd: boolean): { record: CsvRecord; rest: string; restLine: number } | undefined {
    const skip = this.skipped[0];
    if (skip === undefined || (!atEnd && skip.recordsBefore > this.records)) return undefined;
    this.skipped.shift();
    const line = this.breaksSoFar + leadingBreaks(skip.raw) + 1;
    const body = skip.raw.replace(LEADING_BREAKS, '');
    this.breaksSoFar += countBreaks(skip.raw);
    if (skip.code !== 'CSV_QUOTE_NOT_CLOSED') {
      const record = { cells: [body.replace(/(?:\r\n|\r|\n)$/, '')], line, malformed: skip.message };
      return { record, rest: '', restLine: 0 };
    }
    const lineEnd = /\r\n|\r|\n/.exec(body);
    const record = {
      cells: (lineEnd ? body.slice(0, lineEnd.index) : body).split(this.delimiter),
      line,
      malformed: `a quoted field opened on line ${line} is never closed; the following lines were read on their own`,
    };
    const rest = lineEnd ? body.slice(lineEnd.index + lineEnd[0].length) : '';
    return { record, rest, restLine: line + 1 };
  }
}

/** The records of decoded text whose first line is `firstLine` of the file, as it streams in. */
async function* streamText(
  text: Readable,
  delimiter: string,
  firstLine: number,
  progress?: ReadProgress,
): AsyncGenerator<CsvRecord> {
  const lines = new RecordLines(delimiter, firstLine);
  const parser = parse(lines.options);
  // pipeline destroys both streams on failure or early exit; the error reaches the loop below.
  pipeline(text, parser, () => {});
  const skipped = async function* (atEnd: boolean): AsyncGenerator<CsvRecord> {
    for (let skip = lines.skippedBefore(atEnd); skip; skip = lines.skippedBefore(atEnd)) {
      yield skip.record;
      if (skip.rest !== '') yield* streamText(Readable.from([skip.rest]), delimiter, skip.restLine);
    }
  };
  for await (const chunk of parser as AsyncIterable<ParsedChunk>) {
    if (lines.skipsWaiting) yield* skipped(false);
    // csv-parse's raw text keeps only the \r of a \r\n that ends a record: close enough here.
    if (progress) progress.consumed += chunk.raw.length;
    const record = lines.take(chunk);
    if (record) yield record;
  }
  yield* skipped(true);
}

/** The records of decoded text whose first line is `firstLine` of the file, read at once. */
function* wholeText(text: string, delimiter: string, firstLine: number): Generator<CsvRecord> {
  const lines = new RecordLines(delimiter, firstLine);
  const skipped = function* (atEnd: boolean): Generator<CsvRecord> {
    for (let skip = lines.skippedBefore(atEnd); skip; skip = lines.skippedBefore(atEnd)) {
      yield skip.record;
      if (skip.rest !== '') yield* wholeText(skip.rest, delimiter, skip.restLine);
    }
  };
  for (const chunk of parseWhole(text, lines.options) as unknown as ParsedChunk[]) {
    if (lines.skipsWaiting) yield* skipped(false);
    const record = lines.take(chunk);
    if (record) yield record;
  }
  yield* skipped(true);
}
