// Opening a CSV source: its encoding and delimiter, from the options or sniffed from its start
// (sniff.ts), then its records (records.ts). A stream is read up to SNIFF_BYTES first and then
// continues from where that stopped, so a million-row input is still read once, as it comes.
import { Readable } from 'node:stream';
import { Problem } from '../problem.js';
import { inputKindOf } from '../workbook/signature.js';
import {
  byteOrderMark,
  type CsvEncoding,
  type CsvRecord,
  csvRecordsOf,
  DECODER_LABELS,
  type ReadProgress,
  readCsvRecords,
} from './records.js';
import { delimiterName, SNIFF_BYTES, SNIFF_RECORDS, sniffDelimiter, sniffEncoding } from './sniff.js';

/** Lines that are enough to judge by, when a stream gives them before SNIFF_BYTES. */
const SNIFF_LINES = SNIFF_RECORDS + 1;

/** The values --encoding accepts. */
export const ENCODING_CHOICES = ['utf8', 'utf16le', 'windows-1252', 'iso-8859-15', 'latin1'] as const;
export type EncodingChoice = (typeof ENCODING_CHOICES)[number];

export interface CsvAsked {
  /** A single character (tab as `\t`); sniffed when absent. */
  delimiter?: string;
  /** Sniffed when absent. */
  encoding?: EncodingChoice;
}

/** What the reader chose, and why: for the note on stderr (choiceNote). */
export interface CsvChoice {
  encoding: CsvEncoding;
  encodingWhy: 'option' | 'bom' | 'utf8' | 'not-utf8';
  delimiter: string;
  delimiterWhy: 'option' | 'sniffed' | 'one-column';
}

export interface OpenedCsv {
  choice: CsvChoice;
  records: AsyncGenerator<CsvRecord> | Generator<CsvRecord>;
}

const ENCODING_NAMES: Record<CsvEncoding, string> = {
  utf8: 'UTF-8',
  utf16le: 'UTF-16LE',
  utf16be: 'UTF-16BE',
  'windows-1252': 'Windows-1252',
  'iso-8859-15': 'ISO-8859-15',
  latin1: 'Latin-1 (as Windows-1252)',
};

/** The hint of every reading that could not be decided: both options, with their values. */
const OPTIONS_HINT =
  'Say how to read it: --delimiter with "," ";" tab or "|", and --encoding with utf8, utf16le, windows-1252, iso-8859-15 or latin1.';

function undecided(detail: string): Problem {
  return new Problem({
    code: 'invalid_input',
    title: 'Cannot tell how to read the input',
    detail,
    hint: OPTIONS_HINT,
    source: 'client',
  });
}

/** The mark of a file asked to be read in another encoding: the option and the file disagree. */
function checkMark(head: Uint8Array, asked: EncodingChoice): void {
  const mark = byteOrderMark(head);
  if (!mark || mark.encoding === asked || (head.length < 3 && mark.encoding === 'utf8')) return;
  throw new Problem({
    code: 'usage_error',
    title: 'Usage error',
    detail: `the input starts with a ${ENCODING_NAMES[mark.encoding]} byte order mark, and --encoding says ${asked}`,
    hint: 'Leave out --encoding: the byte order mark says how the file is encoded.',
    source: 'client',
  });
}

/**
 * A workbook or another spreadsheet file given where CSV text is read (`--exclude`, `--seeds`):
 * said as such, rather than sniffed as text and misread as UTF-16 or a list of domains.
 * (`enrich --input` tells workbooks apart before it gets here: src/workbook/open-input.ts.)
 */
function notText(head: Uint8Array): Problem | undefined {
  const kind = inputKindOf(head);
  if (kind.kind === 'text') return undefined;
  const what = kind.kind === 'xlsx' ? 'an Excel workbook (.xlsx)' : kind.what;
  return new Problem({
    code: 'invalid_input',
    title: 'Cannot read the input',
    detail: `the file is ${what}, not CSV text`,
    hint: 'Save the sheet as CSV (or a list of domains, one a line) and pass that file; enrich --input reads .xlsx workbooks itself.',
    source: 'client',
  });
}

function choose(head: Uint8Array, complete: boolean, asked: CsvAsked): CsvChoice {
  const refused = notText(head);
  if (refused) throw refused;
  let encoding: CsvEncoding;
  let encodingWhy: CsvChoice['encodingWhy'];
  if (asked.encoding !== undefined) {
    checkMark(head, asked.encoding);
    encoding = asked.encoding;
    encodingWhy = 'option';
  } else {
    const guess = sniffEncoding(head, complete);
    if ('undecided' in guess) throw undecided(`cannot tell the input's encoding: ${guess.undecided}`);
    encoding = guess.encoding;
    encodingWhy = guess.why;
  }
  if (asked.delimiter !== undefined) {
    return { encoding, encodingWhy, delimiter: asked.delimiter, delimiterWhy: 'option' };
  }
  const mark = byteOrderMark(head);
  const text = new TextDecoder(DECODER_LABELS[encoding], { ignoreBOM: true }).decode(
    head.subarray(mark?.length ?? 0),
    { stream: !complete },
  );
  const guess = sniffDelimiter(text, complete);
  if ('undecided' in guess)
    throw undecided(`cannot tell what separates the input's fields: ${guess.undecided}`);
  return { encoding, encodingWhy, delimiter: guess.delimiter, delimiterWhy: guess.why };
}

function bytesOf(chunk: Buffer | string): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
}

/**
 * Opens a CSV source given as a stream or as the bytes of a whole file: chooses its encoding and
 * delimiter (the options win; sniffed otherwise) and gives its records. Throws an `invalid_input`
 * problem naming --delimiter and --encoding when the guess cannot be made, and a usage problem
 * when --encoding contradicts the file's byte order mark.
 */
export async function openCsv(
  source: Readable | Uint8Array,
  asked: CsvAsked,
  progress?: ReadProgress,
): Promise<OpenedCsv> {
  if (source instanceof Uint8Array) {
    const choice = choose(source, true, asked);
    return { choice, records: csvRecordsOf(source, readOptions(choice)) };
  }
  const chunks = (source as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let size = 0;
  let breaks = 0;
  let complete = false;
  // Up to SNIFF_BYTES, or as soon as enough lines are in to judge: a pipe whose producer writes
  // slowly starts being read after its first lines, not after 64 KB. (A 0x0A byte is a line
  // feed in UTF-8, Windows-1252 and UTF-16 alike; in UTF-16 other characters hold some too,
  // which only makes the head shorter.)
  while (size < SNIFF_BYTES && breaks <= SNIFF_LINES) {
    const next = await chunks.next();
    if (next.done) {
      complete = true;
      break;
    }
    const bytes = bytesOf(next.value);
    head.push(bytes);
    size += bytes.length;
    for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) breaks++;
  }
  const headBytes = Buffer.concat(head);
  let choice: CsvChoice;
  try {
    choice = choose(headBytes, complete, asked);
  } catch (error) {
    source.destroy();
    throw error;
  }
  async function* whole(): AsyncGenerator<Buffer> {
    yield headBytes;
    if (complete) return;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield bytesOf(next.value);
  }
  return { choice, records: readCsvRecords(Readable.from(whole()), readOptions(choice), progress) };
}

/** A guessed UTF-8 is read strictly: bytes further on that are not UTF-8 stop the reading. */
function readOptions(choice: CsvChoice) {
  return { delimiter: choice.delimiter, encoding: choice.encoding, strict: choice.encodingWhy === 'utf8' };
}

/**
 * The note a reading deserves on stderr, once: what was guessed when it is not plain UTF-8 with
 * commas, and the option that reads it otherwise; undefined when there is nothing to say.
 */
export function choiceNote(name: string, choice: CsvChoice): string | undefined {
  const parts: string[] = [];
  if (choice.encodingWhy === 'bom' && choice.encoding !== 'utf8')
    parts.push(`as ${ENCODING_NAMES[choice.encoding]} (its byte order mark says so)`);
  if (choice.encodingWhy === 'not-utf8')
    parts.push(
      `as ${ENCODING_NAMES[choice.encoding]}, since it is not valid UTF-8 (--encoding reads it otherwise)`,
    );
  if (choice.delimiterWhy === 'sniffed' && choice.delimiter !== ',')
    parts.push(
      `with fields separated by ${delimiterName(choice.delimiter)} (--delimiter reads it otherwise)`,
    );
  if (parts.length === 0) return undefined;
  return `Reading ${name} ${parts.join(', ')}.`;
}

/** The problem of a guessed UTF-8 that turned out not to be, past the bytes sniffed. */
export function notUtf8Problem(offset: number): Problem {
  return new Problem({
    code: 'invalid_input',
    title: 'Cannot read the input',
    detail: `the input is not valid UTF-8 after byte ${offset}, although its start was, so it was read as UTF-8`,
    hint: 'Pass --encoding windows-1252 (or the encoding the file was saved in).',
    source: 'client',
  });
}
