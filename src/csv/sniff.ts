// Sniffing, as qsv `sniff` and Python's csv.Sniffer do: the encoding and the delimiter of a CSV
// are guessed from its first bytes, so that a spreadsheet's export (semicolons in much of Europe,
// Excel's "Unicode text" in UTF-16 with tabs, Windows-1252) reads without options. A guess that
// cannot be made with confidence is not made: the caller stops and names --delimiter and
// --encoding.
import { parse } from 'csv-parse/sync';
import { byteOrderMark, type CsvEncoding } from './records.js';

/** How much of the start of a file the guesses look at. */
export const SNIFF_BYTES = 64 * 1024;
/** How many records of that start the delimiter is judged on. */
export const SNIFF_RECORDS = 50;

/** The delimiters a sniff chooses among, in the order they are named. */
export const SNIFFED_DELIMITERS = [',', ';', '\t', '|'] as const;

export type EncodingGuess =
  | { encoding: CsvEncoding; why: 'bom' | 'utf8' | 'not-utf8' }
  | { undecided: string };

/**
 * The encoding of a file from its first bytes (`complete` when they are the whole file): a byte
 * order mark says UTF-8 or UTF-16; valid UTF-8 is UTF-8; anything else is Windows-1252, which
 * also reads Latin-1 (they differ only where Latin-1 has control characters), or ISO-8859-15
 * where the bytes tell them apart (eightBitEncoding). NUL bytes without a mark are UTF-16 or a
 * binary file: no guess.
 */
export function sniffEncoding(head: Uint8Array, complete: boolean): EncodingGuess {
  const mark = byteOrderMark(head);
  if (mark) return { encoding: mark.encoding, why: 'bom' };
  if (head.includes(0)) {
    return {
      undecided: 'it holds NUL bytes, as UTF-16 without a byte order mark (or a file that is not text) does',
    };
  }
  try {
    // In stream mode a character cut off at the end of the sample is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: !complete });
    return { encoding: 'utf8', why: 'utf8' };
  } catch {
    return { encoding: eightBitEncoding(head), why: 'not-utf8' };
  }
}

/**
 * Windows-1252 or ISO-8859-15 (LibreOffice's "Western Europe (ISO-8859-15)", where the euro sign
 * is byte 0xA4). Bytes 0x80-0x9F are letters and signs in Windows-1252 (its euro is 0x80) and
 * control characters in ISO-8859-15: any of them says Windows-1252. Without them, a byte 0xA4 is
 * far likelier a euro sign than Windows-1252's currency sign `¤`: ISO-8859-15. Otherwise the two
 * differ only in seven rare signs, and Windows-1252 is kept.
 */
function eightBitEncoding(head: Uint8Array): CsvEncoding {
  let sawA4 = false;
  for (const byte of head) {
    if (byte >= 0x80 && byte <= 0x9f) return 'windows-1252';
    if (byte === 0xa4) sawA4 = true;
  }
  return sawA4 ? 'iso-8859-15' : 'windows-1252';
}

export type DelimiterGuess = { delimiter: string; why: 'sniffed' | 'one-column' } | { undecided: string };

interface Candidate {
  delimiter: string;
  /** Fields of the first record. */
  width: number;
  /** Share of the following records with as many fields as the first (1 when there are none). */
  regularity: number;
}

/** How a delimiter is named in messages. */
export function delimiterName(delimiter: string): string {
  return delimiter === '\t' ? 'tab' : JSON.stringify(delimiter);
}

function candidate(sample: string, delimiter: string): Candidate {
  const records = parse(sample, {
    bom: false,
    delimiter,
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    to: SNIFF_RECORDS,
  }) as string[][];
  // Lines of only blanks are not the header (the reader skips them too).
  const kept = records.filter((cells) => cells.length > 1 || cells[0].trim() !== '');
  const width = kept[0]?.length ?? 0;
  const rows = kept.slice(1);
  const regular = rows.filter((cells) => cells.length === width).length;
  return { delimiter, width, regularity: rows.length === 0 ? 1 : regular / rows.length };
}

/**
 * The delimiter of decoded text from the start of a file (`complete` when it is all of it): of
 * `,` `;` tab `|`, the one that splits the first record (the header) into several fields and the
 * following records into as many, csv-parse judging quotes. None splitting the header: one column
 * (`,`). Two splitting it with equally regular rows: no guess.
 */
export function sniffDelimiter(text: string, complete: boolean): DelimiterGuess {
  let sample = text;
  if (!complete) {
    // The last line may be cut short: judge complete lines only (unless there is just one).
    const end = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
    if (end > 0) sample = text.slice(0, end);
  }
  const splitting = SNIFFED_DELIMITERS.map((d) => candidate(sample, d))
    .filter((c) => c.width > 1)
    .sort((a, b) => b.regularity - a.regularity);
  const [best, next] = splitting;
  if (best === undefined) return { delimiter: ',', why: 'one-column' };
  if (next === undefined || best.regularity > next.regularity)
    return { delimiter: best.delimiter, why: 'sniffed' };
  const tied = splitting
    .filter((c) => c.regularity === best.regularity)
    .map((c) => delimiterName(c.delimiter));
  return {
    undecided: `${tied.slice(0, -1).join(', ')} and ${tied.at(-1)} each split its header and rows into regular columns`,
  };
}
