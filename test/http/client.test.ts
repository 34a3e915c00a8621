// createClient against small real HTTP servers on 127.0.0.1: every fault is produced on a real
// socket, and attempts are counted (and timed) by the server itself.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type ClientOptions, callDeadlineMs, createClient } from '../../src/http/client.js';
import { DEFAULT_RETRY_POLICY } from '../../src/http/retry.js';
import { Problem } from '../../src/problem.js';
import type { Client, Config, RequestOptions } from '../../src/types.js';
import { testConfig } from '../helpers/config.js';
import { type ForwardProxy, startForwardProxy } from '../helpers/forward-proxy.js';
import type { OnTestFinished } from '../helpers/sandbox.js';
import { listenLocal } from '../helpers/server.js';

const KEY = 'cd_test_secret_9f8e7d';
const FAST: ClientOptions = { retryPolicy: { baseMs: 5, capMs: 20, throttleFloorMs: 10 }, env: {} };

interface Hit {
  at: number;
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
/** For the tests that run one at a time: closed in afterEach. */
const afterThisTest: OnTestFinished = (cleanup) => {
  cleanups.push(cleanup);
};

/** A server answering the n-th request with handlers[n] (the last handler repeats). */
const serve = (...handlers: Handler[]) => serveFor(afterThisTest, ...handlers);

async function serveFor(
  later: OnTestFinished,
  ...handlers: Handler[]
): Promise<{ url: string; hits: Hit[] }> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const handler = handlers[Math.min(hits.length, handlers.length - 1)];
    hits.push({ at: Date.now(), method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    handler(req, res);
  });
  const { url, close } = await listenLocal(server);
  later(close);
  return { url, hits };
}

/** A forward proxy, closed after the test. */
async function proxyForTest(): Promise<ForwardProxy> {
  const proxy = await startForwardProxy();
  afterThisTest(proxy.close);
  return proxy;
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    const contentType = status >= 400 ? 'application/problem+json' : 'application/json';
    res.writeHead(status, { 'content-type': contentType, ...headers });
    res.end(JSON.stringify(body));
  };

const problem = (code: string, status: number, headers: Record<string, string> = {}): Handler =>
  json(status, { type: `https://x.dev/problems/${code}`, title: code, status, code, detail: code }, headers);

function configFor(baseUrl: string, overrides: Partial<Config> = {}): Config {
  return testConfig(baseUrl, {
    apiKey: { value: KEY, source: 'environment' },
    retries: { value: 2, source: 'flag' },
    ...overrides,
  });
}

function clientFor(cfg: Config, options: ClientOptions = FAST, later = afterThisTest): Client {
  const c = createClient(cfg, options);
  later(() => c.close());
  return c;
}

// Outside the transport matrix below, calls go direct.
const config = configFor;
const client = clientFor;

const ME: RequestOptions = { method: 'GET', path: '/api/me', auth: true };

async function failure(promise: Promise<unknown>): Promise<Problem> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Problem) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

// Direct and through a forward proxy, calls must behave alike. Through the proxy, the base URL
// names a host only the proxy knows, and the proxy forwards to the test server's port.
const ROUTES = [
  ['direct', false],
  ['through a proxy', true],
] as const;

// Side by side: each test has servers, a proxy and clients of its own, and many of them wait on a
// timeout, a Retry-After or a backoff rather than on the CPU.
describe.concurrent.each(ROUTES)('createClient retries, %s', (_name, viaProxy) => {
  /** The test's servers and clients, on this route; closed when the test ends. */
  async function route(onTestFinished: OnTestFinished) {
    const started: Array<() => Promise<void> | void> = [];
    const later: OnTestFinished = (cleanup) => {
      started.push(cleanup);
    };
    const proxy: ForwardProxy | undefined = viaProxy ? await startForwardProxy() : undefined;
    onTestFinished(async () => {
      for (const cleanup of started.splice(0).reverse()) await cleanup();
      await proxy?.close();
      // Each test's calls really went through the proxy.
      if (proxy) expect(proxy.forwarded.length + proxy.tunnels.length).toBeGreaterThan(0);
    });
    const proxyEnv: NodeJS.ProcessEnv = proxy ? { HTTP_PROXY: proxy.url } : {};
    return {
      serve: (...handlers: Handler[]) => serveFor(later, ...handlers),
      config: (baseUrl: string, overrides: Partial<Config> = {}): Config =>
        viaProxy
          ? configFor(baseUrl.replace('//127.0.0.1:', '//upstream.invalid:'), {
              allowInsecureHttp: true,
              ...overrides,
            })
          : configFor(baseUrl, overrides),
      client: (cfg: Config, options: ClientOptions = FAST): Client =>
        clientFor(cfg, { ...options, env: { ...options.env, ...proxyEnv } }, later),
    };
  }

  it('retries a 503 problem twice and then succeeds', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const s = await serve(
      problem('search_unavailable', 503),
      problem('search_unavailable', 503),
      json(200, { ok: 1 }),
    );
    const retried: Array<[string, number]> = [];
    const res = await client(config(s.url)).request({
      ...ME,
      onRetry: (p, attempt) => {
        retried.push([p.code, attempt]);
      },
    });
    expect(res).toMatchObject({ status: 200, data: { ok: 1 }, attempts: 3 });
    expect(s.hits).toHaveLength(3);
    expect(retried).toEqual([
      ['search_unavailable', 1],
      ['search_unavailable', 2],
    ]);
  });

  it('waits at least Retry-After after a 429', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    // A fraction of a second (whole seconds are read alike: test/http/retry.test.ts).
    const s = await serve(problem('rate_limited', 429, { 'retry-after': '0.4' }), json(200, {}));
    await client(config(s.url)).request(ME);
    expect(s.hits).toHaveLength(2);
    // Server-side arrival times; a few ms of slack for timer rounding, never "too late" checks.
    expect(s.hits[1].at - s.hits[0].at).toBeGreaterThanOrEqual(395);
  });

  it.for<[number, string, number]>([
    [400, 'invalid_request', 2],
    [401, 'invalid_api_key', 3],
    [403, 'insufficient_credits', 4],
  ])('attempts a %d exactly once', async ([status, code, exit], { onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const s = await serve(problem(code, status));
    const p = await failure(client(config(s.url)).request(ME));
    expect(p).toMatchObject({ code, status, source: 'server' });
    expect(p.exitCode).toBe(exit);
    expect(s.hits).toHaveLength(1);
  });

  it('gives up on an HTML 502 after retries + 1 attempts with exit code 5', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const s = await serve((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body><h1>502 Bad Gateway</h1>\x1b[31mnginx</body></html>');
    });
    const p = await failure(client(config(s.url)).request(ME));
    expect(s.hits).toHaveLength(3);
    expect(p).toMatchObject({ code: 'unexpected_response', status: 502 });
    expect(p.detail).toContain('HTML page');
    expect(p.detail).toContain('gave up after 3 attempts');
    expect(p.detail).not.toContain('\x1b');
    expect(p.exitCode).toBe(5);
  });

  it('retries a truncated 200 body and succeeds when a whole one arrives', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const truncated: Handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"found":true,"dom');
      setImmediate(() => res.socket?.destroy());
    };
    const s = await serve(truncated, json(200, { found: true }));
    const res = await client(config(s.url)).request(ME);
    expect(res).toMatchObject({ data: { found: true }, attempts: 2 });

    const always = await serve(truncated);
    const p = await failure(client(config(always.url)).request(ME));
    expect(always.hits).toHaveLength(3);
    expect(p).toMatchObject({ code: 'unexpected_response', status: 200 });
    expect(p.exitCode).toBe(5);
  });

  it('retries a reset connection and reports a network error', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const s = await serve((req) => req.socket.destroy());
    const p = await failure(client(config(s.url)).request(ME));
    expect(s.hits).toHaveLength(3);
    expect(p).toMatchObject({ code: 'network_error', source: 'network' });
    expect(p.exitCode).toBe(5);
  });

  it('times out a server that never answers, per attempt', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const s = await serve(() => {});
    const cfg = config(s.url, {
      timeoutMs: { value: 300, source: 'flag' },
      retries: { value: 1, source: 'flag' },
    });
    const p = await failure(client(cfg).request(ME));
    expect(s.hits).toHaveLength(2);
    expect(p).toMatchObject({ code: 'timeout', source: 'network' });
    expect(p.detail).toContain('0.3s');
    expect(p.exitCode).toBe(5);
  });

  it('times out a body that stalls after the headers', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"found":');
    });
    const cfg = config(s.url, {
      timeoutMs: { value: 300, source: 'flag' },
      retries: { value: 0, source: 'flag' },
    });
    const p = await failure(client(cfg).request(ME));
    expect(p).toMatchObject({ code: 'timeout', source: 'network' });
    expect(p.detail).toContain('stalled for more than 0.3s');
  });

  it('cuts a body that trickles in past the call deadline', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    // A byte every 100 ms never trips the 300 ms idle timeout; only the call's own deadline
    // (one attempt: 0.3 s plus the connect allowance, 0.4 s here instead of 10 s) ends it.
    const s = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      const drip = setInterval(() => res.write(' '), 100);
      req.socket.once('close', () => clearInterval(drip));
    });
    const cfg = config(s.url, {
      timeoutMs: { value: 300, source: 'flag' },
      retries: { value: 0, source: 'flag' },
    });
    const started = Date.now();
    const p = await failure(client(cfg, { ...FAST, connectTimeoutMs: 400 }).request(ME));
    expect(p).toMatchObject({ code: 'timeout', source: 'network' });
    // 0.7 s, rounded to whole seconds.
    expect(p.detail).toContain('did not finish within 1s across all attempts');
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
  });

  it('keeps connections alive across calls and sends a body with its length', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const bodies: string[] = [];
    const ports = new Set<number>();
    const s = await serve((req, res) => {
      ports.add(req.socket.remotePort ?? 0);
      let text = '';
      req.on('data', (chunk) => {
        text += chunk;
      });
      req.on('end', () => {
        bodies.push(`${req.headers['content-length']} ${text}`);
        json(200, { ok: 1 })(req, res);
      });
    });
    const c = client(config(s.url));
    for (let i = 0; i < 4; i++) await c.request(ME);
    // undici's pool may open a second connection while the first frees up.
    expect(ports.size).toBeLessThanOrEqual(2);
    await c.request({ ...ME, method: 'POST', body: { n: 1, name: 'é' } });
    expect(bodies.at(-1)).toBe('19 {"n":1,"name":"é"}');
  });

  it('fails at once when Retry-After is longer than it is willing to wait', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const s = await serve(problem('rate_limited', 429, { 'retry-after': '600' }));
    const p = await failure(client(config(s.url)).request(ME));
    expect(s.hits).toHaveLength(1);
    expect(p).toMatchObject({ code: 'retry_after_too_long', status: 429, retryAfterSeconds: 600 });
    expect(p.exitCode).toBe(5);
    expect(p.hint).toContain('600s');
  });

  it('refuses a redirect without following it', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const target = await serve(json(200, {}));
    const s = await serve((_req, res) => {
      res.writeHead(307, { location: `${target.url}/api/me` });
      res.end();
    });
    const p = await failure(client(config(s.url)).request(ME));
    expect(p).toMatchObject({ code: 'redirect_refused', status: 307 });
    expect(p.detail).toContain(`${target.url}/api/me`);
    expect(s.hits).toHaveLength(1);
    expect(target.hits).toHaveLength(0);
  });

  it('stops when the caller aborts', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const s = await serve(() => {});
    const controller = new AbortController();
    const call = client(config(s.url)).request({ ...ME, signal: controller.signal });
    while (s.hits.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect((await failure(call)).code).toBe('interrupted');
  });

  it('an abort ends the wait before a retry at once', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const s = await serve(problem('search_unavailable', 503));
    // A minute's wait: without the abort reaching it, the test would time out.
    const slow: ClientOptions = {
      retryPolicy: { baseMs: 60_000, capMs: 60_000, throttleFloorMs: 10 },
      random: () => 0.99,
      env: {},
    };
    const controller = new AbortController();
    const call = client(config(s.url), slow).request({ ...ME, signal: controller.signal });
    while (s.hits.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    expect((await failure(call)).code).toBe('interrupted');
    expect(s.hits).toHaveLength(1);
  });

  it('an abort ends every call made with that signal, and no other', async ({ onTestFinished }) => {
    const { serve, config, client } = await route(onTestFinished);
    const held: Array<{ url: string; res: ServerResponse }> = [];
    const s = await serve((req, res) => {
      held.push({ url: req.url ?? '', res });
    });
    const c = client(config(s.url));
    const shared = new AbortController();
    const first = c.request({ ...ME, query: { n: 'first' }, signal: shared.signal });
    const second = c.request({ ...ME, query: { n: 'second' }, signal: shared.signal });
    const other = c.request({ ...ME, query: { n: 'other' }, signal: new AbortController().signal });
    while (held.length < 3) await new Promise((r) => setTimeout(r, 5));
    shared.abort();
    expect((await failure(first)).code).toBe('interrupted');
    expect((await failure(second)).code).toBe('interrupted');
    const otherHeld = held.find((h) => h.url.includes('n=other'));
    json(200, { ok: 'other' })({} as IncomingMessage, otherHeld!.res);
    expect(await other).toMatchObject({ status: 200, data: { ok: 'other' } });
    expect(s.hits).toHaveLength(3);
  });
});

describe('the call deadline', () => {
  it('allows each attempt its idle timeout plus 10 s to connect, and each wait the backoff cap', () => {
    expect(callDeadlineMs(300, 0, DEFAULT_RETRY_POLICY)).toBe(10_300);
    expect(callDeadlineMs(30_000, 2, DEFAULT_RETRY_POLICY)).toBe(3 * 40_000 + 2 * 20_000);
    expect(callDeadlineMs(300, 0, DEFAULT_RETRY_POLICY, 400)).toBe(700);
  });
});

describe('createClient auth and safety', () => {
  it('reports a refused connection as a network error', async () => {
    const s = await serve(json(200, {}));
    const port = new URL(s.url).port;
    for (const cleanup of cleanups.splice(0)) await cleanup();
    const cfg = config(`http://127.0.0.1:${port}`, { retries: { value: 0, source: 'flag' } });
    const p = await failure(client(cfg).request(ME));
    expect(p).toMatchObject({ code: 'network_error', source: 'network' });
    expect(p.detail).toContain('Connection refused');
  });

  it('sends Bearer by default and x-api-key when configured', async () => {
    const s = await serve(json(200, {}));
    await client(config(s.url)).request(ME);
    await client(config(s.url, { authHeader: { value: 'x-api-key', source: 'flag' } })).request(ME);
    expect(s.hits[0].headers.authorization).toBe(`Bearer ${KEY}`);
    expect(s.hits[0].headers['x-api-key']).toBeUndefined();
    expect(s.hits[1].headers['x-api-key']).toBe(KEY);
    expect(s.hits[1].headers.authorization).toBeUndefined();
  });

  it('never sends the key to public endpoints, even when a caller passes it', async () => {
    const s = await serve(json(200, { products: [] }));
    await client(config(s.url)).request({
      method: 'GET',
      path: '/api/products',
      auth: false,
      headers: { Authorization: `Bearer ${KEY}`, 'x-api-key': KEY },
    });
    expect(s.hits[0].headers.authorization).toBeUndefined();
    expect(s.hits[0].headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(s.hits[0])).not.toContain(KEY);
  });

  it('sends nothing without a key, and says so', async () => {
    const s = await serve(json(200, {}));
    const p = await failure(client(config(s.url, { apiKey: undefined })).request(ME));
    expect(p).toMatchObject({ code: 'invalid_api_key', detail: 'No API key configured.' });
    expect(p.exitCode).toBe(3);
    expect(s.hits).toHaveLength(0);
  });

  it('refuses plain http to a non-loopback host before any lookup or connection', async () => {
    const p = await failure(client(config('http://example.invalid')).request(ME));
    // Had it looked the name up, .invalid would have failed as a network error instead.
    expect(p.code).toBe('insecure_http');
    expect(p.exitCode).toBe(2);
  });

  it('explains a missing base URL', async () => {
    const p = await failure(client(config('', { baseUrl: undefined })).request(ME));
    expect(p.code).toBe('config_error');
    expect(p.detail).toContain('--base-url or COMPANY_DATA_BASE_URL, or use --sandbox');
  });

  it('forwards an http:// service through HTTP_PROXY with an absolute URI, loopback included', async () => {
    const upstream = await serve(json(200, { via: 'upstream' }));
    const proxy = await proxyForTest();
    const port = new URL(upstream.url).port;
    const env = { HTTP_PROXY: proxy.url };
    const remote = config(`http://service.invalid:${port}`, { allowInsecureHttp: true });
    const res = await client(remote, { ...FAST, env }).request(ME);
    expect(res.data).toEqual({ via: 'upstream' });
    expect(proxy.forwarded).toEqual([`GET http://service.invalid:${port}/api/me`]);
    expect(proxy.tunnels).toEqual([]);
    expect(upstream.hits[0].headers.host).toBe(`service.invalid:${port}`);
    // Loopback is proxied like any host (the proxy here is on loopback too, so the key may go).
    await client(config(upstream.url), { ...FAST, env }).request(ME);
    expect(proxy.forwarded).toHaveLength(2);
    expect(proxy.forwarded[1]).toBe(`GET ${upstream.url}/api/me`);
    expect(upstream.hits).toHaveLength(2);
  });

  it('goes direct when NO_PROXY names the host, or when told to', async () => {
    const upstream = await serve(json(200, {}));
    const proxy = await proxyForTest();
    const env = { HTTP_PROXY: proxy.url, NO_PROXY: 'localhost,127.0.0.1' };
    await client(config(upstream.url), { ...FAST, env }).request(ME);
    await client(config(upstream.url), { ...FAST, env: { HTTP_PROXY: proxy.url }, direct: true }).request(ME);
    expect(upstream.hits).toHaveLength(2);
    expect(proxy.forwarded).toEqual([]);
  });

  it('reads lower-case proxy variables first, as undici does', async () => {
    const upstream = await serve(json(200, {}));
    const proxy = await proxyForTest();
    const env = { http_proxy: proxy.url, HTTP_PROXY: 'http://proxy.invalid:3128' };
    await client(config(upstream.url), { ...FAST, env }).request(ME);
    expect(proxy.forwarded).toHaveLength(1);
  });

  it('never sends the key in clear text to a proxy on another machine, even for loopback', async () => {
    const upstream = await serve(json(200, {}));
    const env = { HTTP_PROXY: 'http://user:pw@proxy.invalid:3128' };
    const p = await failure(client(config(upstream.url), { ...FAST, env }).request(ME));
    expect(p.code).toBe('insecure_http');
    expect(p.detail).toContain('through the proxy http://***@proxy.invalid:3128');
    expect(p.detail).toContain('NO_PROXY');
    expect(p.detail).not.toContain('pw');
    expect(upstream.hits).toHaveLength(0);
  });
});

describe('createClient credits and logging', () => {
  it('reads credits on success and keeps lastCredits on errors too', async () => {
    const s = await serve(
      json(200, {}, { 'x-credits-charged': '2', 'x-credits-remaining': '998' }),
      problem('insufficient_credits', 403, { 'x-credit-cost': '0', 'x-credit-balance': '0' }),
    );
    const c = client(config(s.url));
    const res = await c.request(ME);
    expect(res.credits).toEqual({ charged: 2, chargedName: 'x-credits-charged', remaining: 998 });
    expect(c.lastCredits).toEqual({ charged: 2, chargedName: 'x-credits-charged', remaining: 998 });
    await failure(c.request(ME));
    expect(c.lastCredits).toEqual({ charged: 0, chargedName: 'x-credit-cost', remaining: 0 });
  });

  it('logs each attempt and never the key, even one inside the URL', async () => {
    const s = await serve(problem('internal_error', 500), json(200, {}, { 'x-credits-charged': '1' }));
    const lines: string[] = [];
    await client(config(`${s.url}/${KEY}`), { ...FAST, log: (line) => lines.push(line) }).request({
      ...ME,
      query: { q: KEY, limit: 3 },
    });
    const log = lines.join('\n');
    expect(s.hits[0].url).toContain(KEY);
    expect(log).not.toContain(KEY);
    expect(log).toMatch(
      /GET http:\/\/127\.0\.0\.1:\d+\/\*\*\*\/api\/me\?q=\*\*\*&limit=3 -> 500 in \d+ ms \(attempt 1\/3\)/,
    );
    expect(log).toMatch(/-> 200 in \d+ ms \(attempt 2\/3, charged 1\)/);
    expect(log).toContain('retrying in');
  });
});

describe('createClient: refusals a caller paces (pacesRefusals) and RateLimit headers', () => {
  const page: Handler = (_req, res) => {
    res.writeHead(503, { 'content-type': 'text/html' });
    res.end('<html><head><title>503 Service Temporarily Unavailable</title></head></html>');
  };
  const ok = json(200, { plan: 'pro' });

  it('retries a gateway 503 without Retry-After beyond --retries while the caller paces it, without a backoff', async () => {
    const { url, hits } = await serve(page, page, page, page, ok);
    const retries: number[] = [];
    const c = client(config(url, { retries: { value: 1, source: 'flag' } }), {
      ...FAST,
      retryPolicy: { baseMs: 5_000, capMs: 5_000, throttleFloorMs: 5_000 },
    });
    const res = await c.request({
      ...ME,
      pacesRefusals: () => true,
      onRetry: (_p, _attempt, delayMs) => {
        retries.push(delayMs);
      },
    });
    expect(res.attempts).toBe(5);
    expect(hits).toHaveLength(5);
    expect(retries).toEqual([0, 0, 0, 0]);
  });

  it('counts the same refusals against --retries when the caller does not pace them, and never paces a 502', async () => {
    const refused = await serve(page);
    const c = client(config(refused.url, { retries: { value: 1, source: 'flag' } }));
    const p = await failure(c.request({ ...ME, pacesRefusals: () => false }));
    expect([p.status, refused.hits.length]).toEqual([503, 2]);

    const bad = await serve((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>Bad Gateway</html>');
    });
    const c2 = client(config(bad.url, { retries: { value: 1, source: 'flag' } }));
    const q = await failure(c2.request({ ...ME, pacesRefusals: () => true }));
    expect([q.status, bad.hits.length]).toEqual([502, 2]);
  });

  it('tells its watchers what the RateLimit headers say, on answers and refusals alike', async () => {
    const { url } = await serve(
      json(
        429,
        { code: 'rate_limited', title: 'slow down' },
        { 'retry-after': '0', ratelimit: '"d";r=0;t=1' },
      ),
      json(200, { plan: 'pro' }, { 'ratelimit-policy': '"d";q=50;w=1', ratelimit: '"d";r=49;t=1' }),
    );
    const c = client(config(url));
    const seen: unknown[] = [];
    const stop = c.watchRateLimits!((limits) => seen.push(limits));
    await c.request(ME);
    stop();
    await c.request(ME).catch(() => {});
    expect(seen).toEqual([
      { remaining: 0, resetSeconds: 1 },
      { quota: 50, windowSeconds: 1, remaining: 49, resetSeconds: 1 },
    ]);
  });
});
