// `enrich`: lookups by domain and a small CSV batch, on a terminal and piped, with exact output.
import { describe, it } from 'vitest';
import { ACME, type CommandCase, DIR, expectCase, lines, usageLine } from '../helpers/command-cases.js';
import { FIXED_NOW } from '../helpers/in-process.js';

const ACME_RECORD = lines(
  '┌────────────────┬────────────────┐',
  '│ field          │ value          │',
  '├────────────────┼────────────────┤',
  '│ domain         │ acme-shoes.com │',
  '│ company_name   │ Acme Shoes     │',
  '│ country        │ US             │',
  '│ site_category  │ fashion        │',
  '│ employee_range │ 51-200         │',
  '│ founded_year   │ 2009           │',
  '└────────────────┴────────────────┘',
);

/** What `-o json` prints: the value, indented by two spaces, and a newline. */
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

const NO_KEY_HINT =
  'Replace the key: set COMPANY_DATA_API_KEY, pass --api-key-file, or run `company-data config set-key`.';

// Four rows: a found domain, another, one the sandbox does not know, and the first again as a URL
// (looked up once: its credits_charged is 0, the first row carries the charge).
const BATCH_INPUT = lines(
  'name,domain',
  'Acme,acme-shoes.com',
  'Globex,globex.io',
  'Nobody,nonexistent-zzz.com',
  'Again,https://www.acme-shoes.com/about',
);

const BATCH_HEADER =
  'name,domain,found,cd_domain,company_name,country,site_category,employee_range,founded_year,credits_charged,bought_at,error_code,error_detail';
const BATCH_OUTPUT = lines(
  BATCH_HEADER,
  'Acme,acme-shoes.com,true,acme-shoes.com,Acme Shoes,US,fashion,51-200,2009,1,,,',
  'Globex,globex.io,true,globex.io,Globex Corporation,US,b2b_software,1001-5000,1989,1,,,',
  'Nobody,nonexistent-zzz.com,false,,,,,,,0,,,',
  'Again,https://www.acme-shoes.com/about,true,acme-shoes.com,Acme Shoes,US,fashion,51-200,2009,0,,,',
);

/**
 * A store the case names, so that the commands it runs first (at FIXED_NOW) and the command under
 * test (two days later) share it.
 */
const SHARED_STORE = { COMPANY_DATA_STORE: `${DIR}/store.db` };
const TWO_DAYS_LATER = () => FIXED_NOW + 2 * 86_400_000;

/** A case run two days after `before` (by default a lookup of acme-shoes.com) on the same store. */
function twoDaysAfter(before: string[][] = [['enrich', 'acme-shoes.com']]) {
  return { env: SHARED_STORE, before, now: TWO_DAYS_LATER };
}
/** FIXED_NOW as bought_at shows it. */
const BOUGHT_AT = '2026-11-24T12:00:00Z';
const FROM_STORE = 'acme-shoes.com: from the store, bought 2 days ago; --refresh buys it again';

/** What --journal and --fresh, gone with the journal, now say (exit 2). */
const gone = (flag: string) =>
  `${flag} is gone: every answer now goes to the result store, and re-running the same command continues where it stopped`;
const GONE_HINT = 'Use --store <path> to keep the store elsewhere, and --refresh to buy answers again.';

// The batch summary is stamped and timed with the injected clock, which stands still: piped, it
// starts with that instant, and the run took 0.0s.
const BATCH_SUMMARY = lines(
  '2026-11-24T12:00:00Z Enriched: 4 rows, 3 unique domains (2 found, 1 not found), 0 errors, 2 credits charged, balance 999,998, 0.0s',
);

/** `enrich --help`, whole: the reuse options and the batch's columns, bought_at included. */
const ENRICH_HELP = lines(
  'Usage: company-data enrich [options] [domains...]',
  '',
  'Enrich companies by domain: a few lookups, or a CSV batch with --input',
  '',
  'Arguments:',
  '  domains                    domains or URLs to look up (https://www.Example.com/x -> example.com)',
  '',
  'Options:',
  '  --products <ids>           comma-separated data products (default: the default products; see',
  '                             `products`)',
  '  --include <fields>         comma-separated fields to return (default: all fields of the products)',
  '  --max-credits <n>          spending cap sent with every lookup',
  '  --input <file>             batch: CSV file (header row), .xlsx workbook or plain list of domains;',
  '                             - for stdin',
  '  --output <file>            batch: where to write (default stdout); .csv .tsv .xlsx .json .ndjson',
  '                             set the format; appears only when complete',
  "  --sheet <name|n>           batch: a workbook input's sheet, by name or position (default: the",
  '                             first)',
  '  --column <name>            batch: the domain column (default: domain, website, url,',
  '                             company_domain, homepage)',
  '  --delimiter <char>         batch: field delimiter, e.g. ; or tab (default: sniffed)',
  '  --encoding <enc>           batch: text encoding (default: sniffed) (choices: "utf8", "utf16le",',
  '                             "windows-1252", "iso-8859-15", "latin1")',
  '  --bom                      batch: start CSV output with a UTF-8 BOM (for spreadsheets)',
  '  --budget <n>               batch: never charge more than n credits in this run',
  '  --concurrency <n>          batch: lookups in flight (default 8, max 64)',
  '  --rate <n>                 batch: at most n lookups per second, retries included (default: 90% of',
  '                             the rate limit `me` reports; 0: no pacing)',
  '  --refresh                  buy again, whatever the result store holds',
  '  --max-age <age>            reuse stored answers younger than this (default 30d; 12h, 2w, 0)',
  '  --not-found-max-age <age>  reuse stored "no record" answers younger than this (default 7d)',
  "  --budget-month <n>         never let this key's spend in the calendar month (UTC) pass n credits,",
  '                             across runs and commands (env: COMPANY_DATA_BUDGET_MONTH)',
  '  --dry-run                  batch: count rows, domains and worst-case credits; send no lookup',
  '  --head <n>                 batch: only the first n data rows (a trial run; says what it may cost',
  '                             first)',
  '  --merge <mode>             batch: write results into matching input columns: fill-empty (only',
  '                             empty cells) or overwrite (default append: new columns) (choices:',
  '                             "append", "fill-empty", "overwrite")',
  '  --map <field=Column>       batch: with --merge, the input column a field goes into (repeatable;',
  '                             default: the column of the same name)',
  '  --report <file>            batch: one line per input row: outcome, credits, attempts, time',
  '                             (.jsonl, or .csv)',
  "  --summary-json <file>      batch: the run's figures as JSON, to a file or - (one line on stderr)",
  '  --progress                 batch: print a progress line every 2 s (for logs)',
  '  -h, --help                 display help for command',
  '',
  "Batch output (format from --output's extension, else -o/--format: csv by default, json or ndjson):",
  'every input row once, in input order, input columns as read (in CSV a cell a spreadsheet would run',
  "as a formula gets a ' first, unless --csv-raw), then found, the result fields (with --merge, into",
  'the matching input columns), credits_charged, bought_at, error_code, error_detail. Duplicated',
  'domains are looked up once; credits_charged is what this run paid, on the first row naming the',
  'domain. Every answer goes to the result store as it arrives (see --store): re-running the same',
  'command after a crash, kill, Ctrl-C or exit 4/5 continues where it stopped, and later runs reuse',
  'answers younger than --max-age (found) or --not-found-max-age (no record) at no cost, with bought_at',
  'telling when they were bought. Failures are never stored. See docs/batch.md.',
  '',
  'Examples:',
  '  $ company-data --sandbox enrich acme-shoes.com',
  '  $ company-data --sandbox enrich https://www.Acme-Shoes.com/about globex.io --products profile,tech',
  '  $ company-data --sandbox enrich --input examples/companies.csv --output enriched.csv',
  '  $ company-data --sandbox enrich --input examples/companies.csv --dry-run',
  '  $ company-data --sandbox enrich --input examples/companies.xlsx --output enriched.xlsx --head 5',
  '  $ company-data enrich --input crm.csv --output crm.csv.out.csv --merge fill-empty --report \\',
  '        rows.jsonl',
  '  $ company-data enrich --input big.csv --output out.csv --budget 5000 --concurrency 16 --progress',
  '  $ company-data enrich --input big.csv --output out.csv --rate 45',
  '',
  'Exit codes: 0 ok (also found: false), 2 bad input, 3 key, 4 credits, --budget or --budget-month',
  'reached, 5 service unavailable, 6 batch finished with row errors, 7 another process is running the',
  'same batch, 8 output, stdout or the store could not be written (a closed pipe, a full disk; prints',
  'how to resume), 130 interrupted (prints how to resume).',
);

const cases: CommandCase[] = [
  {
    name: 'one domain on a terminal: a record, the credits on stderr',
    argv: ['enrich', 'acme-shoes.com'],
    tty: true,
    wantCode: 0,
    wantStdout: ACME_RECORD,
    wantStderr: lines('Credits: charged 1, balance 999,999'),
  },
  {
    name: 'one domain piped: { results, credits } as JSON, nothing on stderr',
    argv: ['enrich', 'acme-shoes.com'],
    tty: false,
    wantCode: 0,
    wantStdout: json({
      results: [{ ...ACME, credits_charged: 1, bought_at: null }],
      credits: { charged: 1, remaining: 999_999 },
    }),
    wantStderr: '',
  },
  {
    name: 'one domain on a colour terminal: bold cyan headers',
    argv: ['enrich', 'https://www.Acme-Shoes.com/about'],
    tty: true,
    env: { NO_COLOR: undefined },
    wantCode: 0,
    wantStdout: lines(
      '┌────────────────┬────────────────┐',
      '│ \x1b[1;36mfield\x1b[0m          │ \x1b[1;36mvalue\x1b[0m          │',
      '├────────────────┼────────────────┤',
      '│ domain         │ acme-shoes.com │',
      '│ company_name   │ Acme Shoes     │',
      '│ country        │ US             │',
      '│ site_category  │ fashion        │',
      '│ employee_range │ 51-200         │',
      '│ founded_year   │ 2009           │',
      '└────────────────┴────────────────┘',
    ),
    wantStderr: lines('Credits: charged 1, balance 999,999'),
  },
  {
    name: 'two domains on a terminal: one table fitted to 100 columns',
    argv: ['enrich', 'acme-shoes.com', 'globex.io'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌────────────────┬───────┬────────────────────┬─────────┬───────────────┬────────────────┬─────────┐',
      '│ domain         │ found │ company name       │ country │ site category │ employee range │ founded │',
      '│                │       │                    │         │               │                │ year    │',
      '├────────────────┼───────┼────────────────────┼─────────┼───────────────┼────────────────┼─────────┤',
      '│ acme-shoes.com │ yes   │ Acme Shoes         │ US      │ fashion       │ 51-200         │ 2009    │',
      '│ globex.io      │ yes   │ Globex Corporation │ US      │ b2b_software  │ 1001-5000      │ 1989    │',
      '└────────────────┴───────┴────────────────────┴─────────┴───────────────┴────────────────┴─────────┘',
    ),
    wantStderr: lines('Credits: charged 2, balance 999,998'),
  },
  {
    name: 'two domains piped: the same shape, a result each',
    argv: ['enrich', 'acme-shoes.com', 'globex.io'],
    tty: false,
    wantCode: 0,
    wantStdout: json({
      results: [
        { ...ACME, credits_charged: 1, bought_at: null },
        {
          domain: 'globex.io',
          found: true,
          company_name: 'Globex Corporation',
          country: 'US',
          site_category: 'b2b_software',
          employee_range: '1001-5000',
          founded_year: 1989,
          credits_charged: 1,
          bought_at: null,
        },
      ],
      credits: { charged: 2, remaining: 999_998 },
    }),
    wantStderr: '',
  },
  {
    name: 'a domain without a record on a terminal: said on stderr, nothing on stdout, exit 0',
    argv: ['enrich', 'nonexistent-zzz.com'],
    tty: true,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(
      'no record for nonexistent-zzz.com; nothing charged',
      'Credits: charged 0, balance 1,000,000',
    ),
  },
  {
    name: '-o ndjson: one line per domain, each with its credits_charged',
    argv: ['-o', 'ndjson', 'enrich', 'acme-shoes.com', 'nonexistent-zzz.com'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      JSON.stringify({ ...ACME, credits_charged: 1, bought_at: null }),
      JSON.stringify({ domain: 'nonexistent-zzz.com', found: false, credits_charged: 0, bought_at: null }),
    ),
    wantStderr: lines('no record for nonexistent-zzz.com; nothing charged'),
  },
  {
    name: '-o csv: the same rows, credits_charged and bought_at last',
    argv: ['-o', 'csv', 'enrich', 'acme-shoes.com', 'nonexistent-zzz.com'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      'domain,found,company_name,country,site_category,employee_range,founded_year,credits_charged,bought_at',
      'acme-shoes.com,true,Acme Shoes,US,fashion,51-200,2009,1,',
      'nonexistent-zzz.com,false,,,,,,0,',
    ),
    wantStderr: lines('no record for nonexistent-zzz.com; nothing charged'),
  },
  {
    name: 'a domain without a record piped: found false on stdout, nothing charged',
    argv: ['enrich', 'nonexistent-zzz.com'],
    tty: false,
    wantCode: 0,
    wantStdout: json({
      results: [{ domain: 'nonexistent-zzz.com', found: false, credits_charged: 0, bought_at: null }],
      credits: { charged: 0, remaining: 1_000_000 },
    }),
    wantStderr: lines('no record for nonexistent-zzz.com; nothing charged'),
  },
  {
    name: 'products and include on a terminal: only the included fields, both products charged',
    argv: ['enrich', 'acme-shoes.com', '--products', 'profile,tech', '--include', 'domain,tech_count'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌────────────┬────────────────┐',
      '│ field      │ value          │',
      '├────────────┼────────────────┤',
      '│ domain     │ acme-shoes.com │',
      '│ tech_count │ 8              │',
      '└────────────┴────────────────┘',
    ),
    wantStderr: lines('Credits: charged 2, balance 999,998'),
  },
  {
    name: 'a batch with --output on a terminal: the file, and the summary on stderr',
    argv: ['enrich', '--input', `${DIR}/in.csv`, '--output', `${DIR}/out.csv`],
    tty: true,
    files: { 'in.csv': BATCH_INPUT },
    wantCode: 0,
    wantStdout: '',
    // On a terminal the summary carries no time.
    wantStderr: BATCH_SUMMARY.replace('2026-11-24T12:00:00Z ', ''),
    // The answers are in the result store: nothing is kept beside the output.
    wantFiles: { 'out.csv': BATCH_OUTPUT, 'out.csv.journal': null, 'out.csv.lock': null },
  },
  {
    name: 'a batch with --output piped: the same file',
    argv: ['enrich', '--input', `${DIR}/in.csv`, '--output', `${DIR}/out.csv`],
    tty: false,
    files: { 'in.csv': BATCH_INPUT },
    wantCode: 0,
    wantStdout: '',
    wantStderr: BATCH_SUMMARY,
    wantFiles: { 'out.csv': BATCH_OUTPUT, 'out.csv.journal': null, 'out.csv.lock': null },
  },
  {
    name: 'a batch of domains from stdin piped: CSV on stdout, not JSON',
    argv: ['enrich', '--input', '-'],
    tty: false,
    stdin: lines('acme-shoes.com', 'nonexistent-zzz.com'),
    wantCode: 0,
    wantStdout: lines(
      'domain,found,cd_domain,company_name,country,site_category,employee_range,founded_year,credits_charged,bought_at,error_code,error_detail',
      'acme-shoes.com,true,acme-shoes.com,Acme Shoes,US,fashion,51-200,2009,1,,,',
      'nonexistent-zzz.com,false,,,,,,,0,,,',
    ),
    // Its answers go to the store like any other run's: no warning about resuming.
    wantStderr: lines(
      '2026-11-24T12:00:00Z Enriched: 2 rows, 2 unique domains (1 found, 1 not found), 0 errors, 1 credit charged, balance 999,999, 0.0s',
    ),
  },
  {
    name: 'a domain looked up again on the same store, on a terminal: the stored record, said on stderr, nothing charged',
    argv: ['enrich', 'acme-shoes.com'],
    tty: true,
    ...twoDaysAfter(),
    wantCode: 0,
    wantStdout: ACME_RECORD,
    // No request: the balance is not known.
    wantStderr: lines(FROM_STORE, 'Credits: charged 0'),
  },
  {
    name: 'a domain looked up again on the same store, piped: bought_at is when it was bought',
    argv: ['enrich', 'acme-shoes.com'],
    tty: false,
    ...twoDaysAfter(),
    wantCode: 0,
    wantStdout: json({
      results: [{ ...ACME, credits_charged: 0, bought_at: BOUGHT_AT }],
      credits: { charged: 0, remaining: null },
    }),
    wantStderr: lines(FROM_STORE),
  },
  {
    name: 'one domain stored and one new, -o csv: bought_at only on the stored one, the new one charged',
    argv: ['-o', 'csv', 'enrich', 'acme-shoes.com', 'globex.io'],
    tty: false,
    ...twoDaysAfter(),
    wantCode: 0,
    wantStdout: lines(
      'domain,found,company_name,country,site_category,employee_range,founded_year,credits_charged,bought_at',
      `acme-shoes.com,true,Acme Shoes,US,fashion,51-200,2009,0,${BOUGHT_AT}`,
      'globex.io,true,Globex Corporation,US,b2b_software,1001-5000,1989,1,',
    ),
    wantStderr: lines(FROM_STORE),
  },
  {
    name: 'a "no record" answer looked up again within its age: from the store, said twice on stderr',
    argv: ['enrich', 'nonexistent-zzz.com'],
    tty: true,
    ...twoDaysAfter([['enrich', 'nonexistent-zzz.com']]),
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(
      'nonexistent-zzz.com: from the store, bought 2 days ago; --refresh buys it again',
      'no record for nonexistent-zzz.com; nothing charged',
      'Credits: charged 0',
    ),
  },
  {
    name: '--refresh: bought again though the store holds it',
    argv: ['enrich', 'acme-shoes.com', '--refresh'],
    tty: true,
    ...twoDaysAfter(),
    wantCode: 0,
    wantStdout: ACME_RECORD,
    wantStderr: lines('Credits: charged 1, balance 999,998'),
  },
  {
    name: "--max-age shorter than the answer's age: bought again",
    argv: ['-o', 'ndjson', 'enrich', 'acme-shoes.com', '--max-age', '1d'],
    tty: false,
    ...twoDaysAfter(),
    wantCode: 0,
    wantStdout: lines(JSON.stringify({ ...ACME, credits_charged: 1, bought_at: null })),
    wantStderr: '',
  },
  {
    name: 'an invalid --max-age: a usage error naming the accepted ages, exit 2',
    argv: ['enrich', 'acme-shoes.com', '--max-age', '3 days'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      `error: option '--max-age <age>' argument '3 days' is invalid. --max-age takes an age such as 30d, 12h, 90m or 2w (0: never reuse), got "3 days"`,
      '(add --help for usage)',
    ),
  },
  {
    name: '--no-store after a lookup on the store: bought again, nothing said about the store',
    argv: ['--no-store', 'enrich', 'acme-shoes.com'],
    tty: true,
    ...twoDaysAfter(),
    wantCode: 0,
    wantStdout: ACME_RECORD,
    wantStderr: lines('Credits: charged 1, balance 999,998'),
  },
  {
    name: '--no-store: no store file is made',
    argv: ['--no-store', '-o', 'ndjson', 'enrich', 'acme-shoes.com'],
    tty: false,
    env: SHARED_STORE,
    wantCode: 0,
    wantStdout: lines(JSON.stringify({ ...ACME, credits_charged: 1, bought_at: null })),
    wantStderr: '',
    wantFiles: { 'store.db': null },
  },
  {
    name: '--store <path> names the store: a second lookup on it reuses the answer',
    argv: ['--store', `${DIR}/flag.db`, '-o', 'ndjson', 'enrich', 'acme-shoes.com'],
    tty: false,
    before: [['--store', `${DIR}/flag.db`, 'enrich', 'acme-shoes.com']],
    now: TWO_DAYS_LATER,
    wantCode: 0,
    wantStdout: lines(JSON.stringify({ ...ACME, credits_charged: 0, bought_at: BOUGHT_AT })),
    wantStderr: lines(FROM_STORE),
  },
  {
    name: '--budget-month with --no-store: exit 2, nothing to count the month on',
    argv: ['--no-store', 'enrich', 'acme-shoes.com', '--budget-month', '100'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  --budget-month counts the spend recorded in the store, and --no-store keeps none',
      '  Leave out --no-store, or leave out --budget-month.',
    ),
  },
  {
    name: '--budget-month with --no-store in a batch: exit 2, and --budget is the cap to use',
    argv: ['--no-store', 'enrich', '--input', `${DIR}/in.csv`, '--budget-month', '100'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  --budget-month counts the spend recorded in the store, and --no-store keeps none',
      '  Leave out --no-store, or cap this run alone with --budget.',
    ),
  },
  {
    name: '--journal, which is gone: exit 2 naming the store and --refresh',
    argv: ['enrich', '--input', `${DIR}/in.csv`, '--journal', `${DIR}/in.journal`],
    tty: true,
    files: { 'in.csv': BATCH_INPUT },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines('error: Usage error (usage_error)', `  ${gone('--journal')}`, `  ${GONE_HINT}`),
  },
  {
    name: '--fresh, which is gone, piped: one JSON problem line, exit 2',
    argv: ['enrich', 'acme-shoes.com', '--fresh'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine(gone('--fresh'), GONE_HINT),
  },
  {
    name: 'a batch run again on the same store: answers reused with their bought_at, the summary counting them',
    argv: ['enrich', '--input', `${DIR}/in.csv`, '--output', `${DIR}/out.csv`],
    tty: false,
    files: { 'in.csv': BATCH_INPUT },
    ...twoDaysAfter([['enrich', '--input', `${DIR}/in.csv`, '--output', `${DIR}/first.csv`]]),
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(
      '2026-11-26T12:00:00Z Enriched: 4 rows, 3 unique domains (2 found, 1 not found), 0 errors, 0 credits charged, 3 reused from the store, 0.0s',
    ),
    wantFiles: {
      'out.csv': lines(
        BATCH_HEADER,
        `Acme,acme-shoes.com,true,acme-shoes.com,Acme Shoes,US,fashion,51-200,2009,0,${BOUGHT_AT},,`,
        `Globex,globex.io,true,globex.io,Globex Corporation,US,b2b_software,1001-5000,1989,0,${BOUGHT_AT},,`,
        `Nobody,nonexistent-zzz.com,false,,,,,,,0,${BOUGHT_AT},,`,
        `Again,https://www.acme-shoes.com/about,true,acme-shoes.com,Acme Shoes,US,fashion,51-200,2009,0,${BOUGHT_AT},,`,
      ),
    },
  },
  {
    name: 'enrich --help: the store options, and the batch columns with bought_at after credits_charged',
    argv: ['enrich', '--help'],
    tty: false,
    wantCode: 0,
    wantStdout: ENRICH_HELP,
    wantStderr: '',
  },
  {
    name: 'no key on a terminal: exit 3 with the remedy',
    argv: ['enrich', 'acme-shoes.com'],
    tty: true,
    env: { COMPANY_DATA_API_KEY: undefined },
    wantCode: 3,
    wantStdout: '',
    wantStderr: lines(
      'error: No API key (invalid_api_key, HTTP 401)',
      '  No API key configured.',
      `  ${NO_KEY_HINT}`,
    ),
  },
  {
    name: 'no key piped: exit 3 with one JSON problem line',
    argv: ['enrich', 'acme-shoes.com'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: undefined },
    wantCode: 3,
    wantStdout: '',
    wantStderr: lines(
      `{"code":"invalid_api_key","status":401,"title":"No API key","detail":"No API key configured.","retryable":false,"hint":"${NO_KEY_HINT}"}`,
    ),
  },
  {
    name: 'a refused key on a colour terminal: the head red, the hint dim',
    argv: ['enrich', 'acme-shoes.com'],
    tty: true,
    env: { NO_COLOR: undefined, COMPANY_DATA_API_KEY: 'cd_not_a_real_key_123' },
    wantCode: 3,
    wantStdout: '',
    wantStderr: lines(
      '\x1b[31merror: Invalid API key (invalid_api_key, HTTP 401)\x1b[0m',
      '  The API key is missing or invalid.',
      `  \x1b[2m${NO_KEY_HINT}\x1b[0m`,
    ),
  },
  {
    name: 'an argument that is not a domain: exit 2 before anything is sent',
    argv: ['enrich', 'acme-shoes.com', 'not a domain'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Not a domain (invalid_domain)',
      '  "not a domain": contains spaces',
      '  Give a domain such as example.com or a URL such as https://www.example.com/.',
    ),
  },
  {
    name: 'an unknown product: exit 2 with a suggestion from the catalog',
    argv: ['enrich', 'acme-shoes.com', '--products', 'profle'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"invalid_product","status":400,"title":"Invalid product","detail":"unknown product `profle` (did you mean `profile`?); products: profile, tech, leads","retryable":false,"hint":"Check product ids with `company-data products`."}',
    ),
  },
  {
    name: 'an invalid --max-credits: a usage error from the flag parser, exit 2',
    argv: ['enrich', '--max-credits', 'x', 'acme-shoes.com'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      `error: option '--max-credits <n>' argument 'x' is invalid. --max-credits must be a whole number between 0 and ${Number.MAX_SAFE_INTEGER}, got "x"`,
      '(add --help for usage)',
    ),
  },
  {
    name: 'a --rate that is not a number of lookups per second: exit 2 naming what it takes',
    argv: ['enrich', '--input', `${DIR}/in.csv`, '--rate', '45/s'],
    tty: true,
    files: { 'in.csv': BATCH_INPUT },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      `error: option '--rate <n>' argument '45/s' is invalid. --rate must be a number of requests per second between 0 and 1000 (decimals allowed: 0.5 is one every 2 s; 0 turns pacing off), got "45/s"`,
      '(add --help for usage)',
    ),
  },
  {
    name: '--rate without --input: exit 2, piped',
    argv: ['enrich', '--rate', '5', 'acme-shoes.com'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"usage_error","status":0,"title":"Usage error","detail":"--rate applies to batches: add --input <file>","retryable":false,"hint":""}',
    ),
  },
  {
    name: 'no domain and no --input: exit 2',
    argv: ['enrich'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"usage_error","status":0,"title":"Usage error","detail":"nothing to enrich: give one or more domains, or --input <file.csv>","retryable":false,"hint":"See `company-data enrich --help`."}',
    ),
  },
  {
    name: 'a batch flag without --input: exit 2',
    argv: ['enrich', '--output', `${DIR}/out.csv`, 'acme-shoes.com'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  --output applies to batches: add --input <file>',
    ),
    wantFiles: { 'out.csv': null },
  },
  {
    name: 'domains and --input together: exit 2',
    argv: ['enrich', '--input', `${DIR}/in.csv`, 'acme-shoes.com'],
    tty: true,
    files: { 'in.csv': BATCH_INPUT },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  give domains as arguments or a file with --input, not both',
    ),
  },
  {
    name: 'an input file that does not exist: exit 2 naming it',
    argv: ['enrich', '--input', `${DIR}/nope.csv`],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines('error: Cannot read the input (invalid_input)', `  no such file: ${DIR}/nope.csv`),
  },
];

describe('enrich', () => {
  it.each(cases)('$name', expectCase);
});
