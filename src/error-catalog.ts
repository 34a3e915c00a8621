// The error catalog of contract 2026-08-26, as published by GET /api/errors.
// The CLI ships this copy so it can decide retries without a network round trip;
// the sandbox serves the same table. Every entry has charged: false (spec, charging rule 4).

export const CONTRACT_VERSION = '2026-08-26';
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ErrorCatalogEntry {
  code: string;
  http_status: number;
  title: string;
  detail: string;
  retryable: boolean;
  charged: boolean;
}

type Row = [code: string, status: number, title: string, detail: string, retryable: boolean];

const rows: Row[] = [
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

export const ERROR_CATALOG: readonly ErrorCatalogEntry[] = rows.map(
  ([code, http_status, title, detail, retryable]) => ({
    code,
    http_status,
    title,
    detail,
    retryable,
    charged: false,
  }),
);

const byCode = new Map(ERROR_CATALOG.map((e) => [e.code, e]));

export function catalogEntry(code: string): ErrorCatalogEntry | undefined {
  return byCode.get(code);
}
