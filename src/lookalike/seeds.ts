// The seeds of a lookalike run: domain arguments, or --seeds <file|-> read by the batch's reader
// (a CSV with a domain column, or a plain list), normalised by the one domain rule and deduplicated
// in first-seen order. A seed that is not a domain stops the run before anything is sent: the
// fused list depends on every seed, so a silently dropped one would change it unnoticed.
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { doubtfulTitle } from '../csv/domain-columns.js';
import { forEachRow, openInput } from '../csv/input.js';
import type { CsvFlags } from '../csv/options.js';
import { choiceNote } from '../csv/read.js';
import { normaliseDomain } from '../domain.js';
import { oneLine } from '../output/sanitize.js';
import { Problem } from '../problem.js';
import type { IO } from '../types.js';

/** How many bad seeds a message names before counting the rest. */
const SHOWN_BAD_SEEDS = 5;

export interface SeedSources {
  /** The domain arguments, as typed. */
  args: readonly string[];
  /** --seeds: a path, or `-` for stdin. */
  file?: string;
  /** --column: the domain column of the --seeds CSV. */
  column?: string;
  /** --delimiter and --encoding of the --seeds CSV; sniffed when absent. */
  csv?: CsvFlags;
}

export interface Seeds {
  /** Normalised, unique, in the order given. */
  domains: string[];
  /** Entries that normalised to a seed already in the list. */
  duplicates: number;
  /** A one-column file's first line read as its title although it may be a domain. */
  doubtfulTitle?: string;
  /** What was guessed about the --seeds file's encoding or delimiter, to be said once. */
  note?: string;
}

function invalidSeeds(bad: string[], count: number): Problem {
  const more = count - bad.length;
  return new Problem({
    code: 'invalid_domain',
    title: count === 1 ? 'Invalid seed domain' : 'Invalid seed domains',
    detail: `${bad.join('; ')}${more > 0 ? `; and ${more} more` : ''}`,
    hint: 'Give a company domain such as acme-shoes.com, or its http(s) URL.',
    source: 'client',
  });
}

function unreadable(file: string, error: unknown): Problem {
  const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
  const reason = missing ? 'no such file' : error instanceof Error ? error.message : String(error);
  return new Problem({
    code: 'invalid_input',
    title: 'Cannot read seeds',
    detail: `${file}: ${oneLine(reason)}`,
    hint: 'Give --seeds a CSV with a domain column (domain, website, url, ...) or a list of one domain per line, or `-` for stdin.',
    source: 'client',
    cause: error,
  });
}

/** The entries of a --seeds file, each with where it stands, in file order. */
async function readSeedFile(
  file: string,
  column: string | undefined,
  csv: CsvFlags | undefined,
  io: Pick<IO, 'stdin'>,
): Promise<{
  entries: Array<{ raw: string; where: string; error?: string }>;
  title?: string;
  note?: string;
}> {
  const name = file === '-' ? 'stdin' : file;
  let source: Readable | Buffer;
  try {
    // A seed list is a few lines: read whole, parsed in one call.
    source = file === '-' ? io.stdin : readFileSync(file);
  } catch (error) {
    throw unreadable(name, error);
  }
  try {
    const input = await openInput(source, { column, ...csv });
    const entries: Array<{ raw: string; where: string; error?: string }> = [];
    await forEachRow(input.rows, (row) => {
      // A malformed record's detail already says its line.
      if (row.error)
        entries.push({ raw: row.cells.join(','), where: `--seeds ${name}`, error: row.error.detail });
      else if (row.domainRaw.trim() !== '')
        entries.push({ raw: row.domainRaw, where: `--seeds ${name} line ${row.line}` });
    });
    const note = choiceNote(`--seeds ${name}`, input.choice);
    return { entries, title: doubtfulTitle(input.header, column), note };
  } catch (error) {
    if (!(error instanceof Problem)) throw unreadable(name, error);
    // The reader's own problems (no domain column, a malformed header) do not say which file.
    throw new Problem({
      code: error.code,
      title: error.title,
      detail: `--seeds ${name}: ${error.detail}`,
      hint: error.extraHint,
      source: 'client',
      cause: error,
    });
  }
}

/** Reads and normalises the seeds; throws a Problem (exit 2) for any that is not a domain. */
export async function loadSeeds(sources: SeedSources, io: Pick<IO, 'stdin'>): Promise<Seeds> {
  const read =
    sources.file === undefined
      ? { entries: sources.args.map((raw) => ({ raw, where: '', error: undefined })) }
      : await readSeedFile(sources.file, sources.column, sources.csv, io);
  const domains: string[] = [];
  const bad: string[] = [];
  let badCount = 0;
  let duplicates = 0;
  for (const { raw, where, error } of read.entries) {
    const result = error === undefined ? normaliseDomain(raw) : { ok: false as const, reason: error };
    if (!result.ok) {
      badCount++;
      if (bad.length >= SHOWN_BAD_SEEDS) continue;
      if (error !== undefined) bad.push(`${where} ${oneLine(error)}`);
      else bad.push(`${where ? `${where}: ` : ''}"${oneLine(raw)}" ${oneLine(result.reason)}`);
    } else if (domains.includes(result.domain)) duplicates++;
    else domains.push(result.domain);
  }
  if (badCount > 0) throw invalidSeeds(bad, badCount);
  return {
    domains,
    duplicates,
    doubtfulTitle: 'title' in read ? read.title : undefined,
    note: 'note' in read ? read.note : undefined,
  };
}
