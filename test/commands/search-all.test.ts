// `search --all` / `--max-rows` / `--budget`: whole stdout and stderr, on a pretend terminal and
// piped. The small cases spell every byte out; the paging cases (2,000 companies, two pages) spell
// out stderr and check stdout row by row against one search of the same segment.
import { mkdtempSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type CommandCase,
  caseEnvironment,
  DIR,
  expectCase,
  lines,
  SANDBOX_URL,
  usageLine,
} from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { call, type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

const NL_SHOES = ['search', 'shoes', '--filter', 'country=NL'];

const cases: CommandCase[] = [
  {
    name: 'on a terminal: every row as one table, the summary and credits on stderr',
    argv: [...NL_SHOES, '--all', '--include', 'domain,country'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌───────────────────────┬─────────┐',
      '│ domain                │ country │',
      '├───────────────────────┼─────────┤',
      '│ sacor-sneakers.com    │ NL      │',
      '│ saranor.nl            │ NL      │',
      '│ xanjunta-clothing.com │ NL      │',
      '└───────────────────────┴─────────┘',
    ),
    wantStderr: lines('Fetched all 3 companies (1 page).', 'Credits: charged 1, balance 999,999'),
  },
  {
    name: 'piped -o csv: the header once, then the rows; the summary only on stderr',
    argv: [...NL_SHOES, '--all', '-o', 'csv'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      'domain,company_name,country,site_category',
      'sacor-sneakers.com,Sacor Sneakers,NL,fashion',
      'saranor.nl,Saranor,NL,fashion',
      'xanjunta-clothing.com,Xanjunta Clothing,NL,fashion',
    ),
    wantStderr: lines('Fetched all 3 companies (1 page).'),
  },
  {
    name: 'piped -o json: one document, { total, rows, ... } and the run',
    argv: [...NL_SHOES, '--all', '--include', 'domain'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{',
      '  "query": "shoes",',
      '  "query_operator": "and",',
      '  "total": 3,',
      '  "rows": [',
      '    {',
      '      "domain": "sacor-sneakers.com"',
      '    },',
      '    {',
      '      "domain": "saranor.nl"',
      '    },',
      '    {',
      '      "domain": "xanjunta-clothing.com"',
      '    }',
      '  ],',
      '  "fetched": 3,',
      '  "complete": true,',
      '  "stopped": "complete",',
      '  "not_fetched": 0,',
      '  "pages": 1,',
      '  "credits": {',
      '    "charged": 1',
      '  }',
      '}',
    ),
    wantStderr: lines('Fetched all 3 companies (1 page).'),
  },
  {
    name: '--max-rows alone pages too, and stops at n rows (piped ndjson)',
    argv: [...NL_SHOES, '--max-rows', '2', '-o', 'ndjson', '--include', 'domain'],
    tty: false,
    wantCode: 0,
    wantStdout: lines('{"domain":"sacor-sneakers.com"}', '{"domain":"saranor.nl"}'),
    wantStderr: lines('Stopped at --max-rows 2: 2 of 3 companies (1 page).'),
  },
  {
    name: '--max-rows on a terminal',
    argv: [...NL_SHOES, '--max-rows', '1', '--include', 'domain'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌────────────────────┐',
      '│ domain             │',
      '├────────────────────┤',
      '│ sacor-sneakers.com │',
      '└────────────────────┘',
    ),
    wantStderr: lines(
      'Stopped at --max-rows 1: 1 of 3 companies (1 page).',
      'Credits: charged 1, balance 999,999',
    ),
  },
  {
    name: 'the user’s exclusions are left out of every page',
    argv: [
      ...NL_SHOES,
      '--all',
      '--exclude-domain',
      'sacor-sneakers.com',
      '-o',
      'csv',
      '--include',
      'domain',
    ],
    tty: false,
    wantCode: 0,
    wantStdout: lines('domain', 'saranor.nl', 'xanjunta-clothing.com'),
    wantStderr: lines('Excluding 1 domain.', 'Fetched all 2 companies (1 page).'),
  },
  {
    name: 'nothing matches: the document with no rows, exit 0',
    argv: ['search', 'zzzqqq', '--all', '-o', 'json'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{',
      '  "query": "zzzqqq",',
      '  "query_operator": "and",',
      '  "total": 0,',
      '  "rows": [],',
      '  "fetched": 0,',
      '  "complete": true,',
      '  "stopped": "complete",',
      '  "not_fetched": 0,',
      '  "pages": 1,',
      '  "credits": {',
      '    "charged": 0',
      '  }',
      '}',
    ),
    wantStderr: lines('No companies match.'),
  },
  {
    name: '--limit with --all: exit 2, nothing sent',
    argv: ['search', 'shoes', '--all', '--limit', '5'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine(
      '--limit sets the rows of one search; with --all or --max-rows every page has the most the service gives',
      'Drop --limit; use --max-rows <n> to stop after n rows.',
    ),
  },
  {
    name: '--budget without paging: exit 2',
    argv: ['search', 'shoes', '--budget', '5'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  --budget caps a paging run',
      '  Add --all or --max-rows <n>, or drop --budget.',
    ),
  },
  {
    name: '--max-rows 0: exit 2 from the flag parser',
    argv: ['search', 'shoes', '--max-rows', '0'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine(
      `option '--max-rows <n>' argument '0' is invalid. --max-rows must be a whole number between 1 and 9007199254740991, got "0"`,
    ),
  },
  {
    name: '--budget 0: no page is bought, exit 4',
    argv: ['search', 'shoes', '--all', '--budget', '0'],
    tty: true,
    wantCode: 4,
    wantStdout: '',
    wantStderr: lines(
      'Credits: charged 0',
      'error: Budget reached (budget_exhausted)',
      '  --budget 0 reached after 0 credits: 0 companies written (0 pages); the next page could cost 1 credit',
      '  Raise --budget to fetch more.',
    ),
  },
];

describe('search --all / --max-rows: exact output', () => {
  it.each(cases)('$name', expectCase);
});

describe('search --help', () => {
  it('names the paging flags, says how paging works, and shows them in the examples', async () => {
    const r = await runInProcess(['search', '--help']);
    expect(r).toEqual({
      code: 0,
      stderr: '',
      stdout: lines(
        'Usage: company-data search [options] [query]',
        '',
        'Search companies by a business-language description and exact filters, with exclusions',
        '',
        'Arguments:',
        '  query                          what you are looking for, e.g. "shopify shoes" (empty: every',
        '                                 company)',
        '',
        'Options:',
        '  --operator <op>                how query words combine: every word (and) or any word (or)',
        '                                 (choices: "and", "or")',
        '  --filter <name=value[,value]>  exact catalog filter; repeat for more filters (values of one name',
        '                                 are alternatives)',
        '  --filters <json>               filters as a JSON object, e.g. \'{"country":["US","GB"]}\' (merged',
        '                                 with --filter)',
        '  --exclude <file|->             CSV (domain column), list of domains, or saved search -o',
        '                                 json/ndjson output to leave out; - reads stdin; repeatable',
        '  --exclude-domain <domain>      one domain or URL to leave out; repeatable',
        '  --delimiter <char>             --exclude: field delimiter, e.g. ; or tab (default: sniffed)',
        '  --encoding <enc>               --exclude: text encoding (default: sniffed) (choices: "utf8",',
        '                                 "utf16le", "windows-1252", "iso-8859-15", "latin1")',
        '  --include <fields>             comma-separated fields per row (see `company-data fields`)',
        '  --limit <n>                    number of rows, 1-1000 (service default 25)',
        '  --all                          every matching company, in as many searches of 1,000 rows as it',
        '                                 takes',
        '  --max-rows <n>                 like --all, but stop after n rows',
        '  --budget <n>                   with --all or --max-rows: never charge more than n credits in this',
        '                                 run',
        "  --budget-month <n>             never let this key's spend in the calendar month (UTC) pass n",
        '                                 credits, across runs and commands (env: COMPANY_DATA_BUDGET_MONTH)',
        '  --rate <n>                     with --all or --max-rows: at most n searches per second (default:',
        '                                 90% of the rate limit `me` reports; 0: no pacing)',
        '  --dry-run                      print what would be sent and its worst-case credits against the',
        '                                 caps and the balance; buy nothing',
        '  -h, --help                     display help for command',
        '',
        'Filter names and values are checked against the fields catalog before anything is sent. Exclusions',
        '(at most 20,000 unique domains) are normalised like the service does; an entry that is not a domain',
        'stops the search, so no company you meant to exclude can slip through. With exclusions the search is',
        'sent as POST (they never go into a URL).',
        '',
        'Output: a table of the included fields with the total on stderr; -o json gives { total, rows, ... };',
        '-o ndjson one row per line; -o csv the rows.',
        '',
        'Paging: one search returns at most 1,000 rows. --all searches again and again, each time excluding',
        'the companies already received (POST), until none is left; --max-rows <n> is --all stopping after n',
        'rows. CSV and NDJSON rows are written as each page arrives; -o json is one document { total, rows,',
        'fetched, complete, stopped, not_fetched, pages, credits }; a table is printed at the end. The',
        'service takes at most 20,000 exclusions (yours count), so one run reaches at most 21,000 companies:',
        'the rest is counted on stderr (exit 0). --budget stops before a page that could pass it (exit 4).',
        'After a page that fails (exit 5 when unavailable, 4 for credits, ...) or Ctrl-C (130) the rows',
        'written stay, and stderr gives the command that continues: --exclude reads the file they went to.',
        "--rate spaces the pages under the service's rate limit.",
        '',
        'Examples:',
        '  $ company-data --sandbox search "shopify shoes" --filter country=US --limit 5',
        '  $ company-data --sandbox search coffee --filter country=US,GB --include domain,company_name,tech',
        '  $ company-data --sandbox search --filters \'{"site_category":["fashion"]}\' --exclude-domain \\',
        '        example.com -o csv',
        "  $ printf 'domain\\nexample.com\\n' | company-data --sandbox search fashion --exclude - --limit 10",
        '  $ company-data --sandbox search shoes --all -o csv > shoes.csv',
        '  $ company-data --sandbox search --filter country=US --max-rows 2500 --budget 3 -o ndjson',
        '  $ company-data --sandbox search shoes --all --dry-run',
      ),
    });
  });
});

// ---- two pages: the 2,000 companies of the test sandbox ------------------------------------------

/** The test sandbox with `faults` queued, the command run in-process, and the sandbox closed. */
async function runAgainst(
  argv: string[],
  options: { tty?: boolean; faults?: (sandbox: SandboxHandle) => void; env?: Record<string, string> } = {},
) {
  const sandbox = await startTestSandbox();
  // A scratch directory of its own: DIR spelt literally would be one HOME (and one result store)
  // shared by every run of every checkout on the machine.
  const dir = mkdtempSync('/tmp/cdt-');
  try {
    options.faults?.(sandbox);
    const env = Object.fromEntries(
      Object.entries(caseEnvironment({ env: options.env })).map(([k, v]) => [
        k,
        v.replace(SANDBOX_URL, sandbox.url).replace(DIR, dir),
      ]),
    );
    const before = sandbox.requests().length;
    const result = await runInProcess(argv, { tty: options.tty ?? false, env });
    const searches = sandbox
      .requests()
      .slice(before)
      .filter((r) => r.path === '/api/search');
    // Every company in the order one search ranks them (the sandbox's own view, not the CLI's).
    const all = await call(sandbox.url, '/api/search', {
      key: sandbox.keys.full,
      query: { limit: '1000', include: 'domain' },
    });
    const body = all.json as { rows: Array<{ domain: string }>; total: number };
    return { ...result, searches, firstThousand: body.rows.map((r) => r.domain), total: body.total };
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function ndjsonDomains(stdout: string): string[] {
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { domain: string }).domain);
}

const RETRY_FAST = {
  COMPANY_DATA_RETRY_BASE_MS: '1',
  COMPANY_DATA_RETRY_CAP_MS: '2',
  COMPANY_DATA_RETRY_FLOOR_MS: '1',
};

describe('search --all over two pages', () => {
  it('fetches every company once: page 1 a GET, page 2 a POST excluding the first 1,000', async () => {
    const r = await runAgainst(['search', '--all', '-o', 'ndjson', '--include', 'domain']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 0,
      stderr: lines('Fetched all 2,000 companies (2 pages).'),
    });
    const domains = ndjsonDomains(r.stdout);
    expect(domains).toHaveLength(r.total);
    expect(new Set(domains).size).toBe(r.total);
    expect(domains.slice(0, 1000)).toEqual(r.firstThousand);
    expect(r.searches.map((s) => [s.method, s.body_bytes > 0])).toEqual([
      ['GET', false],
      ['POST', true],
    ]);
  });

  it('--max-rows 1,500: the second page asks only for the 500 left', async () => {
    const r = await runAgainst(['search', '--max-rows', '1500', '-o', 'csv', '--include', 'domain']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 0,
      stderr: lines('Stopped at --max-rows 1,500: 1,500 of 2,000 companies (2 pages).'),
    });
    const rows = r.stdout.trim().split('\n');
    expect(rows[0]).toBe('domain');
    expect(rows.slice(1)).toHaveLength(1500);
    expect(new Set(rows.slice(1)).size).toBe(1500);
    expect(rows.slice(1, 1001)).toEqual(r.firstThousand);
    expect(r.searches).toHaveLength(2);
  });

  it('--budget 1: the second page could pass it, so it is not bought; exit 4 with the way on', async () => {
    const r = await runAgainst(['search', '--all', '--budget', '1', '-o', 'ndjson', '--include', 'domain']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 4,
      stderr: lines(
        JSON.stringify({
          code: 'budget_exhausted',
          status: 0,
          title: 'Budget reached',
          detail:
            '--budget 1 reached after 1 credit: 1,000 of 2,000 companies written (1 page); the next page could cost 1 credit',
          retryable: false,
          hint: 'Raise --budget to fetch more. Continue with: company-data search --all --budget 1 -o ndjson --include domain --exclude <the file holding the rows written so far> > more.ndjson',
        }),
      ),
    });
    expect(ndjsonDomains(r.stdout)).toEqual(r.firstThousand);
    expect(r.searches).toHaveLength(1);
  });

  it('--budget 2 is enough for both pages', async () => {
    const r = await runAgainst(['search', '--all', '--budget', '2', '-o', 'ndjson', '--include', 'domain']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 0,
      stderr: lines('Fetched all 2,000 companies (2 pages).'),
    });
    expect(ndjsonDomains(r.stdout)).toHaveLength(2000);
  });

  it('a second page that fails after the retries: the first page stays written, exit 5, the way on', async () => {
    const r = await runAgainst(['--retries', '1', 'search', '--all', '-o', 'ndjson', '--include', 'domain'], {
      env: RETRY_FAST,
      // Page 1 is a GET (no exclusions yet); every later page is a POST.
      faults: (s) => s.faults.add('search_unavailable', { path: '/api/search', method: 'POST', times: 2 }),
    });
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 5,
      stderr: lines(
        JSON.stringify({
          code: 'search_unavailable',
          status: 503,
          title: 'Search unavailable',
          detail:
            'page 2: fault injected by the sandbox (search_unavailable) (gave up after 2 attempts); 1,000 of 2,000 companies written (1 page) before it',
          retryable: true,
          hint: 'The service is temporarily unavailable; try again later (retries are automatic, see --retries). Continue with: company-data --retries 1 search --all -o ndjson --include domain --exclude <the file holding the rows written so far> > more.ndjson',
        }),
      ),
    });
    expect(ndjsonDomains(r.stdout)).toEqual(r.firstThousand);
    expect(r.searches.map((s) => s.status)).toEqual([200, 503, 503]);
  });

  it('the same failure on a terminal: the table of the rows got, then how to keep them next time', async () => {
    const r = await runAgainst(['--retries', '0', 'search', '--max-rows', '1001', '--include', 'domain'], {
      tty: true,
      env: RETRY_FAST,
      faults: (s) => s.faults.add('search_unavailable', { path: '/api/search', method: 'POST' }),
    });
    expect(r.code).toBe(5);
    const width = Math.max(...r.firstThousand.map((d) => d.length));
    expect(r.stdout.split('\n').slice(3, -2)).toEqual(r.firstThousand.map((d) => `│ ${d.padEnd(width)} │`));
    expect(r.stderr).toBe(
      lines(
        'Credits: charged 1, balance 999,999',
        'error: Search unavailable (search_unavailable, HTTP 503)',
        '  page 2: fault injected by the sandbox (search_unavailable); 1,000 of 2,000 companies written (1 page) before it',
        '  The service is temporarily unavailable; try again later (retries are automatic, see --retries). The rows so far are shown above; to be able to continue after a stop, write them to a file: company-data --retries 0 search --max-rows 1001 --include domain -o csv > companies.csv',
      ),
    );
  });
});
