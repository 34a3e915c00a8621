// `api`: a raw request through the same client as every command: the response JSON on stdout in
// every format but NDJSON, the credits on stderr in a terminal, and the local checks on the path,
// the query and the body.
import { describe, it } from 'vitest';
import { type CommandCase, expectCase, lines, usageLine } from '../helpers/command-cases.js';

const ACCOUNT = lines(
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
);

const SEARCH_ONE = {
  query: 'shoes',
  query_operator: 'and',
  total: 125,
  limit: 1,
  rows: [{ domain: 'acme-shoes.com', company_name: 'Acme Shoes' }],
  credits: { charged: 1 },
};

/** The runtime's own JSON.parse message (its wording changes between Node versions). */
function parseError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${text} is valid JSON`);
}

const NO_KEY_HINT =
  'Replace the key: set COMPANY_DATA_API_KEY, pass --api-key-file, or run `company-data config set-key`.';

const ENDPOINTS_HINT =
  'See `company-data api --help` for the endpoints: GET /api/me, /api/products, /api/fields, /api/errors, /api/domains/<domain>, /api/lookalike/<domain>, and GET or POST /api/search.';

const cases: CommandCase[] = [
  {
    name: 'GET /api/me on a terminal: the JSON, the credits (none charged) on stderr',
    argv: ['api', 'GET', '/api/me'],
    tty: true,
    wantCode: 0,
    wantStdout: ACCOUNT,
    wantStderr: lines('Credits: charged 0, balance 1,000,000'),
  },
  {
    name: 'GET /api/me piped: the JSON only',
    argv: ['api', 'get', '/api/me'],
    tty: false,
    wantCode: 0,
    wantStdout: ACCOUNT,
    wantStderr: '',
  },
  {
    name: 'a relative path with --query on a terminal: the raw lookup, charged',
    argv: ['api', 'GET', 'domains/acme-shoes.com', '--query', 'products=profile'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '{',
      '  "found": true,',
      '  "domain": "acme-shoes.com",',
      '  "company_name": "Acme Shoes",',
      '  "country": "US",',
      '  "site_category": "fashion",',
      '  "employee_range": "51-200",',
      '  "founded_year": 2009,',
      '  "credits": {',
      '    "charged": 1,',
      '    "products": {',
      '      "profile": 1',
      '    }',
      '  }',
      '}',
    ),
    wantStderr: lines('Credits: charged 1, balance 999,999'),
  },
  {
    name: 'POST with an inline body on a terminal',
    argv: [
      'api',
      'POST',
      '/api/search',
      '--body',
      '{"query":"shoes","limit":1,"include":"domain,company_name"}',
    ],
    tty: true,
    wantCode: 0,
    wantStdout: `${JSON.stringify(SEARCH_ONE, null, 2)}\n`,
    wantStderr: lines('Credits: charged 1, balance 999,999'),
  },
  {
    name: 'POST with the body from stdin, -o ndjson piped: one compact line',
    argv: ['api', 'POST', 'search', '--body', '@-', '-o', 'ndjson'],
    tty: false,
    stdin: '{"query": "shoes", "limit": 1, "include": "domain,company_name"}\n',
    wantCode: 0,
    wantStdout: lines(JSON.stringify(SEARCH_ONE)),
    wantStderr: '',
  },
  {
    name: 'a public catalog without a key: the key is not needed, no credits line',
    argv: ['api', 'GET', '/api/products', '-o', 'ndjson'],
    tty: true,
    env: { COMPANY_DATA_API_KEY: undefined },
    wantCode: 0,
    wantStdout: lines(
      JSON.stringify({
        products: [
          {
            id: 'profile',
            description: 'Company profile: name, country, category, size, founding year',
            fields: ['domain', 'company_name', 'country', 'site_category', 'employee_range', 'founded_year'],
            bundles: ['starter', 'growth', 'enterprise'],
            credit_units: 1,
            default: true,
            add_on: false,
          },
          {
            id: 'tech',
            description: 'Technology: the commerce platform and the technologies detected on the site',
            fields: ['primary_platform', 'tech', 'tech_count'],
            bundles: ['growth', 'enterprise'],
            credit_units: 1,
            default: false,
            add_on: false,
          },
          {
            id: 'leads',
            description: 'Lead add-on: a named decision maker with title and e-mail address',
            fields: ['lead_name', 'lead_title', 'lead_email'],
            bundles: ['enterprise'],
            credit_units: 5,
            default: false,
            add_on: true,
          },
        ],
      }),
    ),
    wantStderr: '',
  },
  {
    name: 'no key on a terminal: exit 3 before sending',
    argv: ['api', 'GET', '/api/me'],
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
    name: '--no-auth to an endpoint that needs the key: the service refuses, exit 3',
    argv: ['api', 'GET', '/api/me', '--no-auth'],
    tty: false,
    wantCode: 3,
    wantStdout: '',
    wantStderr: lines(
      `{"code":"invalid_api_key","status":401,"title":"Invalid API key","detail":"The API key is missing or invalid.","retryable":false,"hint":"${NO_KEY_HINT}"}`,
    ),
  },
  {
    name: 'a problem from the service piped: its code and detail, exit 2',
    argv: ['api', 'POST', '/api/search', '--body', '{"query":"shoes","include":["domain"]}'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"invalid_request","status":400,"title":"Invalid request","detail":"include must be a comma-separated string","retryable":false,"hint":"Do not retry unchanged; fix the request first."}',
    ),
  },
  {
    name: 'an endpoint that does not exist: exit 2, pointing to api --help and the endpoints',
    argv: ['api', 'GET', '/api/nope'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: No such endpoint (unknown_endpoint, HTTP 404)',
      '  GET /api/nope: the service answered 404 (not_found): there is no endpoint at /api/nope',
      `  ${ENDPOINTS_HINT}`,
    ),
  },
  {
    name: 'a method the endpoint does not have, piped: exit 2, the same pointer',
    argv: ['api', 'DELETE', '/api/me'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      JSON.stringify({
        code: 'unknown_endpoint',
        status: 405,
        title: 'Method not allowed',
        detail:
          'DELETE /api/me: the service answered 405 (invalid_request): DELETE is not allowed on /api/me; use GET',
        retryable: false,
        hint: ENDPOINTS_HINT,
      }),
    ),
  },
  {
    name: 'a query parameter named constructor or __proto__ is sent like any other',
    argv: ['api', 'GET', '/api/me', '--query', 'constructor=x', '--query', '__proto__=y'],
    tty: false,
    wantCode: 0,
    wantStdout: ACCOUNT,
    wantStderr: '',
  },
  {
    name: 'an absolute URL: exit 2, the key goes only to the base URL',
    argv: ['api', 'GET', 'https://evil.example/api/me'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  "https://evil.example/api/me" is a URL; give the path only (the base URL comes from --base-url).',
      '  Example: company-data api GET /api/me',
    ),
  },
  {
    name: 'a path leaving /api/ with "..": exit 2',
    argv: ['api', 'GET', '/api/../_sandbox/balances'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"usage_error","status":0,"title":"Usage error","detail":"the path must not contain \\".\\" or \\"..\\" segments, got \\"/api/../_sandbox/balances\\".","retryable":false,"hint":""}',
    ),
  },
  {
    name: "a body that is not JSON: exit 2 with the parser's message, nothing sent",
    argv: ['api', 'POST', '/api/search', '--body', '{"query":"shoes","limit":1'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      `  --body is not valid JSON: ${parseError('{"query":"shoes","limit":1')}`,
    ),
  },
  {
    name: 'a body on a GET: exit 2',
    argv: ['api', 'GET', '/api/me', '--body', '{}'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines('error: Usage error (usage_error)', '  a GET request cannot carry --body; use POST.'),
  },
  {
    name: 'a --query without "=": exit 2',
    argv: ['api', 'GET', '/api/me', '--query', 'products'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines('error: Usage error (usage_error)', '  --query wants name=value, got "products".'),
  },
  {
    name: 'an unknown method: exit 2 from the argument parser',
    argv: ['api', 'FETCH', '/api/me'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine(
      `command-argument value 'FETCH' is invalid for argument 'method'. method must be one of GET, POST, PUT, PATCH, DELETE, got "FETCH"`,
    ),
  },
];

describe('api', () => {
  it.each(cases)('$name', expectCase);
});
