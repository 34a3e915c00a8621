// The exclusion list of a search: domains from CSV files, plain lists, stdin and --exclude-domain,
// normalised like the service does and deduplicated, then checked against the service's limits
// before anything is sent.
//
// Decision: an entry that is not a domain stops the search (exit 2, naming the first bad entries)
// instead of being skipped with a warning. An exclusion list is a promise that some companies
// will not come back; silently dropping an entry could return exactly the company the user wanted
// out, and a warning is easy to miss in a script.
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { openInput } from './batch/input.js';
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

/** Opening eagerly turns a missing file into a clear error before any parsing starts. */
async function openSource(file: string, stdin: Readable): Promise<Readable> {
  if (file === '-') return stdin;
  const handle = await open(file, 'r');
  if ((await handle.stat()).isDirectory()) {
    await handle.close();
    throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
  }
  return handle.createReadStream();
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
    const input = await openInput(await openSource(file, stdin));
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
