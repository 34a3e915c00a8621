// The one HTTP layer: auth, timeouts, retries with backoff, problems, credits, verbose logging.
// It never formats for humans beyond one-line log and problem text (DESIGN.md data flow).
import { oneLine } from '../output/sanitize.js';
import { Problem } from '../problem.js';
import type { ApiResponse, Client, Config, Credits, IO, RequestOptions } from '../types.js';
import { readCredits } from './credits.js';
import { makeRedactor, parseSuccess, problemFromError, problemFromResponse } from './problems.js';
import { parseRetryAfter, type RetryPolicy, retryDelayMs, retryPolicyFrom } from './retry.js';
import { authHeaders, buildUrl, keyFor, resolveBaseUrl } from './target.js';
import { CONNECT_TIMEOUT_MS, openTransport, type Transport } from './transport.js';

export { checkContractVersion } from './contract.js';
export { readCredits } from './credits.js';
export { parseRetryAfter, type RetryPolicy, retryDelayMs } from './retry.js';

export interface ClientOptions {
  /** Backoff settings; tests shrink them (the binary reads COMPANY_DATA_RETRY_*_MS instead). */
  retryPolicy?: Partial<RetryPolicy>;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Environment for proxies and retry settings; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** How long a call may go without a response before the spinner shows. */
  spinnerDelayMs?: number;
}

const SPINNER_DELAY_MS = 300;

interface Attempt {
  problem?: Problem;
  response?: ApiResponse;
  retryAfterMs?: number;
}

/**
 * The deadline of one call across all its attempts and waits. Each attempt may take a connect
 * plus an idle timeout, and each wait up to the backoff cap; a Retry-After that does not fit in
 * what is left ends the call instead of overrunning it.
 */
export function callDeadlineMs(timeoutMs: number, retries: number, policy: RetryPolicy): number {
  return (retries + 1) * (timeoutMs + CONNECT_TIMEOUT_MS) + retries * policy.capMs;
}

export function createClient(config: Config, io: IO, options: ClientOptions = {}): Client {
  const env = options.env ?? process.env;
  const policy = retryPolicyFrom(env, options.retryPolicy);
  const redact = makeRedactor(config.apiKey?.value);
  const timeoutMs = Math.max(1, Math.round(config.timeoutMs.value));
  const retries = Math.max(0, Math.floor(config.retries.value) || 0);
  let transport: Promise<Transport> | undefined;
  let lastCredits: Credits = {};

  const log = (message: string) => {
    if (io.verbose) io.debug(redact(oneLine(message)));
  };

  async function attemptOnce(
    request: RequestOptions,
    url: URL,
    headers: Record<string, string>,
    signal: AbortSignal,
    number: number,
  ): Promise<Attempt> {
    transport ??= openTransport(timeoutMs, env);
    const dispatcher = (await transport).dispatcherFor(url);
    const started = performance.now();
    const where = `${request.method} ${url.toString()}`;
    const tag = `attempt ${number}/${retries + 1}`;
    let status: number | undefined;
    let received = 0;
    try {
      const res = await dispatcher.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal,
      });
      status = res.statusCode;
      const chunks: Buffer[] = [];
      for await (const chunk of res.body) {
        chunks.push(chunk as Buffer);
        received += (chunk as Buffer).length;
      }
      const responseHeaders = flattenHeaders(res.headers);
      const credits = readCredits(responseHeaders);
      if (request.auth) lastCredits = credits;
      const ms = Math.round(performance.now() - started);
      const charged = credits.charged === undefined ? '' : `, charged ${credits.charged}`;
      log(`http: ${where} -> ${status} in ${ms} ms (${tag}${charged})`);
      const facts = {
        status,
        headers: responseHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
        url: redact(url.toString()),
      };
      const retryAfterMs = parseRetryAfter(responseHeaders['retry-after']);
      if (status >= 200 && status < 300) {
        const parsed = parseSuccess(facts, redact);
        if ('problem' in parsed) return { problem: parsed.problem, retryAfterMs };
        return {
          response: { status, data: parsed.data, headers: responseHeaders, credits, attempts: number },
        };
      }
      return { problem: problemFromResponse(facts, redact), retryAfterMs };
    } catch (error) {
      const ms = Math.round(performance.now() - started);
      if (signal.aborted) {
        log(`http: ${where} -> aborted after ${ms} ms (${tag})`);
        throw signal.reason;
      }
      const problem = problemFromError(error, { target: url.host, timeoutMs, status, received }, redact);
      log(`http: ${where} -> ${problem.code}: ${problem.detail} after ${ms} ms (${tag})`);
      return { problem };
    }
  }

  async function request<T>(request: RequestOptions): Promise<ApiResponse<T>> {
    const base = resolveBaseUrl(config, redact);
    const url = buildUrl(base, request.path, request.query);
    const headers = requestHeaders(request);
    if (request.auth) Object.assign(headers, authHeaders(config, keyFor(config, url)));

    const deadlineMs = callDeadlineMs(timeoutMs, retries, policy);
    const deadline = Date.now() + deadlineMs;
    const deadlineController = new AbortController();
    const deadlineTimer = setTimeout(
      () =>
        deadlineController.abort(
          new Problem({
            code: 'timeout',
            detail: `The call to ${url.host} did not finish within ${Math.round(deadlineMs / 1000)}s across all attempts.`,
            retryable: false,
            source: 'network',
          }),
        ),
      deadlineMs,
    );
    const signal = request.signal
      ? AbortSignal.any([deadlineController.signal, request.signal])
      : deadlineController.signal;
    const spinner = startSpinnerLater(request, url);
    try {
      for (let number = 1; ; number++) {
        const outcome = await attemptOnce(request, url, headers, signal, number).catch((reason: unknown) => {
          throw signal.aborted ? abortProblem(reason, request.signal) : reason;
        });
        if (outcome.response) return outcome.response as ApiResponse<T>;
        const problem = outcome.problem!;
        if (!problem.retryable) throw problem;
        if (outcome.retryAfterMs !== undefined && outcome.retryAfterMs > policy.maxRetryAfterMs)
          throw retryAfterTooLong(problem, outcome.retryAfterMs);
        if (number > retries) throw gaveUp(problem, number);
        const delay = retryDelayMs(number - 1, {
          retryAfterMs: outcome.retryAfterMs,
          throttled: problem.status === 429,
          random: options.random,
          policy,
        });
        if (Date.now() + delay >= deadline) throw gaveUp(problem, number);
        log(`http: retrying in ${delay} ms after ${problem.code}`);
        spinner.retrying(number + 1);
        await request.onRetry?.(problem, number);
        await sleep(delay, signal).catch((reason: unknown) => {
          throw signal.aborted ? abortProblem(reason, request.signal) : reason;
        });
      }
    } finally {
      clearTimeout(deadlineTimer);
      spinner.stop();
    }
  }

  function startSpinnerLater(request: RequestOptions, url: URL) {
    let spinner: ReturnType<IO['spinner']> | undefined;
    let text = `Waiting for ${oneLine(redact(url.pathname))}…`;
    const timer =
      request.spinner === false
        ? undefined
        : setTimeout(() => {
            spinner = io.spinner(text);
          }, options.spinnerDelayMs ?? SPINNER_DELAY_MS);
    return {
      retrying(number: number) {
        text = `Retrying ${oneLine(redact(url.pathname))} (attempt ${number} of ${retries + 1})…`;
        spinner?.update(text);
      },
      stop() {
        if (timer) clearTimeout(timer);
        spinner?.stop();
      },
    };
  }

  return {
    request,
    get lastCredits(): Credits {
      return lastCredits;
    },
    async close() {
      const open = transport;
      transport = undefined;
      if (open) await (await open).close();
    },
  };
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
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** The problem for an aborted call: the deadline's own, or an interruption by the caller. */
function abortProblem(reason: unknown, callerSignal: AbortSignal | undefined): Problem {
  if (reason instanceof Problem) return reason;
  if (callerSignal?.aborted && callerSignal.reason instanceof Problem) return callerSignal.reason;
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

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
