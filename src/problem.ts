// Every failure, local or remote, becomes one Problem. Its code decides the retry, the exit
// code (DESIGN.md table) and the "what to do next" hint, in this one place.
import { catalogEntry } from './error-catalog.js';

/** Where a problem came from: the service's own problem body, the transport, or the client. */
export type ProblemSource = 'server' | 'network' | 'client';

/** Client-side codes that are not in the service's catalog. */
export type LocalCode =
  | 'usage_error' // bad flags or arguments
  | 'invalid_input' // unreadable or malformed input file
  | 'invalid_domain' // a value that is not a domain
  | 'config_error' // missing base URL, bad config file, unsafe permissions
  | 'insecure_http' // a key would go over plain http to a non-loopback host
  | 'unexpected_response' // a body that is not what the contract says (HTML, truncated, not JSON)
  | 'network_error' // connection refused, reset, DNS
  | 'timeout' // no headers or body progress within --timeout, or the call deadline passed
  | 'retry_after_too_long' // Retry-After asks for more than we are willing to sleep
  | 'redirect_refused' // a redirect we will not follow with the key
  | 'untrusted_certificate' // the server's certificate failed verification (issuer, dates, host)
  | 'proxy_auth_required' // the proxy answered 407
  | 'proxy_unreachable' // no connection could be made to the proxy
  | 'proxy_refused' // the proxy answered CONNECT with a status other than 200 (and 407)
  | 'http1_refused' // the server speaks HTTP/2 only
  | 'unknown_endpoint' // `api` with a path (404) or method (405) the service does not have
  | 'unexpected_fields' // a batch answer with fields outside the columns its first answer decided
  | 'budget_exhausted' // the --budget of a batch is reached (or --budget-month, or mcp's --allow-spend)
  | 'charge_above_hold' // an answer reported a charge above what was held for it: the caps cannot be trusted
  | 'spending_not_allowed' // a paid tool called on a read-only `company-data mcp` (no --allow-spend)
  | 'confirmation_required' // an mcp paid call above --confirm-above without the user's confirmation token
  | 'confirmation_declined' // the user declined (or dismissed) an mcp paid call's confirmation
  | 'too_many_failures' // a batch stopped after a long run of consecutive failures
  | 'interrupted' // SIGINT / SIGTERM
  | 'run_busy' // another process is running the same batch (the same input, output and options)
  | 'store_busy' // store clear or prune while a batch run holds the store
  | 'store_unavailable' // the result store cannot be opened or read (not a store, damaged, no access)
  | 'store_too_new' // the result store was written by a newer release (a higher schema version)
  | 'output_closed' // the reader of stdout went away (`| head`) before a batch was written
  | 'write_failed' // stdout, an output file or the result store refused a write (full disk, I/O error)
  | 'internal_bug'; // anything we did not foresee

/**
 * The title of each local code, used wherever a problem of that code is made without one: one
 * code, one title (a batch and a paged search stopped by --budget both say "Budget reached").
 */
const LOCAL_TITLES: Partial<Record<LocalCode, string>> = {
  usage_error: 'Usage error',
  config_error: 'Configuration error',
  insecure_http: 'Insecure HTTP refused',
  unexpected_response: 'Unexpected response',
  retry_after_too_long: 'Service asked to wait too long',
  redirect_refused: 'Redirect refused',
  budget_exhausted: 'Budget reached',
  charge_above_hold: 'Charge above what was held',
  too_many_failures: 'Too many failures',
  interrupted: 'Interrupted',
  internal_bug: 'Unexpected failure',
};

export interface ProblemInit {
  code: string;
  status?: number;
  title?: string;
  detail?: string;
  retryable?: boolean;
  source?: ProblemSource;
  /** Seconds the server asked us to wait (Retry-After), when it said so. */
  retryAfterSeconds?: number;
  /** Extra sentence appended to the hint (for example the command that resumes a batch). */
  hint?: string;
  /**
   * What to do next, in place of the code's own sentence: where the options in force make that
   * sentence untrue (with --no-store nothing is reused from the store).
   */
  remedy?: string;
  cause?: unknown;
}

export class Problem extends Error {
  readonly code: string;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly retryable: boolean;
  readonly source: ProblemSource;
  readonly retryAfterSeconds?: number;
  readonly extraHint?: string;
  readonly remedy?: string;

  constructor(init: ProblemInit) {
    const entry = catalogEntry(init.code);
    const title =
      init.title ?? entry?.title ?? LOCAL_TITLES[init.code as LocalCode] ?? init.code.replaceAll('_', ' ');
    super(init.detail ? `${title}: ${init.detail}` : title, init.cause ? { cause: init.cause } : undefined);
    this.name = 'Problem';
    this.code = init.code;
    this.status = init.status ?? entry?.http_status ?? 0;
    this.title = title;
    this.detail = init.detail ?? entry?.detail ?? '';
    this.retryable = init.retryable ?? entry?.retryable ?? false;
    this.source = init.source ?? (entry ? 'server' : 'client');
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.extraHint = init.hint;
    this.remedy = init.remedy;
  }

  get exitCode(): number {
    return exitCodeFor(this);
  }

  get hint(): string {
    const base = this.remedy ?? hintFor(this);
    return this.extraHint ? `${base} ${this.extraHint}`.trim() : base;
  }

  /** The machine-readable form written to stderr with -o json / ndjson. */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      status: this.status,
      title: this.title,
      detail: this.detail,
      retryable: this.retryable,
      hint: this.hint,
    };
  }
}

export function isProblem(value: unknown): value is Problem {
  return value instanceof Problem;
}

export function usageError(detail: string, hint?: string): Problem {
  return new Problem({ code: 'usage_error', title: 'Usage error', detail, hint, source: 'client' });
}

const KEY_CODES = new Set(['invalid_api_key', 'api_key_restricted', 'upgrade_required']);
const CREDIT_CODES = new Set([
  'insufficient_credits',
  'max_credits_exceeded',
  'budget_exhausted',
  'charge_above_hold',
]);
/**
 * Set-up mistakes on the way to the service: no retry can fix them and the user can, so each is
 * named with its cause, tried once, and exits 2 (docs/contract.md, "Set-up mistakes").
 */
export const SETUP_CODES: ReadonlySet<string> = new Set([
  'untrusted_certificate',
  'proxy_auth_required',
  'proxy_unreachable',
  'proxy_refused',
  'http1_refused',
]);
const INPUT_CODES = new Set([
  'usage_error',
  'invalid_input',
  'invalid_domain',
  'config_error',
  'insecure_http',
  'redirect_refused',
  'unexpected_fields',
  'store_unavailable',
  'store_too_new',
  'unknown_endpoint',
  ...SETUP_CODES,
]);
const UNAVAILABLE_CODES = new Set([
  'unexpected_response',
  'unreadable_answer', // a found answer whose layout the client does not know (src/api/unreadable.ts)
  'network_error',
  'timeout',
  'retry_after_too_long',
  'too_many_failures',
  'store_lost', // the shared store's connection was lost mid-run (src/store/postgres.ts)
]);

/** What a run wrote could not be written: its own exit code, so a script can tell it apart. */
const OUTPUT_CODES = new Set(['output_closed', 'write_failed']);

/** The exit code table of DESIGN.md. */
export function exitCodeFor(p: Pick<Problem, 'code' | 'status'>): number {
  if (p.code === 'interrupted') return 130;
  if (p.code === 'run_busy' || p.code === 'store_busy') return 7;
  if (OUTPUT_CODES.has(p.code)) return 8;
  if (KEY_CODES.has(p.code)) return 3;
  if (CREDIT_CODES.has(p.code)) return 4;
  if (INPUT_CODES.has(p.code)) return 2;
  if (UNAVAILABLE_CODES.has(p.code)) return 5;
  if (p.status === 401 || p.status === 403) return 3;
  if (p.status === 429 || p.status >= 500) return 5;
  if (p.status === 400 || p.status === 413 || p.status === 415 || p.status === 422) return 2;
  return 1;
}

const HINTS: Record<string, string> = {
  invalid_api_key:
    'Replace the key: set COMPANY_DATA_API_KEY, pass --api-key-file, or run `company-data config set-key`.',
  api_key_restricted:
    'Use a key that is permitted for this action (check `company-data me` for its capabilities).',
  upgrade_required: 'Choose fields available on your plan (see `company-data fields`) or upgrade the plan.',
  insufficient_credits:
    'Top up the balance or use a key with enough credits; `company-data me` shows the balance.',
  max_credits_exceeded:
    'Raise --max-credits or select fewer products (see `company-data products` for costs).',
  invalid_filter: 'Check filter names and values with `company-data fields`.',
  invalid_field: 'Check field names with `company-data fields`.',
  invalid_product: 'Check product ids with `company-data products`.',
  field_not_in_product:
    'Add the product that owns the field to --products, or drop the field from --include.',
  product_without_visible_fields:
    'Include at least one field of every selected product, or select fewer products.',
  field_not_available_for_capability:
    'That field is only available from enrichment: use `company-data enrich --products <its product>`.',
  invalid_exclude_domains: 'Exclusions must be at most 20,000 domains or http(s) URLs.',
  request_too_large: 'Send fewer exclusions (the body must stay under 5 MB).',
  unsupported_media_type: 'This is a client bug; please report it.',
  search_limit_exceeded:
    'Narrow the search: use fewer query terms, fewer filter values, or a smaller --limit, then try again.',
  search_contract_error: 'Do not retry unchanged; simplify the query or filters and try again.',
  rate_limited: 'Wait for the Retry-After period, then try again (lower --concurrency for batches).',
  budget_exhausted:
    'Raise --budget (or --budget-month) and re-run the same command; answers already bought are reused from the store at no cost.',
  interrupted: 'Re-run the same command to resume.',
  charge_above_hold:
    'Check `company-data spend` and the account balance with the service; re-run only once the service (or a proxy in front of it) reports charges within max_credits.',
  run_busy: 'Wait for the other run to finish, or give this one another --output.',
  store_busy:
    'Wait for the run to finish (or stop it: it resumes where it stopped), then run this command again.',
  output_closed:
    'Write the rows to a file with --output (or let the reader take them all); a batch resumes when re-run.',
  write_failed:
    'Free some space (or fix the cause named above) and run the command again; a batch resumes where it stopped.',
  config_error: 'Run `company-data config show` to see which settings are in effect.',
  insecure_http:
    'Use https://, or pass --allow-insecure-http if you really mean to send the key in clear text.',
  redirect_refused: 'Point --base-url at the final address of the service.',
  unexpected_fields: 'Name the products to write with --products (or the fields with --include) and re-run.',
  untrusted_certificate:
    'If the service, or a proxy that inspects TLS, uses a private certificate authority, trust it with NODE_EXTRA_CA_CERTS=/path/to/ca.pem (an expired certificate, or one for another host, must be fixed on the server); --allow-insecure-http is not the fix, and certificate checks always stay on.',
  proxy_auth_required:
    "Put the proxy's user name and password in the proxy URL, as in HTTPS_PROXY=http://user:password@proxy.example.com:3128 (percent-encode any @, : or / in them).",
  proxy_unreachable:
    'Start the proxy, correct the proxy variable, or unset it (or list the service in NO_PROXY) to connect directly.',
  proxy_refused:
    "Have the proxy allow CONNECT to the service's host and port (many allow port 443 only), correct the proxy variable, or list the service's host in NO_PROXY to connect directly.",
  http1_refused:
    "Point --base-url at an address that accepts HTTP/1.1 (the service's documented URL), or have the server accept HTTP/1.1 too.",
  unknown_endpoint:
    'See `company-data api --help` for the endpoints: GET /api/me, /api/products, /api/fields, /api/errors, /api/domains/<domain>, /api/lookalike/<domain>, and GET or POST /api/search.',
  too_many_failures: 'The service looks unavailable; re-run the same command later to resume.',
  internal_bug: 'This is a bug in company-data; re-run with --verbose and report the output.',
};

/** One sentence of what to do next, from the spec's handling-by-status rules. */
export function hintFor(p: Pick<Problem, 'code' | 'status' | 'retryAfterSeconds'>): string {
  if (p.code === 'retry_after_too_long' && p.retryAfterSeconds !== undefined) {
    const when = new Date(Date.now() + p.retryAfterSeconds * 1000).toISOString();
    return `The service asked to wait ${p.retryAfterSeconds}s; try again after ${when}.`;
  }
  const known = Object.hasOwn(HINTS, p.code) ? HINTS[p.code] : undefined;
  if (known) return known;
  if (p.status === 400 || p.status === 413 || p.status === 415 || p.status === 422)
    return 'Do not retry unchanged; fix the request first.';
  if (p.status === 401) return HINTS.invalid_api_key;
  if (p.status === 403) return 'Use a key with access, or a plan with the field or the balance.';
  if (p.status === 429) return HINTS.rate_limited;
  if (
    p.status >= 500 ||
    p.code === 'network_error' ||
    p.code === 'timeout' ||
    p.code === 'unexpected_response'
  )
    return 'The service is temporarily unavailable; try again later (retries are automatic, see --retries).';
  return '';
}
