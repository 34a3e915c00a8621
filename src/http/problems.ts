// Turns whatever came back (a problem body, an HTML page, a cut-off body, a socket error) into
// one Problem. Server text is untrusted: control characters are stripped, long text is cut, and
// the key is redacted before anything is stored on the Problem (redaction at the source).
import { catalogEntry } from '../error-catalog.js';
import { Problem } from '../problem.js';
import { oneLine, stripControl } from '../text.js';
import type { ProxyRoute } from './proxy-env.js';
import { parseRetryAfter } from './retry.js';
import { setupProblem } from './setup-problems.js';

export type Redact = (text: string) => string;

/** Replaces the key, and its URL-encoded form, with *** wherever it appears. */
export function makeRedactor(key: string | undefined): Redact {
  if (!key) return (text) => text;
  const forms = [...new Set([key, encodeURIComponent(key)])].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const form of forms) out = out.split(form).join('***');
    return out;
  };
}

const EXCERPT_MAX = 200;
const TEXT_MAX = 1000;

/** A short one-line excerpt of a body for a message: sanitised, whitespace collapsed, <= 200 chars. */
export function excerpt(body: string, max = EXCERPT_MAX): string {
  const flat = oneLine(body).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function cleanText(value: unknown, redact: Redact, max = TEXT_MAX): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = redact(stripControl(value)).trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export interface ResponseFacts {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
  /** The URL the request went to, already redacted; used to resolve a relative Location. */
  url: string;
}

const SAFE_CODE = /^[A-Za-z0-9_.-]{1,100}$/;

/** The service's code, from `code`, or from the last segment of a problem `type` URI. */
function problemCode(json: Record<string, unknown>): string | undefined {
  if (typeof json.code === 'string' && SAFE_CODE.test(json.code)) return json.code;
  if (typeof json.type === 'string' && json.type.includes('/problems/')) {
    const segment = json.type.slice(json.type.lastIndexOf('/') + 1).replaceAll('-', '_');
    if (SAFE_CODE.test(segment)) return segment;
  }
  return undefined;
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function retryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

function retryAfterSeconds(facts: ResponseFacts): number | undefined {
  const ms = parseRetryAfter(facts.headers['retry-after']);
  return ms === undefined ? undefined : Math.ceil(ms / 1000);
}

/** A problem for a response that is not 2xx. */
export function problemFromResponse(facts: ResponseFacts, redact: Redact): Problem {
  const { status } = facts;
  if (status >= 300 && status < 400) return redirectProblem(facts, redact);
  const json = parseJson(facts.body);
  const code = isObject(json) ? problemCode(json) : undefined;
  if (isObject(json) && code) {
    const entry = catalogEntry(code);
    return new Problem({
      code,
      status,
      title: cleanText(json.title, redact, 200) || undefined,
      detail: cleanText(json.detail, redact) || undefined,
      retryable: entry ? entry.retryable : retryableStatus(status),
      source: 'server',
      retryAfterSeconds: retryAfterSeconds(facts),
    });
  }
  const kind = describeBody(facts, json);
  return new Problem({
    code: 'unexpected_response',
    status,
    title: 'Unexpected response',
    detail: redact(`The service answered HTTP ${status} with ${kind}${bodyExcerpt(facts.body)}.`),
    retryable: retryableStatus(status),
    source: 'server',
    retryAfterSeconds: retryAfterSeconds(facts),
  });
}

/** The parsed body of a 2xx response, or the retryable problem of one that cannot be read. */
export function parseSuccess(facts: ResponseFacts, redact: Redact): { data: unknown } | { problem: Problem } {
  if (facts.status === 204 || (facts.body === '' && facts.headers['content-length'] === '0'))
    return { data: null };
  const json = parseJson(facts.body);
  if (json !== undefined) return { data: json };
  return {
    problem: new Problem({
      code: 'unexpected_response',
      status: facts.status,
      title: 'Unexpected response',
      detail: redact(
        `The service answered HTTP ${facts.status} with ${describeBody(facts, undefined)}${bodyExcerpt(facts.body)}.`,
      ),
      // A cut-off or garbled success is usually a transient proxy or network fault.
      retryable: true,
      source: 'server',
    }),
  };
}

function describeBody(facts: ResponseFacts, json: unknown): string {
  const type = facts.headers['content-type'] ?? '';
  if (facts.body.trim() === '') return 'an empty body';
  if (json !== undefined) return 'JSON that is not a problem';
  if (/html/i.test(type) || /^\s*</.test(facts.body)) return 'an HTML page instead of JSON';
  if (/json/i.test(type)) return 'a truncated or malformed JSON body';
  return `a body that is not JSON (${excerpt(type, 60) || 'no content type'})`;
}

function bodyExcerpt(body: string): string {
  const text = excerpt(body);
  return text ? `: "${text}"` : '';
}

function redirectProblem(facts: ResponseFacts, redact: Redact): Problem {
  const location = facts.headers.location;
  let target = 'an address it did not give (no Location header)';
  if (location) {
    let resolved = location;
    try {
      resolved = new URL(location, facts.url).toString();
    } catch {
      // an unparsable Location is still worth showing as sent
    }
    target = excerpt(redact(resolved), 300);
  }
  return new Problem({
    code: 'redirect_refused',
    status: facts.status,
    title: 'Redirect refused',
    detail: `The service answered HTTP ${facts.status} redirecting to ${target}; company-data does not follow redirects, so the key never goes to another address.`,
    retryable: false,
    source: 'server',
  });
}

/** What went wrong at the transport level, as a code that travels through causes and aggregates. */
export function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const candidate = current as { code?: unknown; errors?: unknown[]; cause?: unknown };
    if (typeof candidate.code === 'string') return candidate.code;
    if (Array.isArray(candidate.errors) && candidate.errors.length > 0) current = candidate.errors[0];
    else current = candidate.cause;
  }
  return undefined;
}

const RETRYABLE_NETWORK = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

export interface ErrorContext {
  /** host:port the request went to. */
  target: string;
  timeoutMs: number;
  /** The HTTP status when the error happened while reading the body. */
  status?: number;
  /** Bytes of body received before the error. */
  received?: number;
  /** The proxy the call went through, when it did. */
  proxy?: ProxyRoute;
}

/** A problem for an error thrown by the transport (before or during the response). */
export function problemFromError(error: unknown, ctx: ErrorContext, redact: Redact): Problem {
  const code = errorCode(error);
  const message = redact(oneLine(error instanceof Error ? error.message : String(error)));
  const seconds = `${Math.round(ctx.timeoutMs / 100) / 10}s`;
  const make = (problemCode: string, detail: string, retryable: boolean) =>
    new Problem({
      code: problemCode,
      status: ctx.status,
      detail: redact(detail),
      retryable,
      source: 'network',
      cause: code,
    });

  if (code === 'UND_ERR_HEADERS_TIMEOUT')
    return make('timeout', `No response from ${ctx.target} within ${seconds} (--timeout).`, true);
  if (code === 'UND_ERR_BODY_TIMEOUT')
    return make(
      'timeout',
      `The response from ${ctx.target} stalled for more than ${seconds} (--timeout).`,
      true,
    );
  if (code === 'UND_ERR_CONNECT_TIMEOUT')
    return make('timeout', `Could not connect to ${ctx.target} within 10s.`, true);

  if (ctx.status !== undefined) {
    // The status line arrived but the body did not: for a success, a fault on the way worth
    // retrying; for a client error, retrying the same request would fail the same way.
    const cutOff = `The response (HTTP ${ctx.status}) was cut off after ${ctx.received ?? 0} bytes${code ? ` (${code})` : ''}.`;
    return new Problem({
      code: 'unexpected_response',
      status: ctx.status,
      title: 'Unexpected response',
      detail: redact(cutOff),
      retryable: ctx.status < 300 || retryableStatus(ctx.status),
      source: 'network',
    });
  }
  const setup = setupProblem(error, code, message, ctx);
  if (setup) return setup;
  if (code === 'ECONNREFUSED')
    return make('network_error', `Connection refused by ${ctx.target}; is the service running there?`, true);
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE' || code === 'UND_ERR_CLOSED')
    return make(
      'network_error',
      `The connection to ${ctx.target} was closed before a complete response (${code}).`,
      true,
    );
  if (code === 'ENOTFOUND')
    return make('network_error', `Cannot resolve the host of ${ctx.target}; check --base-url.`, false);
  if (code && RETRYABLE_NETWORK.has(code))
    return make('network_error', `Network error talking to ${ctx.target} (${code}): ${message}`, true);
  if (code && /CERT|TLS|SSL/i.test(code))
    return make('network_error', `TLS failure talking to ${ctx.target} (${code}): ${message}`, false);
  if (code)
    return make('network_error', `Network error talking to ${ctx.target} (${code}): ${message}`, false);
  return new Problem({
    code: 'internal_bug',
    title: 'Unexpected failure',
    detail: message,
    source: 'client',
  });
}
