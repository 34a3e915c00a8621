// `company-data store info|prune|clear|export`: look into the result store, remove what is old or
// everything, and take the stored answers out as CSV or NDJSON. None of them is charged, and none
// creates a store that does not exist yet. The spend ledger is read by `company-data spend`.
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import type { CommandKit } from '../command-kit.js';
import { groupDigits } from '../output/numbers.js';
import { usageError } from '../problem.js';
import {
  DEFAULT_MAX_AGE_MS,
  DEFAULT_NOT_FOUND_MAX_AGE_MS,
  isPostgresUrl,
  parseAge,
  TIME_UNITS,
} from '../store/location.js';
import type { ExportedAnswer } from '../store/types.js';
import { escapeForTerminal, plural } from '../text.js';
import type { Context } from '../types.js';

export function register(program: Command, kit: CommandKit): void {
  const store = program
    .command('store')
    .description('Inspect, prune, clear or export the result store (never charged)')
    .addHelpText(
      'after',
      `
The store ($XDG_STATE_HOME/company-data/store.db, or --store <path>, or COMPANY_DATA_STORE)
keeps every answer bought, so that the same lookup is not paid twice, and the spend ledger
that \`company-data spend\` and --budget-month read.

Examples:
  $ company-data store info
  $ company-data store prune --max-age 14d
  $ company-data store export -o csv > answers.csv
  $ company-data store clear --yes`,
    );
  store
    .command('info')
    .description('Show the store file, its size, and answers by outcome and age')
    .addHelpText(
      'after',
      `
"expired" counts the answers \`store prune\` removes by default: found answers older than 30
days and not-found answers older than 7 days. A store that does not exist is not created.

Example:
  $ company-data store info -o json`,
    )
    .action(kit.withContext(runStoreInfo));
  store
    .command('prune')
    .description('Remove the answers older than their age limit')
    .option('--max-age <age>', 'found answers older than this go (default 30d)', parseAge('--max-age'))
    .option(
      '--not-found-max-age <age>',
      'not-found answers older than this go (default 7d)',
      parseAge('--not-found-max-age'),
    )
    .addHelpText(
      'after',
      `
An age is a number and a unit: 90m, 12h, 30d, 2w (0: every answer). The spend ledger is kept.
The file does not shrink: the space freed is reused by the answers bought next (\`store clear\`
gives the space back).

Examples:
  $ company-data store prune
  $ company-data store prune --max-age 7d --not-found-max-age 1d`,
    )
    .action(kit.withContext(runStorePrune));
  store
    .command('clear')
    .description('Remove every stored answer (the ledger stays unless --ledger)')
    .option('-y, --yes', 'do not ask first (needed off a terminal)')
    .option('--ledger', 'also empty the spend ledger, which --budget-month and `spend` read')
    .addHelpText(
      'after',
      `
On a terminal it asks first. The spend ledger stays by default: --budget-month counts what was
spent this month from it, and \`company-data spend\` reports it.

Examples:
  $ company-data store clear
  $ company-data store clear --yes --ledger`,
    )
    .action(kit.withContext(runStoreClear));
  store
    .command('export')
    .description('Write every stored answer as NDJSON (or -o csv, -o json)')
    .addHelpText(
      'after',
      `
Each answer comes with its domain, whether it was found, when it was bought (bought_at, UTC),
its credits, and what it was bought for (base_url, key: a hash of the key, products, include,
max_credits). NDJSON and JSON carry the record as an object; CSV has a column per field (a
field named like one of those columns is written as cd_<field>).

Examples:
  $ company-data store export > answers.ndjson
  $ company-data store export -o csv > answers.csv`,
    )
    .action(kit.withContext(runStoreExport));
}

export interface PruneOptions {
  maxAge?: number;
  notFoundMaxAge?: number;
}

export interface ClearOptions {
  yes?: boolean;
  ledger?: boolean;
}

const AGES = { maxAgeMs: DEFAULT_MAX_AGE_MS, notFoundMaxAgeMs: DEFAULT_NOT_FOUND_MAX_AGE_MS };

export async function runStoreInfo(ctx: Context): Promise<number> {
  const [admin, { formatOf, printRecord }] = await Promise.all([
    import('../store/admin.js'),
    import('../output/format.js'),
  ]);
  const { path, opened } = await admin.existingStore(ctx.store, 'inspect');
  const summary = await admin.storeSummary(path, opened, ctx.now(), AGES);
  const table = formatOf(ctx) === 'table';
  // People read 45,056 more easily; the other formats keep the plain number.
  const shown = table ? { ...summary, size_bytes: groupDigits(summary.size_bytes) } : summary;
  printRecord(ctx, shown, { title: 'Result store' });
  if (!opened) ctx.io.info(`There is no store at ${path} yet: the first answer bought creates it.`);
  else if (table && summary.expired > 0) {
    ctx.io.info(
      `\`company-data store prune\` removes the ${plural(summary.expired, 'expired answer')} (found: older than 30 days, not found: older than 7 days).`,
    );
  }
  return 0;
}

export async function runStorePrune(ctx: Context, options: PruneOptions): Promise<number> {
  const admin = await import('../store/admin.js');
  const ages = {
    maxAgeMs: options.maxAge ?? DEFAULT_MAX_AGE_MS,
    notFoundMaxAgeMs: options.notFoundMaxAge ?? DEFAULT_NOT_FOUND_MAX_AGE_MS,
  };
  const { path, opened } = await admin.existingStore(ctx.store, 'prune');
  if (opened) await admin.refuseWhileRunsLive(opened, 'store prune');
  const removed = opened ? await opened.prune(ctx.now(), ages) : { found: 0, not_found: 0 };
  const remaining = opened ? (await opened.counts(ctx.now(), ages)).answers : 0;
  const total = removed.found + removed.not_found;
  const sentence = opened
    ? `Removed ${plural(total, 'answer')} from ${path}: ${groupDigits(removed.found)} found older than ${durationText(ages.maxAgeMs)}, ${groupDigits(removed.not_found)} not found older than ${durationText(ages.notFoundMaxAgeMs)}; ${groupDigits(remaining)} left.`
    : `There is no store at ${path}: nothing to remove.`;
  await printOutcome(ctx, sentence, {
    path,
    removed: total,
    removed_found: removed.found,
    removed_not_found: removed.not_found,
    remaining,
  });
  return 0;
}

export async function runStoreClear(ctx: Context, options: ClearOptions): Promise<number> {
  const admin = await import('../store/admin.js');
  const path = admin.storeFile(ctx.store, 'clear');
  const canAsk = ctx.io.isStdinTTY && ctx.io.isStderrTTY;
  if (!options.yes && !canAsk) {
    throw usageError(
      `store clear removes every stored answer from ${path} and asks first, but there is no terminal to ask on`,
      'Add --yes to remove them without asking.',
    );
  }
  const outcome = (answers: number, entries: number, sentence: string) =>
    printOutcome(ctx, sentence, { path, removed_answers: answers, removed_ledger_entries: entries });
  let opened: Awaited<ReturnType<typeof admin.existingStore>>['opened'];
  let answers: number;
  let entries: number;
  try {
    opened = (await admin.existingStore(ctx.store, 'clear')).opened;
    const counts = opened ? await opened.counts(ctx.now(), AGES) : undefined;
    answers = counts?.answers ?? 0;
    entries = counts?.ledger_entries ?? 0;
  } catch (error) {
    const { storeProblem } = await import('../store/sqlite.js');
    const problem = storeProblem(path, error);
    // A damaged file is moved aside; a database that cannot be reached is only reported.
    if (problem.code !== 'store_unavailable' || isPostgresUrl(path)) throw problem;
    return clearDamaged(ctx, path, problem.detail, options, canAsk);
  }
  if (!opened) {
    await outcome(0, 0, `There is no store at ${path}: nothing to remove.`);
    return 0;
  }
  await admin.refuseWhileRunsLive(opened, 'store clear');
  // A store found emptied keeps a mark until its ledger is cleared on purpose: that is still to do.
  const lost = options.ledger && (await opened.ledgerLost()) !== undefined;
  if (answers === 0 && (!options.ledger || entries === 0) && !lost) {
    await outcome(0, 0, `The store ${path} holds no answers: nothing to remove.`);
    return 0;
  }
  if (!options.yes) {
    const what = options.ledger
      ? `Remove ${everyOf(answers, 'stored answer')} and the spend ledger (${plural(entries, 'entry', 'entries')}) from ${path}?`
      : `Remove ${everyOf(answers, 'stored answer')} from ${path}? The spend ledger stays (${plural(entries, 'entry', 'entries')}): --budget-month counts it.`;
    // Straight to stderr, even with --quiet: without the question the command would seem to hang.
    ctx.io.stderr.write(`${what} [y/N] `);
    const answer = await readLine(ctx.io.stdin);
    if (!/^y(es)?$/i.test(answer.trim())) {
      ctx.io.warn('Nothing was removed.');
      return 0;
    }
  }
  const cleared = await opened.clear(options.ledger === true);
  const sentence = options.ledger
    ? `Removed ${plural(cleared.answers, 'answer')} and ${plural(cleared.ledger_entries, 'ledger entry', 'ledger entries')} from ${path}.`
    : `Removed ${plural(cleared.answers, 'answer')} from ${path}; the spend ledger stays (${plural(entries, 'entry', 'entries')}).`;
  await outcome(cleared.answers, cleared.ledger_entries, sentence);
  return 0;
}

export async function runStoreExport(ctx: Context): Promise<number> {
  const admin = await import('../store/admin.js');
  const format = exportFormat(ctx);
  const { path, opened } = await admin.existingStore(ctx.store, 'export');
  if (!opened) ctx.io.info(`There is no store at ${path} yet: nothing to export.`);
  const answers: AsyncIterable<ExportedAnswer> = opened ? opened.exportAnswers() : (async function* () {})();
  const out = chunkedWriter(ctx.io.stdout, ctx.io.isStdoutTTY ? escapeForTerminal : undefined);
  let count = 0;
  if (format === 'csv') {
    const [{ csvCell, csvLine }, { resultColumnNames }] = await Promise.all([
      import('../output/csv.js'),
      import('../batch/output.js'),
    ]);
    const fields = opened ? await opened.recordFields() : [];
    const fixed: string[] = [...admin.EXPORT_COLUMNS];
    const raw = { raw: ctx.config.csvRaw };
    await out.write(csvLine([...fixed, ...resultColumnNames(fixed, fields)].map((c) => csvCell(c, raw))));
    for await (const answer of answers) {
      count++;
      const cells = fixed.map((c) => csvCell(answer[c as keyof typeof answer], raw));
      for (const field of fields) cells.push(csvCell(answer.record?.[field] ?? null, raw));
      if (!(await out.write(csvLine(cells)))) break;
    }
  } else {
    const json = format === 'json';
    if (json) await out.write('[');
    for await (const answer of answers) {
      const text = json
        ? `${count > 0 ? ',' : ''}\n${JSON.stringify(answer)}`
        : `${JSON.stringify(answer)}\n`;
      count++;
      if (!(await out.write(text))) break;
    }
    if (json) await out.write(count > 0 ? '\n]\n' : ']\n');
  }
  await out.end();
  if (opened && count === 0) ctx.io.info(`The store ${path} holds no answers.`);
  return 0;
}

/**
 * NDJSON unless CSV or JSON is chosen: an export is for files and programs, so a table setting
 * (the default on a terminal, or from the environment) does not apply; `-o table` is refused.
 */
function exportFormat(ctx: Context): 'ndjson' | 'csv' | 'json' {
  const { value, source } = ctx.config.format;
  if (value === 'csv' || value === 'json' || value === 'ndjson') {
    return value === 'json' && source === 'default' ? 'ndjson' : value;
  }
  if (source === 'flag') {
    throw usageError(
      'store export writes ndjson, csv or json, not a table',
      'Drop -o table, or give -o csv.',
    );
  }
  return 'ndjson';
}

/** The sentence for a person on a terminal; the record for a program otherwise. */
async function printOutcome(ctx: Context, sentence: string, record: Record<string, unknown>): Promise<void> {
  const { formatOf, printRecord } = await import('../output/format.js');
  if (formatOf(ctx) === 'table') ctx.io.info(sentence);
  else printRecord(ctx, record);
}

/** One line typed at the terminal (without its line break); '' at the end of input. */
async function readLine(stdin: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    const end = text.indexOf('\n');
    if (end >= 0) return text.slice(0, end);
  }
  return text;
}

/**
 * Writes in chunks of about 64 KiB and waits when the reader is slower (a store may hold
 * millions of answers). write() resolves false once the reader has gone (`| head`): stop there.
 */
/** Writes in chunks of 64 KiB; `shown` turns the text into what a terminal may show (src/text.ts). */
function chunkedWriter(
  out: Writable,
  shown: (text: string) => string = (text) => text,
): { write(text: string): Promise<boolean>; end(): Promise<boolean> } {
  let gathered = '';
  const send = async (): Promise<boolean> => {
    if (out.destroyed || out.writableEnded) return false;
    const text = gathered;
    gathered = '';
    if (text !== '' && !out.write(text)) await drained(out);
    return !out.destroyed;
  };
  return {
    async write(text) {
      gathered += shown(text);
      return gathered.length >= 65_536 ? send() : !out.destroyed;
    },
    end: send,
  };
}

async function drained(out: Writable): Promise<void> {
  const stop = new AbortController();
  try {
    await Promise.race([
      once(out, 'drain', { signal: stop.signal }),
      once(out, 'close', { signal: stop.signal }),
    ]);
  } catch {
    // An error on stdout: main() reports it (exit 8), or ignores a reader that went away.
  } finally {
    stop.abort();
  }
}

/** "the 1 stored answer", "all 5 stored answers". */
function everyOf(n: number, one: string): string {
  return n === 1 ? `the ${plural(n, one)}` : `all ${plural(n, one)}`;
}

/** 30 days, 12 hours, 90 minutes: an age as --max-age took it, in its largest whole unit. */
function durationText(ms: number): string {
  for (const [size, name] of TIME_UNITS) if (ms >= size && ms % size === 0) return plural(ms / size, name);
  return plural(ms / 1000, 'second');
}

/** A store that cannot be read: moved aside (after asking), so that the next command starts anew. */
async function clearDamaged(
  ctx: Context,
  path: string,
  why: string,
  options: ClearOptions,
  canAsk: boolean,
): Promise<number> {
  const admin = await import('../store/admin.js');
  await ctx.store.opened?.close();
  if (!options.yes && canAsk) {
    ctx.io.stderr.write(`${why}. Move it aside and start a new store? [y/N] `);
    const answer = await readLine(ctx.io.stdin);
    if (!/^y(es)?$/i.test(answer.trim())) {
      ctx.io.warn('Nothing was moved.');
      return 0;
    }
  }
  const aside = await admin.moveAside(path, ctx.now());
  await printOutcome(
    ctx,
    `${why}: moved it to ${aside}; the next command starts a new store (its answers and ledger are not in it).`,
    { path, moved_to: aside, removed_answers: null, removed_ledger_entries: null },
  );
  return 0;
}
