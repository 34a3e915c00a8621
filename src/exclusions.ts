// The exclusion list of a search: domains from CSV files, plain lists, stdin and --exclude-domain,
// normalised like the service does and deduplicated, then checked against the service's limits
// before anything is sent. A file written by `search -o json` or `-o ndjson` is read too (its rows'
// `domain`), so every output of a stopped `search --all` can continue it.
//
// Decision: an entry that is not a domain stops the search (exit 2, naming the first bad entries)
// instead of being skipped with a warning. An exclusion list is a promise that some companies
// will not come back; silently dropping an entry could return exactly the company the user wanted
// out, and a warning is easy to miss in a script.
import { closeSync, createReadStream, fstatSync, openSync, readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { doubtfulTitle } from './csv/domain-columns.js';
import { forEachRow, openInput } from './csv/input.js';
import type { CsvFlags } from './csv/options.js';
import { choiceNote } from './csv/read.js';
import { normaliseDomain } from './domain.js';
import { groupDigits } from './output/numbers.js';
import { oneLine } from './output/sanitize.js';
import { Problem, usageError } from './problem.js';
import type { IO } from './types.js';

/** The service's limit on `exclude_domains` entries (spec, Limits). */
export const MAX_EXCLUSIONS = 20_000;
/** How many bad entries an error message names before summarising the rest. */
const SHOWN_BAD_ENTRIES = 5;

export interface ExclusionSources {
  /** Paths of CSV files or plain lists; `-` reads stdin. */
  files: readonly string[];
  /** How the files are read; sniffed from each file when absent. */
  csv?: CsvFlags;
  /** Single domains from --exclude-domain. */
  domains: readonly string[];
}

export interface ExclusionList {
  /** Normalised, unique, in first-seen order. */
  domains: string[];
  /** Entries read, blank ones not counted. */
  entries: number;
  /** Entries that normalised to a domain already in the list. */
  duplicates: number;
  /**
   * One-column files whose first line was read as the title with nothing marking it as one
   * (`src/csv/domain-columns.ts`): it may be a mistyped domain, now not excluded.
   */
  doubtfulTitles: Array<{ file: string; title: string }>;
  /** What was guessed about a file's encoding or delimiter, to be said once (choiceNote). */
  notes: string[];
}

interface BadEntry {
  where: string;
  value: string;
  reason: string;
}

class Collector {
  readonly seen = new Set<string>();
  readonly bad: BadEntry[] = [];
  badCount = 0;
  entries = 0;
  duplicates = 0;
  readonly doubtfulTitles: Array<{ file: string; title: string }> = [];
  /** What was guessed about the files' encoding and delimiter, one note per file that needs one. */
  readonly notes: string[] = [];

  /** `line` 0: `where` is the whole place; else it names a file and this is the line in it. */
  add(raw: string, where: string, line = 0): void {
    if (raw.trim() === '') return;
    this.entries++;
    const result = normaliseDomain(raw);
    if (!result.ok) {
      // Only a bad entry needs its place in words: no string per entry for a good list.
      this.reject(raw, line === 0 ? where : `${where} line ${line}`, result.reason);
      return;
    }
    const size = this.seen.size;
    this.seen.add(result.domain);
    if (this.seen.size === size) this.duplicates++;
  }

  /** Keeps a file's first line when it was read as a title that may be a domain (doubtfulTitle). */
  noteTitle(file: string, header: readonly string[] | null): void {
    const title = doubtfulTitle(header);
    if (title !== undefined) this.doubtfulTitles.push({ file, title });
  }

  reject(value: string, where: string, reason: string): void {
    this.badCount++;
    if (this.bad.length < SHOWN_BAD_ENTRIES) this.bad.push({ where, value, reason });
  }
}

function sourceName(file: string): string {
  return file === '-' ? 'stdin' : file;
}

/** Files up to this size are read whole; exclusion lists are a few MB at most. */
const WHOLE_FILE_LIMIT = 32 * 1024 * 1024;

/**
 * Opening eagerly turns a missing file into a clear error before any parsing starts. Stdin is
 * read only when asked for: touching it builds a stream (~2 ms). A file of ordinary size is
 * opened, checked and read with synchronous calls, like the catalog cache: nothing else waits on
 * them at this point of a search, and each asynchronous call would cost a round trip through
 * libuv's thread pool.
 */
function openSource(file: string, io: Pick<IO, 'stdin'>): Readable | Buffer {
  if (file === '-') return io.stdin;
  const fd = openSync(file, 'r');
  let streaming = false;
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    // A pipe, a device or a very large file is read as it comes; the stream closes it.
    streaming = !stat.isFile() || stat.size > WHOLE_FILE_LIMIT;
    // Bytes read whole are parsed in one call, without a stream or a promise per record.
    return streaming ? createReadStream('', { fd }) : readFileSync(fd);
  } finally {
    if (!streaming) closeSync(fd);
  }
}

function unreadable(file: string, error: unknown): Problem {
  const reason =
    (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? 'no such file'
      : (error as NodeJS.ErrnoException).code === 'EISDIR'
        ? 'is a directory'
        : error instanceof Error
          ? error.message
          : String(error);
  return new Problem({
    code: 'invalid_input',
    title: 'Cannot read exclusions',
    detail: `${sourceName(file)}: ${oneLine(reason)}`,
    hint: 'Give --exclude a CSV with a domain column (domain, website, url, ...) or a list of one domain per line, or `-` for stdin.',
    source: 'client',
    cause: error,
  });
}

/** The row objects of a JSON document: an array, or the rows of a search's `-o json`. */
function jsonRows(document: unknown): unknown[] | undefined {
  if (Array.isArray(document)) return document;
  const rows = (document as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? rows : undefined;
}

/** The domain of one row of search's JSON output (an object with `domain`, or a bare string). */
function rowDomain(row: unknown): string | undefined {
  if (typeof row === 'string') return row;
  const domain = (row as { domain?: unknown } | null)?.domain;
  return typeof domain === 'string' ? domain : undefined;
}

/**
 * A file written by `search -o json` or `-o ndjson` (or a JSON array of rows or domains): its
 * `domain` members are the exclusions, so the output of a stopped `search --all` continues it.
 * False when the bytes do not start like JSON (after a UTF-8 BOM and blanks): then it is CSV.
 */
function readJsonSource(bytes: Buffer, name: string, collector: Collector): boolean {
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') return false;
  let document: unknown;
  let whole = true;
  try {
    document = JSON.parse(text);
  } catch {
    whole = false;
  }
  const rows = whole ? jsonRows(document) : undefined;
  if (rows) {
    rows.forEach((row, i) => {
      const domain = rowDomain(row);
      if (domain === undefined)
        collector.reject(JSON.stringify(row), `${name} row ${i + 1}`, 'has no "domain"');
      else collector.add(domain, `${name} row ${i + 1}`);
    });
    return true;
  }
  if (whole && first === '[') {
    collector.reject(text.slice(0, 40), name, 'is JSON but not an array of rows or domains');
    return true;
  }
  // One JSON object per line (NDJSON); a single object without rows reads as one line too.
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      collector.reject(line, `${name} line ${i + 1}`, 'is not a JSON line');
      return;
    }
    const domain = rowDomain(row);
    if (domain === undefined) collector.reject(line, `${name} line ${i + 1}`, 'has no "domain"');
    else collector.add(domain, name, i + 1);
  });
  return true;
}

async function readSource(
  file: string,
  csv: CsvFlags | undefined,
  io: Pick<IO, 'stdin'>,
  collector: Collector,
): Promise<void> {
  const name = sourceName(file);
  try {
    const source = openSource(file, io);
    if (Buffer.isBuffer(source) && readJsonSource(source, name, collector)) return;
    // The batch's reader: the same CSV rules, domain column and line numbers as `enrich --input`.
    const input = await openInput(source, csv);
    const note = choiceNote(`--exclude ${name}`, input.choice);
    if (note !== undefined) collector.notes.push(note);
    collector.noteTitle(name, input.header);
    await forEachRow(input.rows, (row) => {
      if (row.error) collector.reject(row.cells.join(','), `${name} line ${row.line}`, row.error.detail);
      else collector.add(row.domainRaw, name, row.line);
    });
  } catch (error) {
    if (!(error instanceof Problem)) throw unreadable(file, error);
    // The reader's own problems (no domain column, malformed CSV) do not say which file.
    throw new Problem({
      code: error.code,
      title: error.title,
      detail: `--exclude ${name}: ${error.detail}`,
      hint: error.extraHint,
      source: 'client',
      cause: error,
    });
  }
}

/**
 * Reads, normalises and deduplicates every exclusion. Throws a usage Problem (exit 2) for a bad
 * entry or more than MAX_EXCLUSIONS unique domains, and an input Problem for an unreadable file.
 */
export async function loadExclusions(
  sources: ExclusionSources,
  io: Pick<IO, 'stdin'>,
): Promise<ExclusionList> {
  if (sources.files.filter((f) => f === '-').length > 1) {
    throw usageError('--exclude - can be given once: stdin can only be read once');
  }
  const collector = new Collector();
  for (const file of sources.files) await readSource(file, sources.csv, io, collector);
  for (const domain of sources.domains) collector.add(domain, '--exclude-domain');

  if (collector.badCount > 0) {
    const shown = collector.bad.map((b) => `${b.where}: "${oneLine(b.value)}" ${oneLine(b.reason)}`);
    const more = collector.badCount - shown.length;
    throw usageError(
      `${collector.badCount} exclusion ${collector.badCount === 1 ? 'entry is' : 'entries are'} not a domain: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`,
      'Fix or remove them and run again; none are skipped, so no company you meant to exclude can slip through.',
    );
  }
  if (collector.seen.size > MAX_EXCLUSIONS) {
    throw usageError(
      `${collector.seen.size.toLocaleString('en-US')} unique exclusions; the service accepts at most ${MAX_EXCLUSIONS.toLocaleString('en-US')} per search`,
      'Exclude fewer companies, or narrow the search with --filter so fewer exclusions are needed. Nothing was sent.',
    );
  }
  return {
    domains: [...collector.seen],
    entries: collector.entries,
    duplicates: collector.duplicates,
    doubtfulTitles: collector.doubtfulTitles,
    notes: collector.notes,
  };
}

/**
 * The exclusions of --exclude and --exclude-domain, read, checked and reported as every command
 * that takes them reports them: a note for a first line read as a title, and how many there are.
 */
export async function loadReportedExclusions(
  flags: { exclude?: string[]; excludeDomain?: string[] } & CsvFlags,
  io: IO,
): Promise<string[]> {
  const csv = { delimiter: flags.delimiter, encoding: flags.encoding };
  const list = await loadExclusions(
    { files: flags.exclude ?? [], domains: flags.excludeDomain ?? [], csv },
    io,
  );
  for (const note of list.notes) io.info(note);
  for (const { file, title } of list.doubtfulTitles) {
    io.warn(
      `note: the first line of --exclude ${oneLine(file)}, "${oneLine(title)}", was read as the column's title, not as a domain to exclude; put a title line such as "domain" above the domains if it is one`,
    );
  }
  const dropped =
    list.duplicates > 0 ? ` (${list.duplicates} duplicate${list.duplicates === 1 ? '' : 's'} dropped)` : '';
  const count = list.domains.length;
  io.info(`Excluding ${groupDigits(count)} domain${count === 1 ? '' : 's'}${dropped}.`);
  return list.domains;
}

/**
 * The domain a returned row or candidate is excluded (and fused) by: normalised like the
 * exclusion list and the seeds; a value that is no domain, lower-cased.
 */
export function rowDomainKey(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const result = normaliseDomain(value);
  return result.ok ? result.domain : value.toLowerCase();
}

/**
 * The rows that name no excluded domain, and how many did: the exclusions hold on the client too,
 * whatever the service did with them (docs/contract.md, "Exclusions").
 */
export function withoutExcluded<T extends { domain?: unknown }>(
  rows: readonly T[],
  excluded: ReadonlySet<string>,
): { rows: T[]; dropped: number } {
  if (excluded.size === 0) return { rows: [...rows], dropped: 0 };
  const kept = rows.filter((row) => {
    const key = rowDomainKey(row.domain);
    return key === undefined || !excluded.has(key);
  });
  return { rows: kept, dropped: rows.length - kept.length };
}

/**
 * What stderr says when the service returned rows naming excluded domains: a search sent them
 * (`sent`), so that is the service ignoring them; a lookalike cannot send them, so it is expected.
 */
export function excludedRowsNote(dropped: number, sent: boolean): string {
  const rows = `${groupDigits(dropped)} ${dropped === 1 ? 'row' : 'rows'}`;
  return sent
    ? `warning: the service returned ${rows} naming excluded domains despite the exclusions; ${dropped === 1 ? 'it was' : 'they were'} left out.`
    : `Left out ${groupDigits(dropped)} ${dropped === 1 ? 'candidate' : 'candidates'} on the exclusion list.`;
}
