// `me`: the key's plan, balance and capabilities: a titled record on a terminal, the account as
// received piped, CSV, and the exits a script checks a key with (3 for a missing or refused key).
import { describe, it } from 'vitest';
import { CLOSED_URL, type CommandCase, expectCase, KEYS, lines } from '../helpers/command-cases.js';

const NO_KEY_HINT =
  'Replace the key: set COMPANY_DATA_API_KEY, pass --api-key-file, or run `company-data config set-key`.';

const cases: CommandCase[] = [
  {
    name: 'on a terminal: "Account", then the record with the balance grouped',
    argv: ['me'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      'Account',
      '┌───────────────────────┬───────────────────────────────────────┐',
      '│ field                 │ value                                 │',
      '├───────────────────────┼───────────────────────────────────────┤',
      '│ plan                  │ pro                                   │',
      '│ balance               │ 1,000,000                             │',
      '│ capabilities          │ domains, search, breakdown, lookalike │',
      '│ key_name              │ full                                  │',
      '│ rate_limit_per_second │ —                                     │',
      '└───────────────────────┴───────────────────────────────────────┘',
    ),
    wantStderr: '',
  },
  {
    name: 'on a colour terminal: a bold title, cyan headers, the missing value dimmed',
    argv: ['me'],
    tty: true,
    env: { NO_COLOR: undefined, COMPANY_DATA_API_KEY: KEYS.free },
    wantCode: 0,
    wantStdout: lines(
      '\x1b[1mAccount\x1b[0m',
      '┌───────────────────────┬───────────────────────────────────────┐',
      '│ \x1b[1;36mfield\x1b[0m                 │ \x1b[1;36mvalue\x1b[0m                                 │',
      '├───────────────────────┼───────────────────────────────────────┤',
      '│ plan                  │ free                                  │',
      '│ balance               │ 1,000                                 │',
      '│ capabilities          │ domains, search, breakdown, lookalike │',
      '│ key_name              │ free                                  │',
      '│ rate_limit_per_second │ \x1b[2m—\x1b[0m                                     │',
      '└───────────────────────┴───────────────────────────────────────┘',
    ),
    wantStderr: '',
  },
  {
    name: 'piped: the account as the service sent it',
    argv: ['me'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{',
      '  "plan": "pro",',
      '  "balance": 1000000,',
      '  "key_name": "full",',
      '  "capabilities": [',
      '    "domains",',
      '    "search",',
      '    "breakdown",',
      '    "lookalike"',
      '  ],',
      '  "rate_limit_per_second": null',
      '}',
    ),
    wantStderr: '',
  },
  {
    name: '-o csv piped: the plain balance and the capabilities joined with ;',
    argv: ['me', '-o', 'csv'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: KEYS.empty },
    wantCode: 0,
    wantStdout: lines(
      'plan,balance,capabilities,key_name,rate_limit_per_second',
      'pro,0,domains;search;breakdown;lookalike,empty,',
    ),
    wantStderr: '',
  },
  {
    name: 'no key on a terminal: exit 3 with the remedy, nothing sent',
    argv: ['me'],
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
    argv: ['me'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: undefined },
    wantCode: 3,
    wantStdout: '',
    wantStderr: lines(
      `{"code":"invalid_api_key","status":401,"title":"No API key","detail":"No API key configured.","retryable":false,"hint":"${NO_KEY_HINT}"}`,
    ),
  },
  {
    name: "a key the service refuses piped: exit 3 with the service's problem",
    argv: ['me'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: 'cd_not_a_real_key_123' },
    wantCode: 3,
    wantStdout: '',
    wantStderr: lines(
      `{"code":"invalid_api_key","status":401,"title":"Invalid API key","detail":"The API key is missing or invalid.","retryable":false,"hint":"${NO_KEY_HINT}"}`,
    ),
  },
  {
    name: 'a service that is not there piped: exit 5',
    argv: ['me', '--retries', '0'],
    tty: false,
    env: { COMPANY_DATA_BASE_URL: CLOSED_URL },
    wantCode: 5,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"network_error","status":0,"title":"network error","detail":"Connection refused by 127.0.0.1:CLOSED; is the service running there?","retryable":true,"hint":"The service is temporarily unavailable; try again later (retries are automatic, see --retries)."}',
    ),
  },
];

describe('me', () => {
  it.each(cases)('$name', expectCase);
});
