// `errors`: the service's problem codes: a table under the contract line on a terminal, the
// catalog as received piped, NDJSON and CSV.
import { describe, it } from 'vitest';
import { CLOSED_URL, type CommandCase, expectCase, lines, usageLine } from '../helpers/command-cases.js';

type Entry = [code: string, status: number, title: string, detail: string, retryable: boolean];

// The catalog of contract 2026-08-26 as the sandbox serves it (every entry has charged: false).
const ENTRIES: Entry[] = [
  ['invalid_api_key', 401, 'Invalid API key', 'The API key is missing or invalid.', false],
  ['invalid_field', 400, 'Invalid field', 'A requested field does not exist.', false],
  [
    'field_not_available_for_capability',
    400,
    'Field not available for this capability',
    'The field is known but not exposed by this capability; use the domain endpoint and select its product.',
    false,
  ],
  ['invalid_product', 400, 'Invalid product', 'A requested product does not exist.', false],
  [
    'field_not_in_product',
    400,
    'Field not in selected products',
    'An included field belongs to a product that is not selected.',
    false,
  ],
  [
    'product_without_visible_fields',
    400,
    'Product without visible fields',
    'include was given and a selected product exposes none of the included fields.',
    false,
  ],
  [
    'max_credits_exceeded',
    400,
    'Maximum credits exceeded',
    'The selected products could cost more than max_credits.',
    false,
  ],
  ['invalid_filter', 400, 'Invalid filter', 'A filter is not in the catalog.', false],
  ['invalid_request', 400, 'Invalid request', 'The request parameters cannot be parsed.', false],
  [
    'invalid_exclude_domains',
    400,
    'Invalid exclude_domains',
    'exclude_domains must be a JSON array of at most 20,000 domains or HTTP(S) URLs.',
    false,
  ],
  ['upgrade_required', 403, 'Upgrade required', 'A field is not available on the current plan.', false],
  [
    'insufficient_credits',
    403,
    'Insufficient credits',
    'The request needs more credits than are available.',
    false,
  ],
  ['api_key_restricted', 403, 'API key restricted', 'The API key is not permitted for this action.', false],
  [
    'domain_not_found',
    200,
    'Domain not found',
    'No record exists for the domain; found is false and nothing is charged.',
    false,
  ],
  [
    'lookalike_not_available',
    200,
    'Lookalike not available',
    'No candidate set exists for the seed; found is false and nothing is charged.',
    false,
  ],
  [
    'unsupported_media_type',
    415,
    'Unsupported media type',
    'POST /api/search requires Content-Type: application/json.',
    false,
  ],
  ['request_too_large', 413, 'Request too large', 'The JSON request body is larger than 5 MB.', false],
  ['rate_limited', 429, 'Rate limited', 'Too many requests in a short window; wait for Retry-After.', true],
  [
    'exclusion_filter_mismatch',
    503,
    'Exclusion filter mismatch',
    'Exclusion verification found an inconsistent backend result; nothing was returned or charged.',
    true,
  ],
  [
    'catalog_refresh_in_progress',
    503,
    'Catalog refresh in progress',
    'The catalog changed during the request; retry the same operation.',
    true,
  ],
  ['search_unavailable', 503, 'Search unavailable', 'The search service is temporarily unavailable.', true],
  [
    'search_capability_unavailable',
    503,
    'Search capability unavailable',
    'A required search capability is temporarily unavailable.',
    true,
  ],
  [
    'search_timeout',
    504,
    'Search timeout',
    'The search did not finish within its bounded execution time.',
    true,
  ],
  [
    'search_limit_exceeded',
    422,
    'Search limit exceeded',
    'The search exceeds a bounded engine limit.',
    false,
  ],
  [
    'search_contract_error',
    502,
    'Search contract error',
    'The generated request was rejected by the search contract.',
    false,
  ],
  [
    'search_upstream_error',
    502,
    'Search upstream error',
    'The search service could not complete the request.',
    true,
  ],
  ['internal_error', 500, 'Internal error', 'The request failed before completion.', true],
];

const entries = ENTRIES.map(([code, http_status, title, detail, retryable]) => ({
  code,
  http_status,
  title,
  detail,
  retryable,
  charged: false,
}));

const CATALOG = {
  contract_version: '2026-08-26',
  content_type: 'application/problem+json',
  errors: entries,
};

const cases: CommandCase[] = [
  {
    name: 'on a terminal: the contract line, then code, status, retryable and title',
    argv: ['errors'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      'Contract 2026-08-26 (application/problem+json)',
      '┌────────────────────────────────────┬────────┬───────────┬────────────────────────────────────────┐',
      '│ code                               │ http   │ retryable │ title                                  │',
      '│                                    │ status │           │                                        │',
      '├────────────────────────────────────┼────────┼───────────┼────────────────────────────────────────┤',
      '│ invalid_api_key                    │ 401    │ no        │ Invalid API key                        │',
      '│ invalid_field                      │ 400    │ no        │ Invalid field                          │',
      '│ field_not_available_for_capability │ 400    │ no        │ Field not available for this capabili… │',
      '│ invalid_product                    │ 400    │ no        │ Invalid product                        │',
      '│ field_not_in_product               │ 400    │ no        │ Field not in selected products         │',
      '│ product_without_visible_fields     │ 400    │ no        │ Product without visible fields         │',
      '│ max_credits_exceeded               │ 400    │ no        │ Maximum credits exceeded               │',
      '│ invalid_filter                     │ 400    │ no        │ Invalid filter                         │',
      '│ invalid_request                    │ 400    │ no        │ Invalid request                        │',
      '│ invalid_exclude_domains            │ 400    │ no        │ Invalid exclude_domains                │',
      '│ upgrade_required                   │ 403    │ no        │ Upgrade required                       │',
      '│ insufficient_credits               │ 403    │ no        │ Insufficient credits                   │',
      '│ api_key_restricted                 │ 403    │ no        │ API key restricted                     │',
      '│ domain_not_found                   │ 200    │ no        │ Domain not found                       │',
      '│ lookalike_not_available            │ 200    │ no        │ Lookalike not available                │',
      '│ unsupported_media_type             │ 415    │ no        │ Unsupported media type                 │',
      '│ request_too_large                  │ 413    │ no        │ Request too large                      │',
      '│ rate_limited                       │ 429    │ yes       │ Rate limited                           │',
      '│ exclusion_filter_mismatch          │ 503    │ yes       │ Exclusion filter mismatch              │',
      '│ catalog_refresh_in_progress        │ 503    │ yes       │ Catalog refresh in progress            │',
      '│ search_unavailable                 │ 503    │ yes       │ Search unavailable                     │',
      '│ search_capability_unavailable      │ 503    │ yes       │ Search capability unavailable          │',
      '│ search_timeout                     │ 504    │ yes       │ Search timeout                         │',
      '│ search_limit_exceeded              │ 422    │ no        │ Search limit exceeded                  │',
      '│ search_contract_error              │ 502    │ no        │ Search contract error                  │',
      '│ search_upstream_error              │ 502    │ yes       │ Search upstream error                  │',
      '│ internal_error                     │ 500    │ yes       │ Internal error                         │',
      '└────────────────────────────────────┴────────┴───────────┴────────────────────────────────────────┘',
    ),
    wantStderr: '',
  },
  {
    name: 'piped: the catalog document as the service sent it',
    argv: ['errors'],
    tty: false,
    wantCode: 0,
    wantStdout: `${JSON.stringify(CATALOG, null, 2)}\n`,
    wantStderr: '',
  },
  {
    name: '-o ndjson piped: one problem code per line, without the envelope',
    argv: ['errors', '-o', 'ndjson'],
    tty: false,
    wantCode: 0,
    wantStdout: entries.map((e) => `${JSON.stringify(e)}\n`).join(''),
    wantStderr: '',
  },
  {
    name: '-o csv on a terminal: every column, a detail with a comma quoted',
    argv: ['errors', '-o', 'csv'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      'code,http_status,title,detail,retryable,charged',
      ...ENTRIES.map(
        ([code, status, title, detail, retryable]) =>
          `${code},${status},${title},${detail.includes(',') ? `"${detail}"` : detail},${retryable},false`,
      ),
    ),
    wantStderr: '',
  },
  {
    name: 'a service that is not there: exit 5 with the retries spent',
    argv: ['errors', '--retries', '0'],
    tty: true,
    env: { COMPANY_DATA_BASE_URL: CLOSED_URL },
    wantCode: 5,
    wantStdout: '',
    wantStderr: lines(
      'error: network error (network_error)',
      '  Connection refused by 127.0.0.1:CLOSED; is the service running there?',
      '  The service is temporarily unavailable; try again later (retries are automatic, see --retries).',
    ),
  },
  {
    name: 'an invalid --retries piped: exit 2 naming the flag, as text',
    argv: ['errors', '--retries', '11'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    // Text although stdout is a pipe: the settings that would have chosen JSON failed to resolve,
    // and reportFailure (src/cli.ts) then knows only an explicit --format.
    wantStderr: usageLine('--retries: retries must be a whole number from 0 to 10, got "11"', ''),
  },
];

describe('errors', () => {
  it.each(cases)('$name', expectCase);
});
