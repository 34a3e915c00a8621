// `company-data enrich`: a few lookups by domain, or a CSV batch with --input.
import { type Command, Option } from 'commander';
import { MERGE_MODES, type MergeMode, parseMapOption } from '../batch/merge.js';
import { BUDGET_MONTH_OPTION, type CommandKit, parseIntOption } from '../command-kit.js';
import { addCsvOptions, type CsvFlags } from '../csv/options.js';
import { usageError } from '../problem.js';
import { parseRateOption, rateFor } from '../rate-option.js';
import { parseAge } from '../store/location.js';
import type { Context } from '../types.js';

export interface EnrichOptions extends CsvFlags {
  input?: string;
  output?: string;
  column?: string;
  bom?: boolean;
  products?: string;
  include?: string;
  maxCredits?: number;
  budget?: number;
  concurrency?: number;
  refresh?: boolean;
  maxAge?: number;
  notFoundMaxAge?: number;
  budgetMonth?: number;
  rate?: number;
  fresh?: boolean;
  journal?: string;
  dryRun?: boolean;
  progress?: boolean;
  sheet?: string;
  head?: number;
  merge?: MergeMode;
  map?: Record<string, string>;
  report?: string;
  summaryJson?: string;
}

export const DEFAULT_CONCURRENCY = 8;
export const MAX_CONCURRENCY = 64;

const BATCH_ONLY: Array<[keyof EnrichOptions, string]> = [
  ['output', '--output'],
  ['column', '--column'],
  ['delimiter', '--delimiter'],
  ['encoding', '--encoding'],
  ['bom', '--bom'],
  ['budget', '--budget'],
  ['concurrency', '--concurrency'],
  ['rate', '--rate'],
  ['dryRun', '--dry-run'],
  ['progress', '--progress'],
  ['sheet', '--sheet'],
  ['head', '--head'],
  ['merge', '--merge'],
  ['map', '--map'],
  ['report', '--report'],
  ['summaryJson', '--summary-json'],
];

export function register(program: Command, kit: CommandKit): void {
  const command = program
    .command('enrich')
    .description('Enrich companies by domain: a few lookups, or a CSV batch with --input')
    .argument('[domains...]', 'domains or URLs to look up (https://www.Example.com/x -> example.com)')
    .option(
      '--products <ids>',
      'comma-separated data products (default: the default products; see `products`)',
    )
    .option('--include <fields>', 'comma-separated fields to return (default: all fields of the products)')
    .option('--max-credits <n>', 'spending cap sent with every lookup', parseIntOption('--max-credits'))
    .option(
      '--input <file>',
      'batch: CSV file (header row), .xlsx workbook or plain list of domains; - for stdin',
    )
    .option(
      '--output <file>',
      'batch: where to write (default stdout); .csv .tsv .xlsx .json .ndjson set the format; appears only when complete',
    )
    .option('--sheet <name|n>', "batch: a workbook input's sheet, by name or position (default: the first)")
    .option(
      '--column <name>',
      'batch: the domain column (default: domain, website, url, company_domain, homepage)',
    );
  addCsvOptions(command, 'batch')
    .option('--bom', 'batch: start CSV output with a UTF-8 BOM (for spreadsheets)')
    .option('--budget <n>', 'batch: never charge more than n credits in this run', parseIntOption('--budget'))
    .option(
      '--concurrency <n>',
      `batch: lookups in flight (default ${DEFAULT_CONCURRENCY}, max ${MAX_CONCURRENCY})`,
      parseIntOption('--concurrency', 1, MAX_CONCURRENCY),
    )
    .option(
      '--rate <n>',
      'batch: at most n lookups per second, retries included (default: 90% of the rate limit `me` reports; 0: no pacing)',
      parseRateOption,
    )
    .option('--refresh', 'buy again, whatever the result store holds')
    .option(
      '--max-age <age>',
      'reuse stored answers younger than this (default 30d; 12h, 2w, 0)',
      parseAge('--max-age'),
    )
    .option(
      '--not-found-max-age <age>',
      'reuse stored "no record" answers younger than this (default 7d)',
      parseAge('--not-found-max-age'),
    )
    .option(...BUDGET_MONTH_OPTION)
    .addOption(new Option('--journal <path>').hideHelp())
    .addOption(new Option('--fresh').hideHelp())
    .option('--dry-run', 'batch: count rows, domains and worst-case credits; send no lookup')
    .option(
      '--head <n>',
      'batch: only the first n data rows (a trial run; says what it may cost first)',
      parseIntOption('--head', 1),
    )
    .addOption(
      new Option(
        '--merge <mode>',
        'batch: write results into matching input columns: fill-empty (only empty cells) or overwrite (default append: new columns)',
      ).choices(MERGE_MODES),
    )
    .option(
      '--map <field=Column>',
      'batch: with --merge, the input column a field goes into (repeatable; default: the column of the same name)',
      parseMapOption,
    )
    .option(
      '--report <file>',
      'batch: one line per input row: outcome, credits, attempts, time (.jsonl, or .csv)',
    )
    .option('--summary-json <file>', "batch: the run's figures as JSON, to a file or - (one line on stderr)")
    .option('--progress', 'batch: print a progress line every 2 s (for logs)')
    .addHelpText(
      'after',
      `
Batch output (format from --output's extension, else -o/--format: csv by default, json or
ndjson): every input row once, in input order, input columns as read (in CSV a cell a spreadsheet
would run as a formula gets a ' first, unless --csv-raw), then found, the result fields (with
--merge, into the matching input columns), credits_charged, bought_at, error_code, error_detail.
Duplicated domains are looked up once; credits_charged is what this run paid, on the first row
naming the domain. Every answer goes to the result store as it arrives (see --store): re-running
the same command after a crash, kill, Ctrl-C or exit 4/5 continues where it stopped, and later
runs reuse answers younger than --max-age (found) or --not-found-max-age (no record) at no cost,
with bought_at telling when they were bought.
Failures are never stored. See docs/batch.md.

Examples:
  $ company-data --sandbox enrich acme-shoes.com
  $ company-data --sandbox enrich https://www.Acme-Shoes.com/about globex.io --products profile,tech
  $ company-data --sandbox enrich --input examples/companies.csv --output enriched.csv
  $ company-data --sandbox enrich --input examples/companies.csv --dry-run
  $ company-data --sandbox enrich --input examples/companies.xlsx --output enriched.xlsx --head 5
  $ company-data enrich --input crm.csv --output crm.csv.out.csv --merge fill-empty --report rows.jsonl
  $ company-data enrich --input big.csv --output out.csv --budget 5000 --concurrency 16 --progress
  $ company-data enrich --input big.csv --output out.csv --rate 45

Exit codes: 0 ok (also found: false), 2 bad input, 3 key, 4 credits, --budget or --budget-month
reached, 5 service unavailable, 6 batch finished with row errors, 7 another process is running
the same batch, 8 output, stdout or the store could not be written (a closed pipe, a full disk;
prints how to resume), 130 interrupted (prints how to resume).`,
    )
    .action(kit.withContext(runEnrich));
}

export async function runEnrich(ctx: Context, domains: string[], options: EnrichOptions): Promise<number> {
  if (options.journal !== undefined || options.fresh !== undefined) {
    throw usageError(
      `${options.journal !== undefined ? '--journal' : '--fresh'} is gone: every answer now goes to the result store, and re-running the same command continues where it stopped`,
      'Use --store <path> to keep the store elsewhere, and --refresh to buy answers again.',
    );
  }
  const { monthCapOf } = await import('../spend/purse.js');
  const budgetMonth = monthCapOf(ctx, options.budgetMonth, options.input !== undefined);
  const reuse = {
    refresh: options.refresh,
    maxAgeMs: options.maxAge,
    notFoundMaxAgeMs: options.notFoundMaxAge,
    budgetMonth,
  };
  const { splitList } = await import('../spend/selection.js');
  const products = splitList(options.products);
  const include = splitList(options.include);
  if (options.input !== undefined) {
    if (domains.length > 0) {
      throw usageError('give domains as arguments or a file with --input, not both');
    }
    const { runBatch } = await import('../batch/run.js');
    return runBatch(ctx, {
      input: options.input,
      output: options.output,
      column: options.column,
      delimiter: options.delimiter,
      encoding: options.encoding,
      bom: options.bom,
      products,
      include,
      maxCredits: options.maxCredits,
      budget: options.budget,
      concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
      ...reuse,
      rate: rateFor(ctx, options.rate),
      dryRun: options.dryRun,
      progress: options.progress,
      sheet: options.sheet,
      head: options.head,
      merge:
        options.merge !== undefined || options.map !== undefined
          ? { mode: options.merge ?? 'append', map: options.map ?? {} }
          : undefined,
      report: options.report,
      summaryJson: options.summaryJson,
      argv: [...ctx.argv],
    });
  }
  if (domains.length === 0) {
    throw usageError(
      'nothing to enrich: give one or more domains, or --input <file.csv>',
      'See `company-data enrich --help`.',
    );
  }
  for (const [key, flag] of BATCH_ONLY) {
    if (options[key] !== undefined) throw usageError(`${flag} applies to batches: add --input <file>`);
  }
  const { runLookups } = await import('./enrich-lookups.js');
  return runLookups(ctx, domains, { products, include, maxCredits: options.maxCredits, ...reuse });
}
