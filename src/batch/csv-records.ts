// The physical side of reading a batch input: csv-parse splits the stream into records, this file
// adds what csv-parse does not give reliably, the line on which each record starts, and keeps rows
// flowing after an unclosed quote (which would otherwise swallow the rest of the file as one field).
import { pipeline, Readable } from 'node:stream';
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
 * Streams the records of a CSV source in file order with their starting line. Never throws for
 * malformed CSV: such a record comes back with `malformed` set. Throws only when the source
 * itself fails (unreadable file).
 */
export async function* readCsvRecords(
  source: Readable,
  options: CsvReadOptions,
  firstLine = 1,
): AsyncGenerator<CsvRecord> {
  const skipped: Skipped[] = [];
  const parser = parse({
    bom: true,
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
      yield* readCsvRecords(Readable.from([rest]), { ...options, encoding: 'utf8' }, startLine + 1);
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
