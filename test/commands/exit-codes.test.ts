// The exit code table of the README, one representative problem per row, in-process against the
// sandbox, piped (-o json): the whole stdout and stderr of each, the problem as one JSON line.
// What only the real binary can show (the code the process exits with, stdout and stderr kept
// apart, a run held by another process) is in test/e2e/exit-codes.test.ts.
import { describe, expect, it } from 'vitest';
import { exitCodeFor, Problem } from '../../src/problem.js';
import { type CommandCase, DIR, expectCase, KEYS, lines } from '../helpers/command-cases.js';

/** Retries in milliseconds, so the 5xx row does not wait seconds. */
const FAST = {
  COMPANY_DATA_RETRY_BASE_MS: '5',
  COMPANY_DATA_RETRY_CAP_MS: '10',
  COMPANY_DATA_RETRY_FLOOR_MS: '5',
};

/** A problem reported piped: nothing on stdout, the problem as one JSON line on stderr. */
function problem(
  name: string,
  args: string[],
  wantCode: number,
  detail: { code: string; status: number; title: string; detail: string; retryable: boolean; hint: string },
  more: Partial<CommandCase> = {},
): CommandCase {
  return {
    name,
    argv: ['--retries', '1', '-o', 'json', ...args],
    tty: false,
    env: FAST,
    ...more,
    wantCode,
    wantStdout: '',
    wantStderr: `${JSON.stringify(detail)}\n`,
  };
}

const cases: CommandCase[] = [
  {
    name: 'success -> 0',
    argv: ['--retries', '1', '-o', 'csv', 'me'],
    tty: false,
    env: FAST,
    wantCode: 0,
    wantStdout: lines(
      'plan,balance,capabilities,key_name,rate_limit_per_second',
      'pro,1000000,domains;search;breakdown;lookalike,full,',
    ),
    wantStderr: '',
  },
  {
    name: 'success, found false -> 0',
    argv: ['--retries', '1', '-o', 'ndjson', 'enrich', 'no-such-company.example'],
    tty: false,
    env: FAST,
    wantCode: 0,
    wantStdout: lines(
      '{"domain":"no-such-company.example","found":false,"credits_charged":0,"bought_at":null}',
    ),
    wantStderr: lines('no record for no-such-company.example; nothing charged'),
  },
  problem('usage: a bad flag value -> 2', ['search', 'x', '--limit', 'lots'], 2, {
    code: 'usage_error',
    status: 0,
    title: 'Usage error',
    detail: `option '--limit <n>' argument 'lots' is invalid. --limit must be a whole number between 1 and 1000, got "lots"`,
    retryable: false,
    hint: 'Add --help for usage.',
  }),
  problem('usage: an unknown filter, refused locally -> 2', ['search', '--filter', 'colour=red'], 2, {
    code: 'usage_error',
    status: 0,
    title: 'Usage error',
    detail: 'unknown filter `colour`',
    retryable: false,
    hint: 'Filters: country, site_category, employee_range, primary_platform, tech (see `company-data fields`).',
  }),
  problem(
    'input: a 400 problem from the service -> 2',
    ['api', 'GET', '/api/search', '--query', 'limit=lots'],
    2,
    {
      code: 'invalid_request',
      status: 400,
      title: 'Invalid request',
      detail: 'limit must be an integer between 1 and 1000',
      retryable: false,
      hint: 'Do not retry unchanged; fix the request first.',
    },
  ),
  problem(
    'key: invalid -> 3',
    ['me'],
    3,
    {
      code: 'invalid_api_key',
      status: 401,
      title: 'Invalid API key',
      detail: 'The API key is missing or invalid.',
      retryable: false,
      hint: 'Replace the key: set COMPANY_DATA_API_KEY, pass --api-key-file, or run `company-data config set-key`.',
    },
    { env: { ...FAST, COMPANY_DATA_API_KEY: 'cd_sandbox_nonsense_0000' } },
  ),
  problem(
    'key: restricted -> 3',
    ['search', 'shoes'],
    3,
    {
      code: 'api_key_restricted',
      status: 403,
      title: 'API key restricted',
      detail: 'this key may not use search',
      retryable: false,
      hint: 'Use a key that is permitted for this action (check `company-data me` for its capabilities).',
    },
    { env: { ...FAST, COMPANY_DATA_API_KEY: KEYS.restricted } },
  ),
  problem(
    'key: plan -> 3',
    ['enrich', 'acme-shoes.com', '--products', 'profile,tech'],
    3,
    {
      code: 'upgrade_required',
      status: 403,
      title: 'Upgrade required',
      detail: 'the tech product is not available on the free plan',
      retryable: false,
      hint: 'Choose fields available on your plan (see `company-data fields`) or upgrade the plan.',
    },
    { env: { ...FAST, COMPANY_DATA_API_KEY: KEYS.free } },
  ),
  problem(
    'credits: balance -> 4',
    ['enrich', 'acme-shoes.com'],
    4,
    {
      code: 'insufficient_credits',
      status: 403,
      title: 'Insufficient credits',
      detail: 'the selected products (profile) could cost 1 credits; the balance is 0',
      retryable: false,
      hint: 'Top up the balance or use a key with enough credits; `company-data me` shows the balance.',
    },
    { env: { ...FAST, COMPANY_DATA_API_KEY: KEYS.empty } },
  ),
  problem(
    'credits: max-credits -> 4',
    ['enrich', 'acme-shoes.com', '--products', 'profile,leads', '--max-credits', '2'],
    4,
    {
      code: 'max_credits_exceeded',
      status: 400,
      title: 'Maximum credits exceeded',
      detail:
        'the selected products (profile 1, leads 5) can cost up to 6 credits per lookup, more than --max-credits 2; nothing was sent',
      retryable: false,
      hint: 'Raise --max-credits or select fewer products (see `company-data products` for costs).',
    },
  ),
  problem(
    'unavailable: 5xx after retries -> 5',
    ['me'],
    5,
    {
      code: 'search_unavailable',
      status: 503,
      title: 'Search unavailable',
      detail: 'fault injected by the sandbox (search_unavailable) (gave up after 2 attempts)',
      retryable: true,
      hint: 'The service is temporarily unavailable; try again later (retries are automatic, see --retries).',
    },
    { setup: (s) => void s.faults.add('search_unavailable', { path: '/api/', times: 10 }) },
  ),
  {
    name: 'batch finished with row errors -> 6',
    argv: [
      '--retries',
      '1',
      '-o',
      'json',
      'enrich',
      '--input',
      `${DIR}/mixed.csv`,
      '--output',
      `${DIR}/mixed.out.json`,
    ],
    tty: false,
    env: FAST,
    files: { 'mixed.csv': 'domain\nacme-shoes.com\nnot a domain\n' },
    wantCode: 6,
    wantStdout: '',
    wantStderr: lines(
      '2026-11-24T12:00:00Z Enriched: 2 rows, 1 unique domain (1 found, 0 not found), 1 error, 1 credit charged, balance 999,999, 0.0s',
    ),
    wantFiles: {
      'mixed.out.json': lines(
        '[',
        '{"domain":"acme-shoes.com","found":true,"cd_domain":"acme-shoes.com","company_name":"Acme Shoes","country":"US","site_category":"fashion","employee_range":"51-200","founded_year":2009,"credits_charged":1,"bought_at":null,"error_code":null,"error_detail":null},',
        '{"domain":"not a domain","found":null,"cd_domain":null,"company_name":null,"country":null,"site_category":null,"employee_range":null,"founded_year":null,"credits_charged":0,"bought_at":null,"error_code":"invalid_domain","error_detail":"domain contains spaces"}',
        ']',
      ),
    },
  },
];

describe('exit codes', () => {
  it.each(cases)('$name', async (c) => expectCase(c));

  it('maps an unforeseen failure (a bug) to 1 and every catalog code to its row', () => {
    expect(exitCodeFor(new Problem({ code: 'internal_bug' }))).toBe(1);
    for (const code of [
      'invalid_field',
      'request_too_large',
      'unsupported_media_type',
      'search_limit_exceeded',
    ])
      expect(exitCodeFor(new Problem({ code })), code).toBe(2);
    for (const code of ['rate_limited', 'internal_error', 'search_timeout', 'search_contract_error'])
      expect(exitCodeFor(new Problem({ code })), code).toBe(5);
    expect(exitCodeFor(new Problem({ code: 'insufficient_credits' }))).toBe(4);
    for (const code of ['invalid_api_key', 'api_key_restricted', 'upgrade_required'])
      expect(exitCodeFor(new Problem({ code })), code).toBe(3);
    // Set-up mistakes (test/commands/setup-mistakes.test.ts): fix, then re-run.
    for (const code of [
      'untrusted_certificate',
      'proxy_auth_required',
      'proxy_unreachable',
      'proxy_refused',
      'http1_refused',
    ])
      expect(exitCodeFor(new Problem({ code })), code).toBe(2);
    // `api` with a path or method the service lacks, whatever status it came with.
    for (const status of [404, 405])
      expect(exitCodeFor(new Problem({ code: 'unknown_endpoint', status })), String(status)).toBe(2);
    // An output that cannot be written (test/e2e/enrich-unwritable.test.ts): its own code.
    for (const code of ['write_failed', 'output_closed'])
      expect(exitCodeFor(new Problem({ code })), code).toBe(8);
  });
});
