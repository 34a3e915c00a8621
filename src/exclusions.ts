// The exclusion list of a search: domains from CSV files, plain lists, stdin and --exclude-domain,
// normalised like the service does and deduplicated, then checked against the service's limits
// before anything is sent.
//
// Decision: an entry that is not a domain stops the search (exit 2, naming the first bad entries)
// instead of being skipped with a warning. An exclusion list is a promise that some companies
// will not come back; silently dropping an entry could return exactly the company the user wanted
// out, and a warning is easy to miss in a script.
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { DOMAIN_COLUMN_NAMES, openInput } from './batch/input.js';
import { normaliseDomain } from './domain.js';
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

  add(raw: string, where: string): void {
    if (raw.trim() === '') return;
    this.entries++;
    const result = normaliseDomain(raw);
    if (!result.ok) {
      this.reject(raw, where, result.reason);
      return;
    }
    if (this.seen.has(result.domain)) this.duplicates++;
    else this.seen.add(result.domain);
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
const DOUBLE_QUOTE = 0x22;

/**
 * Opening eagerly turns a missing file into a clear error before any parsing starts. A file of
 * ordinary size comes back as its bytes, so that an unquoted one can skip csv-parse.
 */
async function openSource(file: string, stdin: Readable): Promise<Readable | Buffer> {
  if (file === '-') return stdin;
  const handle = await open(file, 'r');
  const stat = await handle.stat();
  if (stat.isDirectory()) {
    await handle.close();
    throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
  }
  if (!stat.isFile() || stat.size > WHOLE_FILE_LIMIT) return handle.createReadStream();
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

interface Entry {
  raw: string;
  line: number;
}

/** What the general reader skips: empty lines, and lines of only spaces with no delimiter. */
function isBlankLine(line: string): boolean {
  return !line.includes(',') && line.trim() === '';
}

function domainColumnOf(header: string[]): number {
  for (const name of DOMAIN_COLUMN_NAMES) {
    const index = header.findIndex((cell) => cell.trim().toLowerCase() === name);
    if (index !== -1) return index;
  }
  return header.length === 1 ? 0 : -1;
}

/**
 * Profiled, csv-parse was the largest share of reading 20,000 exclusions (docs/performance.md).
 * Without a `"` anywhere a CSV has no quoting, so a record is a line and its cells are split at
 * commas: the same records csv-parse gives, at a fraction of the cost. Only the plain shapes are
 * read here: a list of domains, or a header with a domain column and rows exactly as wide.
 * Anything else returns null and goes through the general reader, which words its problems.
 */
function splitUnquoted(bytes: Buffer): Entry[] | null {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const lines = text.split(/\r\n|\r|\n/);
  let start = 0;
  while (start < lines.length && isBlankLine(lines[start])) start++;
  if (start === lines.length) return [];
  const first = lines[start];
  const header = first.split(',');
  // The same test as the general reader's: one field that reads as a domain or URL.
  const plainList = header.length === 1 && (normaliseDomain(first).ok || /[./@]/.test(first.trim()));
  const column = plainList ? 0 : domainColumnOf(header);
  if (column === -1) return null;
  const width = header.length;
  const entries: Entry[] = [];
  for (let i = plainList ? start : start + 1; i < lines.length; i++) {
    const line = lines[i];
    if (isBlankLine(line)) continue;
    // In a plain list the whole line is the value, commas included (a URL's query).
    if (plainList || (width === 1 && !line.includes(','))) {
      entries.push({ raw: line, line: i + 1 });
      continue;
    }
    const cells = line.split(',');
    if (cells.length !== width) return null;
    entries.push({ raw: cells[column], line: i + 1 });
  }
  return entries;
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

async function readSource(file: string, stdin: Readable, collector: Collector): Promise<void> {
  const name = sourceName(file);
  try {
    const source = await openSource(file, stdin);
    if (Buffer.isBuffer(source)) {
      const entries = source.includes(DOUBLE_QUOTE) ? null : splitUnquoted(source);
      if (entries) {
        for (const entry of entries) collector.add(entry.raw, `${name} line ${entry.line}`);
        return;
      }
    }
    const stream = Buffer.isBuffer(source) ? Readable.from([source], { objectMode: false }) : source;
    const input = await openInput(stream);
    for await (const row of input.rows) {
      const where = `${name} line ${row.line}`;
      if (row.error) collector.reject(row.cells.join(','), where, row.error.detail);
      else collector.add(row.domainRaw, where);
    }
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
  for (const file of sources.files) await readSource(file, io.stdin, collector);
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
  return { domains: [...collector.seen], entries: collector.entries, duplicates: collector.duplicates };
}
