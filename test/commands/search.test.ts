// `search`: a table on a terminal, the response document piped, the other formats, and the checks
// made before anything is sent.
import { describe, it } from 'vitest';
import { type CommandCase, expectCase, KEYS, lines, usageLine } from '../helpers/command-cases.js';

const cases: CommandCase[] = [
  {
    name: 'on a terminal: the included fields as a table, the total and credits on stderr',
    argv: ['search', 'shoes', '--limit', '3', '--include', 'domain,company_name,country'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌────────────────────┬────────────────┬─────────┐',
      '│ domain             │ company name   │ country │',
      '├────────────────────┼────────────────┼─────────┤',
      '│ acme-shoes.com     │ Acme Shoes     │ US      │',
      '│ sacor-sneakers.com │ Sacor Sneakers │ NL      │',
      '│ hafloal-shoes.com  │ Hafloal Shoes  │ US      │',
      '└────────────────────┴────────────────┴─────────┘',
    ),
    wantStderr: lines('Showing 3 of 125 companies', 'Credits: charged 1, balance 999,999'),
  },
  {
    name: 'on a terminal without --include: the default fields',
    argv: ['search', 'shoes', '--limit', '2'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌────────────────────┬────────────────┬─────────┬───────────────┐',
      '│ domain             │ company name   │ country │ site category │',
      '├────────────────────┼────────────────┼─────────┼───────────────┤',
      '│ acme-shoes.com     │ Acme Shoes     │ US      │ fashion       │',
      '│ sacor-sneakers.com │ Sacor Sneakers │ NL      │ fashion       │',
      '└────────────────────┴────────────────┴─────────┴───────────────┘',
    ),
    wantStderr: lines('Showing 2 of 125 companies', 'Credits: charged 1, balance 999,999'),
  },
  {
    name: 'piped: the whole response document; no credits line for scripts',
    argv: ['search', 'shoes', '--limit', '2'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{',
      '  "query": "shoes",',
      '  "query_operator": "and",',
      '  "total": 125,',
      '  "limit": 2,',
      '  "rows": [',
      '    {',
      '      "domain": "acme-shoes.com",',
      '      "company_name": "Acme Shoes",',
      '      "country": "US",',
      '      "site_category": "fashion"',
      '    },',
      '    {',
      '      "domain": "sacor-sneakers.com",',
      '      "company_name": "Sacor Sneakers",',
      '      "country": "NL",',
      '      "site_category": "fashion"',
      '    }',
      '  ],',
      '  "credits": {',
      '    "charged": 1',
      '  }',
      '}',
    ),
    wantStderr: lines('Showing 2 of 125 companies'),
  },
  {
    name: 'a filter narrows the total (44 of the 125 "shoes" companies are in the US)',
    argv: ['search', 'shoes', '--filter', 'country=US', '--limit', '2', '--include', 'domain,country'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌───────────────────┬─────────┐',
      '│ domain            │ country │',
      '├───────────────────┼─────────┤',
      '│ acme-shoes.com    │ US      │',
      '│ hafloal-shoes.com │ US      │',
      '└───────────────────┴─────────┘',
    ),
    wantStderr: lines('Showing 2 of 44 companies', 'Credits: charged 1, balance 999,999'),
  },
  {
    name: 'an excluded domain is left out and said so on stderr',
    argv: ['search', 'shoes', '--exclude-domain', 'https://www.acme-shoes.com/', '--limit', '2', '-o', 'csv'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      'domain,company_name,country,site_category',
      'sacor-sneakers.com,Sacor Sneakers,NL,fashion',
      'hafloal-shoes.com,Hafloal Shoes,US,fashion',
    ),
    wantStderr: lines('Excluding 1 domain.', 'Showing 2 of 124 companies'),
  },
  {
    name: '-o ndjson piped: one row per line',
    argv: ['search', 'shoes', '--limit', '2', '-o', 'ndjson'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{"domain":"acme-shoes.com","company_name":"Acme Shoes","country":"US","site_category":"fashion"}',
      '{"domain":"sacor-sneakers.com","company_name":"Sacor Sneakers","country":"NL","site_category":"fashion"}',
    ),
    wantStderr: lines('Showing 2 of 125 companies'),
  },
  {
    name: 'no match on a terminal: nothing on stdout, exit 0',
    argv: ['search', 'zzzqqq'],
    tty: true,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines('No companies match.', 'Credits: charged 0, balance 1,000,000'),
  },
  {
    name: 'no match piped: the document with no rows',
    argv: ['search', 'zzzqqq'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{',
      '  "query": "zzzqqq",',
      '  "query_operator": "and",',
      '  "total": 0,',
      '  "limit": 25,',
      '  "rows": [],',
      '  "credits": {',
      '    "charged": 0',
      '  }',
      '}',
    ),
    wantStderr: lines('No companies match.'),
  },
  {
    name: 'a misspelt filter on a terminal: exit 2 with a suggestion, nothing sent',
    argv: ['search', 'shoes', '--filter', 'contry=US'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  unknown filter `contry` (did you mean `country`?)',
      '  Filters: country, site_category, employee_range, primary_platform, tech (see `company-data fields`).',
    ),
    // The fields catalog, to check the filter against; no search.
    wantRequests: ['GET /api/fields no key -> 200'],
  },
  {
    name: 'a misspelt filter piped: exit 2 with one JSON problem line',
    argv: ['search', 'shoes', '--filter', 'contry=US'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"usage_error","status":0,"title":"Usage error","detail":"unknown filter `contry` (did you mean `country`?)","retryable":false,"hint":"Filters: country, site_category, employee_range, primary_platform, tech (see `company-data fields`)."}',
    ),
  },
  // A filter name is never looked up on a plain object: `constructor`, `toString` and `__proto__`
  // are unknown filters like any other, not "list.includes is not a function" (exit 1).
  ...(
    [
      ['--filter constructor=x', ['--filter', 'constructor=x'], 'constructor'],
      ['--filters {"toString":["x"]}', ['--filters', '{"toString":["x"]}'], 'toString'],
      ['--filters {"__proto__":["x"]}', ['--filters', '{"__proto__":["x"]}'], '__proto__'],
      ['--filter __proto__=x', ['--filter', '__proto__=x'], '__proto__'],
    ] as const
  ).map(
    ([flag, argv, name]): CommandCase => ({
      name: `${flag}: an unknown filter, exit 2, nothing sent`,
      argv: ['search', 'shoes', ...argv],
      tty: true,
      wantCode: 2,
      wantStdout: '',
      wantStderr: lines(
        'error: Usage error (usage_error)',
        `  unknown filter \`${name}\``,
        '  Filters: country, site_category, employee_range, primary_platform, tech (see `company-data fields`).',
      ),
    }),
  ),
  {
    name: '--delimiter without --exclude: exit 2, it reads --exclude files only',
    argv: ['search', 'shoes', '--delimiter', ';'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine('--delimiter applies to --exclude files', ''),
  },
  {
    name: 'a --limit out of range: exit 2 from the flag parser',
    argv: ['search', 'shoes', '--limit', '0'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine(
      `option '--limit <n>' argument '0' is invalid. --limit must be a whole number between 1 and 1000, got "0"`,
    ),
  },
  {
    name: 'a key without the search capability: exit 3',
    argv: ['search', 'shoes', '--limit', '2'],
    tty: true,
    env: { COMPANY_DATA_API_KEY: KEYS.restricted },
    wantCode: 3,
    wantStdout: '',
    wantStderr: lines(
      'error: API key restricted (api_key_restricted, HTTP 403)',
      '  this key may not use search',
      '  Use a key that is permitted for this action (check `company-data me` for its capabilities).',
    ),
  },
];

describe('search', () => {
  it.each(cases)('$name', expectCase);
});
