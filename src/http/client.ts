// The one HTTP layer: auth, timeouts, retries with backoff, problems, credits, verbose logging.
// It never formats for humans beyond one-line log and problem text (DESIGN.md data flow).
import { oneLine } from '../output/sanitize.js';
import { Problem } from '../problem.js';
import type { ApiResponse, Client, Config, Credits, IO, RequestOptions } from '../types.js';
import { readCredits } from './credits.js';
import { type Cuttable, exchange, type Progress } from './exchange.js';
import { OpenCalls } from './open-calls.js';
import { makeRedactor, parseSuccess, problemFromError, problemFromResponse } from './problems.js';
import { parseRetryAfter, type RetryPolicy, retryDelayMs, retryPolicyFrom } from './retry.js';
import { authHeaders, keyFor, pathAndQuery, resolveBaseUrl } from './target.js';
import { CONNECT_TIMEOUT_MS, createTransport, type Transport } from './transport.js';

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
  const deadlineMs = callDeadlineMs(timeoutMs, retries, policy);
  let transport: Transport | undefined;
  let lastCredits: Credits = {};
  let resolvedBase: { raw: string | undefined; url: URL } | undefined;

  const log = (message: string) => {
    if (io.verbose) io.debug(redact(oneLine(message)));
  };

  // The base URL is parsed once, not per call (a batch makes hundreds of thousands of calls).
  // The key's checks and its header, once per base URL rather than per call.
  let auth: { base: URL; headers: Record<string, string> } | undefined;
  const authFor = (base: URL): Record<string, string> => {
    if (auth?.base !== base) auth = { base, headers: authHeaders(config, keyFor(config, base)) };
    return auth.headers;
  };

  const baseUrl = (): URL => {
    const raw = config.baseUrl?.value;
    if (resolvedBase && resolvedBase.raw === raw) return resolvedBase.url;
    const url = resolveBaseUrl(config, redact);
    resolvedBase = { raw, url };
    return url;
  };

  // One shared sweep enforces every open call's deadline, instead of an AbortController, a timer
  // and AbortSignal.any per call (about 6% of a batch's CPU). Each attempt is already bounded by
  // the connect timeout and the transport's idle timeouts, and a retry never starts past the deadline;
  // what the sweep catches is a body that trickles in slower than the deadline allows.
  const openCalls = new OpenCalls<OpenCall>();
  let sweeper: NodeJS.Timeout | undefined;
  const sweep = () => {
    const now = Date.now();
    openCalls.forEach((call) => {
      if (now < call.deadline || call.expired) return;
      call.expired = new Problem({
        code: 'timeout',
        detail: `The call to ${call.host} did not finish within ${Math.round(deadlineMs / 1000)}s across all attempts.`,
        retryable: false,
        source: 'network',
      });
      call.cut?.(call.expired);
    });
  };
  // A caller's signal gets one listener, however many calls share it (a batch's drain signal is
  // shared by all of its lookups): when it fires, the calls made with it are cut. A listener per
  // call would cost memory and GC time (src/http/open-calls.ts).
  const watched = new WeakSet<AbortSignal>();
  const watch = (signal: AbortSignal) => {
    if (watched.has(signal)) return;
    watched.add(signal);
    signal.addEventListener(
      'abort',
      () => {
        openCalls.forEach((call) => {
          if (call.signal === signal) call.cut?.(signal.reason);
        });
      },
      { once: true },
    );
  };
  const track = (call: OpenCall): number => {
    if (call.signal) watch(call.signal);
    if (!sweeper) {
      sweeper = setInterval(sweep, SWEEP_MS);
      // An open socket keeps the process alive on its own; the sweep must not.
      sweeper.unref();
    }
    return openCalls.add(call);
  };
  const untrack = (slot: number) => {
    openCalls.remove(slot);
    if (openCalls.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  async function attemptOnce(
    request: RequestOptions,
    call: OpenCall,
    headers: Record<string, string>,
    number: number,
  ): Promise<Attempt> {
    transport ??= createTransport(timeoutMs, env);
    const chosen = transport.dispatcherFor(call.base);
    // A promise only while undici loads (a proxied call): once loaded, calls skip that turn.
    const dispatcher = 'then' in chosen ? await chosen : chosen;
    // Date.now, not performance.now: the global `performance` loads perf_hooks on first use.
    const started = Date.now();
    const where = io.verbose ? `${request.method} ${call.href}` : '';
    const tag = io.verbose ? `attempt ${number}/${retries + 1}` : '';
    const progress: Progress = { received: 0 };
    try {
      const res = await exchange(
        dispatcher,
        {
          origin: call.base.origin,
          path: call.path,
          method: request.method,
          headers,
          body: request.bodyJson ?? (request.body === undefined ? undefined : JSON.stringify(request.body)),
          signal: request.signal,
        },
        call,
        progress,
      );
      const status = res.statusCode;
      const body = res.body;
      const responseHeaders = flattenHeaders(res.headers);
      const credits = readCredits(responseHeaders);
      if (request.auth) lastCredits = credits;
      if (io.verbose) {
        const ms = Date.now() - started;
        const charged = credits.charged === undefined ? '' : `, charged ${credits.charged}`;
        log(`http: ${where} -> ${status} in ${ms} ms (${tag}${charged})`);
      }
      const facts = { status, headers: responseHeaders, body: body.toString('utf8'), url: '' };
      if (status >= 200 && status < 300) {
        const parsed = parseSuccess(facts, redact);
        if ('problem' in parsed)
          return { problem: parsed.problem, retryAfterMs: parseRetryAfter(responseHeaders['retry-after']) };
        return {
          response: { status, data: parsed.data, headers: responseHeaders, credits, attempts: number },
        };
      }
      facts.url = redact(call.href);
      const retryAfterMs = parseRetryAfter(responseHeaders['retry-after']);
      return { problem: problemFromResponse(facts, redact), retryAfterMs };
    } catch (error) {
      const ms = Date.now() - started;
      if (call.expired) {
        log(`http: ${where} -> timed out after ${ms} ms (${tag})`);
        throw call.expired;
      }
      if (request.signal?.aborted) {
        log(`http: ${where} -> aborted after ${ms} ms (${tag})`);
        throw request.signal.reason;
      }
      const problem = problemFromError(
        error,
        { target: call.base.host, timeoutMs, status: progress.status, received: progress.received },
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

    const call: OpenCall = {
      base,
      path,
      href: `${base.origin}${path}`,
      host: base.host,
      deadline: Date.now() + deadlineMs,
      signal: request.signal,
    };
    const interrupted = (reason: unknown): never => {
      if (call.expired) throw call.expired;
      throw request.signal?.aborted ? abortProblem(reason, request.signal) : reason;
    };
    const slot = track(call);
    const spinner = startSpinnerLater(request, path);
    try {
      if (request.signal?.aborted) interrupted(request.signal.reason);
      for (let number = 1; ; number++) {
        const outcome = await attemptOnce(request, call, headers, number).catch(interrupted);
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
        if (Date.now() + delay >= call.deadline) throw gaveUp(problem, number);
        log(`http: retrying in ${delay} ms after ${problem.code}`);
        spinner.retrying(number + 1);
        await request.onRetry?.(problem, number);
        await wait(delay, call).catch(interrupted);
      }
    } finally {
      untrack(slot);
      spinner.stop();
    }
  }

  function startSpinnerLater(request: RequestOptions, path: string) {
    if (request.spinner === false) return NO_SPINNER;
    const pathname = () => {
      const query = path.indexOf('?');
      return oneLine(redact(query === -1 ? path : path.slice(0, query)));
    };
    let spinner: ReturnType<IO['spinner']> | undefined;
    let text: string | undefined;
    const timer = setTimeout(() => {
      spinner = io.spinner(text ?? `Waiting for ${pathname()}…`);
    }, options.spinnerDelayMs ?? SPINNER_DELAY_MS);
    return {
      retrying(number: number) {
        text = `Retrying ${pathname()} (attempt ${number} of ${retries + 1})…`;
        spinner?.update(text);
      },
      stop() {
        clearTimeout(timer);
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
      await open?.close();
    },
    async prepareTransport() {
      transport ??= createTransport(timeoutMs, env);
      let base: URL;
      try {
        base = baseUrl();
      } catch {
        return; // the first call reports the configuration problem
      }
      const chosen = transport.dispatcherFor(base);
      // A transport that fails to load fails the first call, with its own message.
      if ('then' in chosen) await chosen.catch(() => {});
    },
  };
}

/** One call in progress, across its attempts. */
interface OpenCall extends Cuttable {
  base: URL;
  /** Path and query, the base URL's path prefix included. */
  path: string;
  href: string;
  host: string;
  deadline: number;
  /** The caller's signal: its abort cuts the call. */
  signal?: AbortSignal;
  /** Set by the sweep once the deadline has passed. */
  expired?: Problem;
}

const SWEEP_MS = 250;
const NO_SPINNER = { retrying(_number: number) {}, stop() {} };

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

/**
 * The wait before a retry. Like an attempt, it ends when the call is cut, so an abort of the
 * caller's signal reaches it through the client's one listener (no listener per wait).
 */
function wait(ms: number, call: OpenCall): Promise<void> {
  return new Promise((resolve, reject) => {
    if (call.signal?.aborted) {
      reject(call.signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      call.cut = undefined;
      resolve();
    }, ms);
    call.cut = (reason) => {
      clearTimeout(timer);
      call.cut = undefined;
      reject(reason);
    };
  });
}
