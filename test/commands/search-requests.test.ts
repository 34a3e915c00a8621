// `search` as the service sees it and as scripts read it: the requests sent (a GET with the
// filters as JSON text in the query, a POST with a JSON body when there are exclusions, nothing at
// all when a check fails first), the formats with --include, exclusions from files and stdin, the
// refusals made before sending, and problems from the service. Whole stdout and stderr, and every
// request the sandbox received.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommandCase, caseEnvironment, DIR, expectCase, lines } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';

/** JSON as the commands print it piped. */
const json = (data: unknown) => `${JSON.stringify(data, null, 2)}\n`;

/** Rows of the sandbox that several searches return: US fashion companies. */
const usFashion = (domain: string, company_name: string) => ({
  domain,
  company_name,
  country: 'US',
  site_category: 'fashion',
});
const ACME_SHOES = usFashion('acme-shoes.com', 'Acme Shoes');
const LUMTRIYOR_CO = usFashion('lumtriyor-co.com', 'Lumtriyor Co');
const ELHAOL_STUDIO = usFashion('elhaol-studio.com', 'Elhaol Studio');
const DRISA_HQ = usFashion('drisa-hq.com', 'Drisa Hq');

const TOO_MANY = `${Array.from({ length: 20_001 }, (_, i) => `excluded-${i}.com`).join('\n')}\n`;

const cases: CommandCase[] = [
  {
    name: 'filters go as JSON text in the query of a GET',
    argv: ['-o', 'json', 'search', 'shoes', '--filter', 'country=US', '--limit', '5'],
    tty: false,
    wantCode: 0,
    wantStdout: json({
      query: 'shoes',
      query_operator: 'and',
      total: 44,
      limit: 5,
      rows: [
        ACME_SHOES,
        {
          domain: 'hafloal-shoes.com',
          company_name: 'Hafloal Shoes',
          country: 'US',
          site_category: 'fashion',
        },
        LUMTRIYOR_CO,
        ELHAOL_STUDIO,
        DRISA_HQ,
      ],
      credits: { charged: 1 },
    }),
    wantStderr: lines('Showing 5 of 44 companies'),
    wantRequests: [
      'GET /api/fields no key -> 200',
      'GET /api/search?query=shoes&filters={"country":["US"]}&limit=5 bearer:full -> 200',
    ],
  },
  {
    name: '--filter and --filters merge, their values unioned',
    argv: [
      '-o',
      'csv',
      'search',
      '--filter',
      'country=US',
      '--filters',
      '{"country":["GB","US"]}',
      '--limit',
      '50',
      '--include',
      'domain,country',
    ],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      'domain,country',
      'acme-shoes.com,US',
      'globex.io,US',
      'stratergar-dogs.com,US',
      'yorgesol.net,US',
      'vebelzen.co.uk,US',
      'flolotri-online.com,US',
      'zunorros.net,US',
      'lidoora-nails.com,US',
      'luxsaflo.com,US',
      'kinmarhal.co.uk,GB',
      'drimoros.com,US',
      'grelumflo-shop.com,US',
      'hafloal-shoes.com,US',
      'danfinros-nails.com,GB',
      'zustraflo.com,US',
      'elsu.com,US',
      'tanofa.com,US',
      'olbodri-necklaces.com,US',
      'grezenvia-smartphones.co.uk,US',
      'vewen.com,US',
      'kinpelel.com,US',
      'bequin.co.uk,GB',
      'pacrerixan.com,US',
      'kindriluxvio.com,US',
      'lumtriyor-co.com,US',
      'viodohal.ca,US',
      'trifahal.com,US',
      'facresu-dogs.co.uk,GB',
      'haltrixan.com,US',
      'noralbo-plants.com,US',
      'velsolnor-goods.com,US',
      'elhaol-studio.com,US',
      'losuge.co.uk,GB',
      'flofinvel.com,US',
      'kelviove-laptops.com,US',
      'lumquin-gadgets.co.uk,GB',
      'weniontri.com,US',
      'trilumsol-goods.io,US',
      'viovia.fr,US',
      'pelrami.shop,GB',
      'moprifa.io,GB',
      'xansoldan.co.uk,US',
      'viasolko.de,US',
      'nowen-devops.com,US',
      'oracreol-makeup.co.uk,GB',
      'luxurkel.co.uk,GB',
      'danquindori.com,US',
      'kokotal.com,US',
      'strazugar-wellness.se,GB',
      'solgexan.com,US',
    ),
    wantStderr: lines('Showing 50 of 840 companies'),
    wantRequests: [
      'GET /api/fields no key -> 200',
      'GET /api/search?filters={"country":["US","GB"]}&include=domain,country&limit=50 bearer:full -> 200',
    ],
  },
  {
    name: '-o ndjson with the included fields',
    argv: ['-o', 'ndjson', 'search', 'shoes', '--include', 'domain,tech', '--limit', '3'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{"domain":"acme-shoes.com","tech":["shopify","klaviyo","google_analytics","stripe","paypal","hotjar","yotpo","gorgias"]}',
      '{"domain":"sacor-sneakers.com","tech":["shopify","google_analytics"]}',
      '{"domain":"hafloal-shoes.com","tech":["woocommerce","segment","akamai","stripe","zendesk","intercom","salesforce","google_analytics","google_tag_manager","afterpay","klarna","paypal","facebook_pixel","klaviyo"]}',
    ),
    wantStderr: lines('Showing 3 of 125 companies'),
  },
  {
    name: '-o csv with the included fields',
    argv: ['-o', 'csv', 'search', 'shoes', '--include', 'domain,tech', '--limit', '3'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      'domain,tech',
      'acme-shoes.com,shopify;klaviyo;google_analytics;stripe;paypal;hotjar;yotpo;gorgias',
      'sacor-sneakers.com,shopify;google_analytics',
      'hafloal-shoes.com,woocommerce;segment;akamai;stripe;zendesk;intercom;salesforce;google_analytics;google_tag_manager;afterpay;klarna;paypal;facebook_pixel;klaviyo',
    ),
    wantStderr: lines('Showing 3 of 125 companies'),
  },
  {
    name: '-o table with the included fields',
    argv: ['-o', 'table', 'search', 'shoes', '--include', 'domain,tech', '--limit', '3'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '┌────────────────────┬─────────────────────────────────────────────────────────────────────────────┐',
      '│ domain             │ tech                                                                        │',
      '├────────────────────┼─────────────────────────────────────────────────────────────────────────────┤',
      '│ acme-shoes.com     │ shopify, klaviyo, google_analytics, stripe, paypal, hotjar, yotpo, gorgias  │',
      '├────────────────────┼─────────────────────────────────────────────────────────────────────────────┤',
      '│ sacor-sneakers.com │ shopify, google_analytics                                                   │',
      '├────────────────────┼─────────────────────────────────────────────────────────────────────────────┤',
      '│ hafloal-shoes.com  │ woocommerce, segment, akamai, stripe, zendesk, intercom, salesforce,        │',
      '│                    │ google_analytics, google_tag_manager, afterpay, klarna, paypal,             │',
      '│                    │ facebook_pixel, klaviyo                                                     │',
      '└────────────────────┴─────────────────────────────────────────────────────────────────────────────┘',
    ),
    wantStderr: lines('Showing 3 of 125 companies', 'Credits: charged 1, balance 999,999'),
  },
  {
    name: 'terminal escapes that a company name carries are stripped from the table',
    argv: ['-o', 'table', 'search', 'escape', '--limit', '5'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '┌─────────────────┬──────────────────┬─────────┬───────────────┐',
      '│ domain          │ company name     │ country │ site category │',
      '├─────────────────┼──────────────────┼─────────┼───────────────┤',
      '│ escape-test.com │ Escape Test Corp │ US      │ electronics   │',
      '└─────────────────┴──────────────────┴─────────┴───────────────┘',
    ),
    wantStderr: lines('Showing 1 of 1 company', 'Credits: charged 1, balance 999,999'),
  },
  {
    name: '20,001 exclusions: refused before anything is sent, not even the catalog',
    argv: ['search', 'shoes', '--exclude', `${DIR}/too-many.txt`],
    tty: false,
    files: { 'too-many.txt': TOO_MANY },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"usage_error","status":0,"title":"Usage error","detail":"20,001 unique exclusions; the service accepts at most 20,000 per search","retryable":false,"hint":"Exclude fewer companies, or narrow the search with --filter so fewer exclusions are needed. Nothing was sent."}',
    ),
    wantRequests: [],
  },
  {
    name: 'an exclusion that is not a domain: refused naming its file and line, no search sent',
    argv: ['-o', 'table', 'search', 'shoes', '--exclude', `${DIR}/bad.txt`],
    tty: false,
    files: { 'bad.txt': 'good.com\nnot a domain\n' },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  1 exclusion entry is not a domain: /tmp/cdt-XXXXXX/bad.txt line 2: "not a domain" contains spaces',
      '  Fix or remove them and run again; none are skipped, so no company you meant to exclude can slip through.',
    ),
    wantRequests: [],
  },
  {
    name: 'a first line read as a title that may be a mistyped domain: a note, and the search',
    argv: ['-o', 'json', 'search', 'shoes', '--limit', '1', '--exclude', `${DIR}/doubtful.txt`],
    tty: false,
    files: { 'doubtful.txt': 'acme\ngood.com\n' },
    wantCode: 0,
    wantStdout: json({
      query: 'shoes',
      query_operator: 'and',
      total: 125,
      limit: 1,
      rows: [ACME_SHOES],
      credits: { charged: 1 },
    }),
    wantStderr: lines(
      'note: the first line of --exclude /tmp/cdt-XXXXXX/doubtful.txt, "acme", was read as the column\'s title, not as a domain to exclude; put a title line such as "domain" above the domains if it is one',
      'Excluding 1 domain.',
      'Showing 1 of 125 companies',
    ),
    wantRequests: [
      'GET /api/fields no key -> 200',
      'POST /api/search bearer:full application/json 58B -> 200',
    ],
  },
  {
    name: 'refuses --filter tech=shopfy locally: exit 2, no search sent',
    argv: ['-o', 'table', 'search', 'shoes', '--filter', 'tech=shopfy'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  unknown value "shopfy" for filter `tech` (did you mean `shopify`?)',
      '  See the 54 values of tech with `company-data fields`.',
    ),
    wantRequests: ['GET /api/fields no key -> 200'],
  },
  {
    name: 'refuses --filters with a misspelt site_category locally: exit 2, no search sent',
    argv: ['-o', 'table', 'search', 'shoes', '--filters', '{"site_category":["fashon"]}'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  unknown value "fashon" for filter `site_category` (did you mean `fashion`?)',
      '  Values of site_category: fashion, electronics, home_garden, beauty, sports, food_drink, b2b_software, travel, health, toys, jewelry, pets, automotive, media, education, finance.',
    ),
    wantRequests: ['GET /api/fields no key -> 200'],
  },
  {
    name: 'refuses --include lead_email locally: exit 2, no search sent',
    argv: ['-o', 'table', 'search', 'shoes', '--include', 'lead_email'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  field `lead_email` (product leads) is enrichment-only: search cannot return it',
      '  Use `company-data enrich <domain> --products leads` for it. Fields for search: domain, company_name, country, site_category, employee_range, founded_year, primary_platform, tech, tech_count.',
    ),
    wantRequests: ['GET /api/fields no key -> 200'],
  },
  {
    name: 'refuses --limit 1001 locally: exit 2, no search sent',
    argv: ['-o', 'table', 'search', 'shoes', '--limit', '1001'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      "error: option '--limit <n>' argument '1001' is invalid. --limit must be a whole number between 1 and 1000, got \"1001\"",
      '(add --help for usage)',
    ),
    wantRequests: [],
  },
  // A server's invalid_filter: exit 2, the problem as text or, for scripts, as one JSON line; the
  // fields catalog is read again after it (it may have changed).
  ...(
    [
      [
        'table',
        'the problem as text',
        lines(
          'error: Invalid filter (invalid_filter, HTTP 400)',
          '  fault injected by the sandbox (invalid_filter)',
          '  Check filter names and values with `company-data fields`.',
        ),
      ],
      [
        'json',
        'the problem as one JSON line',
        lines(
          '{"code":"invalid_filter","status":400,"title":"Invalid filter","detail":"fault injected by the sandbox (invalid_filter)","retryable":false,"hint":"Check filter names and values with `company-data fields`."}',
        ),
      ],
    ] as const
  ).map(
    ([format, shown, wantStderr]): CommandCase => ({
      name: `a server invalid_filter, -o ${format} piped: exit 2, ${shown}`,
      argv: ['-o', format, 'search', 'shoes', '--filter', 'country=US'],
      tty: false,
      setup: (s) => void s.faults.add('invalid_filter', { path: '/api/search' }),
      wantCode: 2,
      wantStdout: '',
      wantStderr,
      wantRequests: [
        'GET /api/fields no key -> 200',
        'GET /api/search?query=shoes&filters={"country":["US"]} bearer:full -> 400 (invalid_filter)',
        'GET /api/fields no key -> 200',
      ],
    }),
  ),
  {
    name: 'search_limit_exceeded: exit 2, explained with what this search asked for',
    argv: [
      '-o',
      'table',
      'search',
      'one two three four five six seven eight nine ten eleven twelve thirteen',
    ],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Search limit exceeded (search_limit_exceeded, HTTP 422)',
      '  the query has 13 terms after stop words; at most 12 are allowed',
      '  Narrow the search: use fewer query terms, fewer filter values, or a smaller --limit, then try again. This search has 13 query words and 0 filter values.',
    ),
    wantRequests: [
      'GET /api/fields no key -> 200',
      'GET /api/search?query=one two three four five six seven eight nine ten eleven twelve thirteen bearer:full -> 422',
    ],
  },
  {
    name: 'the example of search --help, against --sandbox',
    argv: ['--sandbox', '-o', 'json', 'search', 'shopify shoes', '--filter', 'country=US', '--limit', '5'],
    tty: false,
    // The --sandbox of the command listens on a port of its own (src/sandbox/index.ts).
    masks: [[/127\.0\.0\.1:\d+/, '127.0.0.1:PORT']],
    wantCode: 0,
    wantStdout: json({
      query: 'shopify shoes',
      query_operator: 'and',
      total: 60,
      limit: 5,
      rows: [
        ACME_SHOES,
        {
          domain: 'terorasol-goods.com',
          company_name: 'Terorasol Goods',
          country: 'US',
          site_category: 'fashion',
        },
        {
          domain: 'prisolnor-labs.com',
          company_name: 'Prisolnor Labs',
          country: 'US',
          site_category: 'fashion',
        },
        LUMTRIYOR_CO,
        { domain: 'olxanmar.com', company_name: 'Olxanmar', country: 'US', site_category: 'fashion' },
      ],
      credits: { charged: 1 },
    }),
    wantStderr: lines(
      'Using the offline sandbox at http://127.0.0.1:PORT (demo key, no real credits).',
      'Sandbox store: /tmp/cdt-XXXXXX/home/.local/state/company-data/store.sandbox.db',
      'Showing 5 of 60 companies',
    ),
  },
  {
    name: 'exclusions from a CSV of URLs and duplicates and --exclude-domain: POSTed as JSON, left out, counted',
    argv: [
      '-o',
      'json',
      'search',
      'shoes',
      '--limit',
      '10',
      '--exclude',
      `${DIR}/exclude.csv`,
      '--exclude-domain',
      'hafloal-shoes.com',
    ],
    tty: false,
    files: {
      'exclude.csv':
        'name,website\none,https://www.acme-shoes.com/about?x=1\none again,ACME-SHOES.COM\ntwo,http://sacor-sneakers.com\ntwo again,sacor-sneakers.com\n',
    },
    wantCode: 0,
    wantStdout: json({
      query: 'shoes',
      query_operator: 'and',
      total: 122,
      limit: 10,
      rows: [
        LUMTRIYOR_CO,
        { domain: 'mikelnor.fr', company_name: 'Mikelnor', country: 'FR', site_category: 'fashion' },
        ELHAOL_STUDIO,
        { domain: 'losuge.co.uk', company_name: 'Losuge', country: 'GB', site_category: 'fashion' },
        { domain: 'pelgexan.fr', company_name: 'Pelgexan', country: 'FR', site_category: 'fashion' },
        DRISA_HQ,
        { domain: 'saranor.nl', company_name: 'Saranor', country: 'NL', site_category: 'fashion' },
        { domain: 'talgrelux.co', company_name: 'Talgrelux', country: null, site_category: null },
        {
          domain: 'flonorkatri-hq.com',
          company_name: 'Flonorkatri Hq',
          country: 'US',
          site_category: 'fashion',
        },
        {
          domain: 'begresu-store.com',
          company_name: 'Begresu Store',
          country: 'US',
          site_category: 'fashion',
        },
      ],
      credits: { charged: 1 },
    }),
    wantStderr: lines('Excluding 3 domains (2 duplicates dropped).', 'Showing 10 of 122 companies'),
    wantRequests: [
      'GET /api/fields no key -> 200',
      'POST /api/search bearer:full application/json 106B -> 200',
    ],
  },
  {
    name: 'exclusions from stdin',
    argv: ['-o', 'json', 'search', 'coffee', '--limit', '3', '--exclude', '-'],
    tty: false,
    stdin: 'markinnejun-beer.com\n',
    wantCode: 0,
    wantStdout: json({
      query: 'coffee',
      query_operator: 'and',
      total: 47,
      limit: 3,
      rows: [
        {
          domain: 'cordota-chocolate.co.uk',
          company_name: 'Cordota Chocolate',
          country: 'CH',
          site_category: 'food_drink',
        },
        {
          domain: 'lobratriion-bakery.com',
          company_name: 'Lobratriion Bakery',
          country: 'JP',
          site_category: 'food_drink',
        },
        { domain: 'lodan-hq.co', company_name: 'Lodan Hq', country: 'NL', site_category: 'food_drink' },
      ],
      credits: { charged: 1 },
    }),
    wantStderr: lines('Excluding 1 domain.', 'Showing 3 of 47 companies'),
    wantRequests: [
      'GET /api/fields no key -> 200',
      'POST /api/search bearer:full application/json 71B -> 200',
    ],
  },
];

describe('search: requests and outputs', () => {
  it.each(cases)('$name', async (c) => expectCase(c));
});

describe('another envelope, from a server that is not the sandbox', () => {
  /** Serves `body(path)` as JSON for every path (an empty fields catalog), charging one credit. */
  async function withServer(body: (path: string) => unknown, run: (url: string) => Promise<void>) {
    const server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      res.writeHead(200, { 'content-type': 'application/json', 'x-credits-charged': '1' });
      res.end(JSON.stringify(path === '/api/fields' ? { fields: [] } : body(path)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }
  const at = (url: string, argv: string[]) =>
    runInProcess(['--base-url', url, ...argv], {
      env: {
        ...caseEnvironment({ env: { COMPANY_DATA_API_KEY: 'k' } }),
        HOME: tmp,
        XDG_CONFIG_HOME: tmp,
        XDG_CACHE_HOME: tmp,
      },
    });
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'cd-envelope-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('shows rows found under another member name, with no total', async () => {
    await withServer(
      () => ({ companies: [{ domain: 'a.com', company_name: 'A' }], took_ms: 3 }),
      async (url) => {
        expect(await at(url, ['-o', 'table', 'search', 'shoes'])).toEqual({
          code: 0,
          stdout: lines(
            '┌────────┬──────────────┐',
            '│ domain │ company name │',
            '├────────┼──────────────┤',
            '│ a.com  │ A            │',
            '└────────┴──────────────┘',
          ),
          stderr: lines('Showing 1 of 1 company', 'Credits: charged 1'),
        });
        expect(await at(url, ['-o', 'json', 'search', 'shoes'])).toEqual({
          code: 0,
          // The members read under the contract's names first, the charge from the headers, then the rest.
          stdout: json({
            total: 1,
            rows: [{ domain: 'a.com', company_name: 'A' }],
            credits: { charged: 1 },
            took_ms: 3,
          }),
          stderr: lines('Showing 1 of 1 company'),
        });
      },
    );
  });

  it.each([
    [
      'search',
      'shoes',
      '/api/search',
      'rows',
      'rows, results, companies, hits, items, records, data, matches',
    ],
    [
      'breakdown',
      'country',
      '/api/search?breakdown',
      'buckets',
      'buckets, values, rows, items, results, counts',
    ],
    [
      'lookalike',
      'acme.com',
      '/api/lookalike/acme.com',
      'candidates',
      'results, candidates, matches, lookalikes, companies, rows, data, items',
    ],
  ])(
    'an unrecognisable %s body is an error naming the endpoint and the members looked for, never raw JSON on stdout',
    async (command, arg, endpoint, list, looked) => {
      const body = { message: 'a shape nobody expected', nested: { deep: true } };
      await withServer(
        () => body,
        async (url) => {
          expect(await at(url, ['-o', 'table', command, arg])).toEqual({
            code: 5,
            stdout: '',
            stderr: lines(
              'error: Unexpected response (unexpected_response)',
              `  ${endpoint}: the answer has no list of ${list} (looked for ${looked}, at the top level or under data or result)`,
              '  company-data does not know this layout of the service: report it with the output of `company-data -v` for the same command (README, "Troubleshooting").',
            ),
          });
        },
      );
    },
  );
});
