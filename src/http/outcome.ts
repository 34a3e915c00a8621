// Whether a failed attempt may have been charged (docs/batch.md, "Credits"). The service charges
// when it answers, whether or not the client is still listening, so an attempt whose answer never
// arrived after it was sent has an unknown outcome. Only what proves otherwise counts as "not
// charged": an answer saying the request was refused, or an error from before it was sent.
import { type Problem, SETUP_CODES } from '../problem.js';
import { CONNECTION_NOT_MADE } from './setup-problems.js';

/** Transport errors from before the request left: the connection was never made. */
const NOT_SENT = new Set([...CONNECTION_NOT_MADE, 'ENETDOWN', 'UND_ERR_CONNECT_TIMEOUT']);
/** Problems the client raises before sending anything (a base URL or a key it refuses). */
const BEFORE_SENDING = new Set(['config_error', 'insecure_http', 'usage_error']);

/**
 * True unless the problem proves nothing was charged. Not charged: a 3xx or 4xx answer (429
 * included), the service's own problem+json whatever its status, any 503 (the service's, or a
 * gateway's page such as nginx's limit_req: a refusal to handle the request, which never reached
 * the service or was turned away by it), a set-up mistake, or a connection that could not be
 * made. Possibly charged: a timeout waiting for the answer, a connection reset or closed after
 * sending, a 2xx that could not be read, any other 5xx that is not the service's problem+json (a
 * gateway's 502 or 504 page, a 500 page: the service behind it may have answered), a call
 * cancelled while in flight.
 */
export function mayHaveBeenCharged(problem: Problem): boolean {
  const { status } = problem;
  if (status >= 300 && status < 500) return false;
  if (status === 503) return false;
  if (status >= 500) {
    const servicesOwn = problem.source === 'server' && problem.code !== 'unexpected_response';
    return !servicesOwn;
  }
  if (status >= 200) return true;
  if (SETUP_CODES.has(problem.code) || BEFORE_SENDING.has(problem.code)) return false;
  return !(problem.source === 'network' && NOT_SENT.has(String(problem.cause)));
}

/**
 * A refusal to go faster: a 429, or a 503 that is not one of the service's own problems (a
 * gateway's limiter). Never charged; a batch retries it at its adapted rate (src/pace.ts).
 */
export function isRateRefusal(problem: Problem): boolean {
  if (problem.status === 429) return true;
  return problem.status === 503 && (problem.source !== 'server' || problem.code === 'unexpected_response');
}
