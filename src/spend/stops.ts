// Which failures stop a run of many requests (a batch, search paging, lookalike of many seeds),
// decided once for all of them:
//
//   abort  every other request would fail the same way (the key, the request as built, a set-up
//          mistake): cancel what is in flight and end with the problem's exit code (2 or 3);
//   stop   no further request should be sent (credits, a cap, a Retry-After longer than the client
//          waits): let what is in flight finish, mark the rest as not requested, exit 4 or 5;
//   item   the failure belongs to this one request (a domain, a seed): the run goes on.
import { isProblem, type Problem, SETUP_CODES } from '../problem.js';

export type Verdict = 'abort' | 'stop' | 'item';

/** Why a run stopped sending requests while it still accounts for every item. */
export type StopReason =
  | 'budget_exhausted'
  | 'insufficient_credits'
  | 'max_credits_exceeded'
  | 'too_many_failures'
  | 'retry_after_too_long'
  | 'charge_above_hold'
  | 'interrupted';

/** The request as built is refused, or the set-up is wrong: the same for every item. */
const ABORT_CODES: ReadonlySet<string> = new Set([
  'invalid_api_key',
  'api_key_restricted',
  'upgrade_required',
  'invalid_product',
  'invalid_field',
  'field_not_in_product',
  'product_without_visible_fields',
  'field_not_available_for_capability',
  'invalid_filter',
  'config_error',
  'insecure_http',
  'usage_error',
  'store_unavailable',
  'store_too_new',
  ...SETUP_CODES,
]);

const STOP_CODES: ReadonlySet<string> = new Set<StopReason>([
  'budget_exhausted',
  'insufficient_credits',
  'max_credits_exceeded',
  'retry_after_too_long',
  'charge_above_hold',
]);

export function verdictOf(problem: Problem): Verdict {
  if (ABORT_CODES.has(problem.code)) return 'abort';
  if (STOP_CODES.has(problem.code)) return 'stop';
  return 'item';
}

/** The stop reason of a problem whose verdict is `stop`. */
export function stopReasonOf(problem: Problem): StopReason | undefined {
  return STOP_CODES.has(problem.code) ? (problem.code as StopReason) : undefined;
}

/**
 * Whether a failure says the service is not answering (it counts towards too_many_failures): a
 * 4xx about one item says the service is up. A redirect of every call must not fail a file row by
 * row either.
 */
export function isUnavailable(error: unknown): boolean {
  if (!isProblem(error)) return true;
  return error.exitCode === 5 || error.code === 'internal_bug' || error.code === 'redirect_refused';
}

/**
 * The exit code a run of many requests ends with when it reports rather than throws: the stop's
 * own (4 for credits and caps, 5 for the service), else 6 when some items carry an error, else 0.
 */
export function runExitCode(itemErrors: number, stopped?: Problem): number {
  if (stopped) return stopped.exitCode;
  return itemErrors > 0 ? 6 : 0;
}
