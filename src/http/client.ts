// The one HTTP layer: auth, deadlines, retries with backoff, problems, credits, verbose logging,
// over one undici dispatcher (src/http/transport.ts). It never formats for humans beyond one-line
// log and problem text, and draws nothing: the spinner belongs to the command layer
// (src/spinning-client.ts), which reads RequestOptions.spinner.
import { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
import { Problem } from '../problem.js';
import { oneLine } from '../text.js';
import type { ApiResponse, Client, Config, Credits, RequestOptions } from '../types.js';
import { readCredits } from './credits.js';
import { decodeBody } from './decode.js';
import { isRateRefusal } from './outcome.js';
import { makeRedactor, parseSuccess, problemFromError, problemFromResponse } from './problems.js';
import { proxyFor, proxyRoute, proxySettings } from './proxy-env.js';
import { type RateLimits, readRateLimits } from './rate-limit-headers.js';
import {
  parseRetryAfter,
  type RetryPolicy,
  retryDelayMs,
  retryPolicyFrom,
  THROTTLE_STATUSES,
} from './retry.js';
import { authHeaders, keyFor, pathAndQuery, resolveBaseUrl } from './target.js';
import { CONNECT_TIMEOUT_MS, createDispatcher } from './transport.js';

export { checkContractVersion } from './contract.js';
export { readCredits } from './credits.js';
export { parseRetryAfter, type RetryPolicy, retryDelayMs } from './retry.js';

export interface ClientOptions {
  /** Where each attempt is logged (already one line, the key redacted); no logging without it. */
  log?: (line: string) => void;
  /** Environment for proxies and retry settings; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Backoff settings; tests shrink them (the binary reads COMPANY_DATA_RETRY_*_MS instead). */
  retryPolicy?: Partial<RetryPolicy>;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Never through a proxy, whatever the environment says (the in-process sandbox). */
  direct?: boolean;
  /**
   * How long a connection may take, and so what each attempt adds to the call's deadline;
   * CONNECT_TIMEOUT_MS (10 s) by default. Tests shrink it to reach the deadline in a second.
   */
  connectTimeoutMs?: number;
}

interface Attempt {
  problem?: Problem;
  response?: ApiResponse;
  retryAfterMs?: number;
}

/** One call in progress, across its attempts. */
interface Call {
  base: URL;
  /** Path and query, the base URL's path prefix included. */
  path: string;
  /** When the call's deadline passes (Date.now() time). */
  deadlineAt: number;
  /** Aborted at the deadline or by the caller's signal: what every attempt and wait listens to. */
  signal: CallSignal;
  callerSignal?: AbortSignal;
}

/**
 * What every attempt and wait of one call listens to: emits 'abort' once, at the call's deadline
 * or when the caller's signal aborts. Not AbortSignal.timeout plus AbortSignal.any: a timeout
 * signal's timer cannot be cleared, so every call of a batch would leave a timer pending for the
 * whole deadline (minutes), and in Node 20 a long-lived signal given to AbortSignal.any (a batch's
 * drain signal, shared by every lookup) keeps an entry for each signal made from it. Not an
 * AbortController either: undici takes an EventEmitter as a request's signal, and a batch makes
 * one per call; an AbortSignal and undici's listener on it cost about a tenth of a batch row's
 * CPU (docs/performance.md, "Decisions").
 */
class CallSignal extends EventEmitter {
  aborted = false;
  timedOut = false;
  private readonly timer: NodeJS.Timeout;
  private readonly onCallerAbort = () => this.abort();

  constructor(
    deadlineMs: number,
    private readonly caller: AbortSignal | undefined,
  ) {
    super();
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.abort();
    }, deadlineMs);
    // An open socket keeps the process alive on its own; the deadline must not.
    this.timer.unref();
    caller?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  private abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }

  /** Releases the deadline's timer and the listener on the caller's signal. */
  release(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
  }

  /** Resolves after `ms`, or rejects as soon as the call is aborted. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(new Error('the call was aborted'));
      };
      const timer = setTimeout(() => {
        this.off('abort', onAbort);
        resolve();
      }, ms);
      if (this.aborted) onAbort();
      else this.once('abort', onAbort);
    });
  }
}

/**
 * The deadline of one call across all its attempts and waits. Each attempt may take a connect
 * plus an idle timeout, and each wait up to the backoff cap; a Retry-After that does not fit in
 * what is left ends the call instead of overrunning it.
 */
export function callDeadlineMs(
  timeoutMs: number,
  retries: number,
  policy: RetryPolicy,
  connectMs: number = CONNECT_TIMEOUT_MS,
): number {
  return (retries + 1) * (timeoutMs + connectMs) + retries * policy.capMs;
}

export function createClient(config: Config, options: ClientOptions = {}): Client {
  const env = options.env ?? process.env;
  const policy = retryPolicyFrom(env, options.retryPolicy);
  const redact = makeRedactor(config.apiKey?.value);
  const timeoutMs = Math.max(1, Math.round(config.timeoutMs.value));
  const retries = Math.max(0, Math.floor(config.retries.value) || 0);
  const connectMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const deadlineMs = callDeadlineMs(timeoutMs, retries, policy, connectMs);
  const proxies = options.direct ? {} : proxySettings(env);
  let dispatcher: Dispatcher | undefined;
  let lastCredits: Credits = {};
  const rateWatchers = new Set<(limits: RateLimits) => void>();
  let resolvedBase: { raw: string | undefined; url: URL } | undefined;

  const verbose = options.log !== undefined;
  const log = (message: string) => {
    if (options.log) options.log(redact(oneLine(message)));
  };

  // The key's checks and its header, once per base URL rather than per call.
  let auth: { base: URL; headers: Record<string, string> } | undefined;
  const authFor = (base: URL): Record<string, string> => {
    if (auth?.base !== base)
      auth = { base, headers: authHeaders(config, keyFor(config, base, proxyFor(base, proxies))) };
    return auth.headers;
  };

  // The base URL is parsed once, not per call (a batch makes hundreds of thousands of calls).
  const baseUrl = (): URL => {
    const raw = config.baseUrl?.value;
    if (resolvedBase && resolvedBase.raw === raw) return resolvedBase.url;
    const url = resolveBaseUrl(config, redact);
    resolvedBase = { raw, url };
    return url;
  };

  /** The problem that ends a call whose signal fired: its deadline, or the caller's abort. */
  const ended = (call: Call): Problem | undefined => {
    if (call.signal.timedOut)
      return new Problem({
        code: 'timeout',
        detail: `The call to ${call.base.host} did not finish within ${Math.round(deadlineMs / 1000)}s across all attempts.`,
        retryable: false,
        source: 'network',
      });
    if (call.callerSignal?.aborted) return abortProblem(call.callerSignal.reason);
    return undefined;
  };

  async function attemptOnce(
    request: RequestOptions,
    call: Call,
    headers: Record<string, string>,
    number: number,
  ): Promise<Attempt> {
    dispatcher ??= createDispatcher({ timeoutMs, connectMs, proxies });
    const started = Date.now();
    const where = verbose ? `${request.method} ${call.base.origin}${call.path}` : '';
    const tag = verbose ? `attempt ${number}/${retries + 1}` : '';
    const progress: { status?: number; received: number } = { received: 0 };
    try {
      const res = await dispatcher.request({
        origin: call.base.origin,
        path: call.path,
        method: request.method,
        headers,
        body: request.bodyJson ?? (request.body === undefined ? undefined : JSON.stringify(request.body)),
        signal: call.signal,
        // Per request as well as on the dispatcher: a proxy's forwarding client (plain http
        // through a proxy) is made by undici without the dispatcher's timeouts.
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const status = res.statusCode;
      progress.status = status;
      const chunks = await readBody(res.body, progress);
      const responseHeaders = flattenHeaders(res.headers);
      if (rateWatchers.size > 0) {
        const limits = readRateLimits(responseHeaders);
        if (limits) for (const watch of rateWatchers) watch(limits);
      }
      const credits = readCredits(responseHeaders, config.creditHeaders);
      if (request.auth) lastCredits = credits;
      if (verbose) {
        const charged = credits.charged === undefined ? '' : `, charged ${credits.charged}`;
        log(`http: ${where} -> ${status} in ${Date.now() - started} ms (${tag}${charged})`);
      }
      const retryAfterMs = parseRetryAfter(responseHeaders['retry-after']);
      // One chunk (most small answers) is taken as it is: Buffer.concat would copy it.
      const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const encoding = responseHeaders['content-encoding'];
      const body = encoding ? await decodeBody(raw, encoding, status) : raw;
      const facts = { status, headers: responseHeaders, body: body.toString('utf8'), url: '' };
      if (status >= 200 && status < 300) {
        const parsed = parseSuccess(facts, redact);
        if ('problem' in parsed) return { problem: parsed.problem, retryAfterMs };
        return {
          response: { status, data: parsed.data, headers: responseHeaders, credits, attempts: number },
        };
      }
      facts.url = redact(`${call.base.origin}${call.path}`);
      return { problem: problemFromResponse(facts, redact), retryAfterMs };
    } catch (error) {
      const ms = Date.now() - started;
      const end = ended(call);
      if (end) {
        log(`http: ${where} -> ${end.code === 'timeout' ? 'timed out' : 'aborted'} after ${ms} ms (${tag})`);
        throw end;
      }
      // A body that could not be decoded.
      if (error instanceof Problem) return { problem: error };
      const problem = problemFromError(
        error,
        {
          target: call.base.host,
          timeoutMs,
          status: progress.status,
          received: progress.received,
          proxy: proxyRoute(call.base, proxies),
        },
        redact,
      );
      log(`http: ${where} -> ${problem.code}: ${problem.detail} after ${ms} ms (${tag})`);
      return { problem };
    }
  }

  async function request<T>(request: RequestOptions): Promise<ApiResponse<T>> {
    const base = baseUrl();
    const path = pathAndQuery(base, request.path, request.query);
    const headers = requestHeaders(request);
    // Every call goes to the base URL's host: the key check needs only its protocol and host name.
    if (request.auth) Object.assign(headers, authFor(base));
    if (request.signal?.aborted) throw abortProblem(request.signal.reason);

    const call: Call = {
      base,
      path,
      deadlineAt: Date.now() + deadlineMs,
      signal: new CallSignal(deadlineMs, request.signal),
      callerSignal: request.signal,
    };
    try {
      return await attemptUntilDone<T>(request, call, headers);
    } finally {
      call.signal.release();
    }
  }

  async function attemptUntilDone<T>(
    request: RequestOptions,
    call: Call,
    headers: Record<string, string>,
  ): Promise<ApiResponse<T>> {
    // Attempts that count against --retries: all of them, except refusals the caller paces.
    let counted = 0;
    for (let number = 1; ; number++) {
      const outcome = await attemptOnce(request, call, headers, number);
      if (outcome.response) return outcome.response as ApiResponse<T>;
      const problem = outcome.problem!;
      if (!problem.retryable) throw problem;
      if (outcome.retryAfterMs !== undefined && outcome.retryAfterMs > policy.maxRetryAfterMs)
        throw retryAfterTooLong(problem, outcome.retryAfterMs);
      // A refusal without Retry-After that the caller paces itself (a batch at its adapted rate):
      // retried at the caller's next turn, without a backoff and without counting.
      const paced =
        outcome.retryAfterMs === undefined && isRateRefusal(problem) && request.pacesRefusals?.() === true;
      if (!paced) counted++;
      if (counted > retries) throw gaveUp(problem, number);
      const delay = paced
        ? 0
        : retryDelayMs(counted - 1, {
            retryAfterMs: outcome.retryAfterMs,
            throttled: problem.status !== undefined && THROTTLE_STATUSES.has(problem.status),
            random: options.random,
            policy,
          });
      if (Date.now() + delay >= call.deadlineAt) throw gaveUp(problem, number);
      log(`http: retrying in ${delay} ms after ${problem.code}`);
      await request.onRetry?.(problem, number, delay);
      await call.signal.wait(delay).catch((error) => {
        throw ended(call) ?? error;
      });
    }
  }

  return {
    request,
    get lastCredits(): Credits {
      return lastCredits;
    },
    watchRateLimits(listener) {
      rateWatchers.add(listener);
      return () => rateWatchers.delete(listener);
    },
    async close() {
      const open = dispatcher;
      dispatcher = undefined;
      await open?.close();
    },
  };
}

/** The chunks of a body, counted as they come (an error message says how much arrived). */
function readBody(body: Dispatcher.ResponseData['body'], progress: { received: number }): Promise<Buffer[]> {
  // Events rather than an async iterator: a batch reads hundreds of thousands of small bodies,
  // and the iterator's promise per chunk was a measurable part of a row's CPU.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      progress.received += chunk.length;
    });
    body.once('end', () => resolve(chunks));
    body.once('error', reject);
  });
}

function requestHeaders(request: RequestOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    const lower = name.toLowerCase();
    // The key only ever comes from the configuration, and only on authenticated calls.
    if (lower === 'authorization' || lower === 'x-api-key') continue;
    headers[lower] = value;
  }
  headers.accept = 'application/json, application/problem+json';
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  return headers;
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** The problem for a call its caller aborted: the caller's own problem, or an interruption. */
function abortProblem(reason: unknown): Problem {
  if (reason instanceof Problem) return reason;
  return new Problem({ code: 'interrupted', title: 'Interrupted', source: 'client' });
}

function copyProblem(problem: Problem, changes: { detail?: string; code?: string }): Problem {
  return new Problem({
    code: changes.code ?? problem.code,
    status: problem.status,
    title: problem.title,
    detail: changes.detail ?? problem.detail,
    retryable: problem.retryable,
    source: problem.source,
    retryAfterSeconds: problem.retryAfterSeconds,
    hint: problem.extraHint,
    // The transport's code: whether the request was sent reads it (src/http/outcome.ts).
    cause: problem.cause,
  });
}

function gaveUp(problem: Problem, attempts: number): Problem {
  if (attempts <= 1) return problem;
  const detail = `${problem.detail}${problem.detail ? ' ' : ''}(gave up after ${attempts} attempts)`;
  return copyProblem(problem, { detail });
}

function retryAfterTooLong(problem: Problem, retryAfterMs: number): Problem {
  const seconds = Math.ceil(retryAfterMs / 1000);
  return new Problem({
    code: 'retry_after_too_long',
    status: problem.status,
    title: 'Service asked to wait too long',
    detail: `${problem.title} (${problem.code}): the service asked to wait ${seconds}s before retrying, longer than company-data waits on its own.`,
    retryable: false,
    source: problem.source,
    retryAfterSeconds: seconds,
  });
}
