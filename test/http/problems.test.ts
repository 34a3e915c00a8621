import { describe, expect, it } from 'vitest';
import {
  excerpt,
  makeRedactor,
  parseSuccess,
  problemFromError,
  problemFromResponse,
  type ResponseFacts,
} from '../../src/http/problems.js';

const KEY = 'cd_test_key_12345';
const redact = makeRedactor(KEY);

function facts(status: number, body: string, headers: Record<string, string> = {}): ResponseFacts {
  return { status, body, headers, url: 'https://api.example.com/api/me' };
}

function problemJson(code: string, status: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: `https://sandbox.company-data.dev/problems/${code.replaceAll('_', '-')}`,
    title: code,
    status,
    code,
    detail: `detail of ${code}`,
    ...extra,
  });
}

describe('problemFromResponse', () => {
  it('reads a catalog problem as is, with retryable from the catalog', () => {
    const p = problemFromResponse(
      facts(503, problemJson('catalog_refresh_in_progress', 503), {
        'content-type': 'application/problem+json',
      }),
      redact,
    );
    expect(p).toMatchObject({
      code: 'catalog_refresh_in_progress',
      status: 503,
      detail: 'detail of catalog_refresh_in_progress',
      retryable: true,
      source: 'server',
    });
    expect(p.exitCode).toBe(5);
  });

  it('keeps a non-retryable catalog code non-retryable even on a 5xx status', () => {
    const p = problemFromResponse(facts(502, problemJson('search_contract_error', 502)), redact);
    expect(p.retryable).toBe(false);
  });

  it('decides retryable from the status for an unknown code', () => {
    expect(problemFromResponse(facts(503, problemJson('brand_new_outage', 503)), redact).retryable).toBe(
      true,
    );
    expect(problemFromResponse(facts(429, problemJson('slow_down', 429)), redact).retryable).toBe(true);
    const notFound = problemFromResponse(facts(404, problemJson('not_found', 404)), redact);
    expect(notFound).toMatchObject({ code: 'not_found', retryable: false });
  });

  it('takes the code from the problem type when the code member is missing', () => {
    const body = JSON.stringify({
      type: 'https://x.dev/problems/invalid-api-key',
      title: 'Nope',
      status: 401,
    });
    const p = problemFromResponse(facts(401, body), redact);
    expect(p.code).toBe('invalid_api_key');
    expect(p.exitCode).toBe(3);
  });

  it('strips control characters and redacts the key from server text', () => {
    const body = problemJson('invalid_request', 400, {
      title: 'Bad \x1b[31mred\x1b[0m',
      detail: `key ${KEY} is \x1b]0;pwned\x07wrong`,
    });
    const p = problemFromResponse(facts(400, body), redact);
    expect(p.title).toBe('Bad red');
    expect(p.detail).toBe('key *** is wrong');
    expect(p.exitCode).toBe(2);
  });

  it('carries Retry-After in seconds', () => {
    const p = problemFromResponse(
      facts(429, problemJson('rate_limited', 429), { 'retry-after': '7' }),
      redact,
    );
    expect(p.retryAfterSeconds).toBe(7);
  });

  it('turns an HTML 502 page into a retryable unexpected_response with a short clean excerpt', () => {
    const page = `<html><head><title>502 Bad Gateway</title></head>\n<body>\x1b[2J${'x'.repeat(500)}</body></html>`;
    const p = problemFromResponse(facts(502, page, { 'content-type': 'text/html' }), redact);
    expect(p).toMatchObject({ code: 'unexpected_response', status: 502, retryable: true });
    expect(p.detail).toContain('HTML page');
    expect(p.detail).toContain('502 Bad Gateway');
    expect(p.detail).not.toMatch(/[\x00-\x1f]/);
    expect(p.detail.length).toBeLessThan(320);
    expect(p.exitCode).toBe(5);
  });

  it('turns JSON that is not a problem, and an empty body, into unexpected_response', () => {
    const other = problemFromResponse(facts(500, '{"error":"boom"}'), redact);
    expect(other).toMatchObject({ code: 'unexpected_response', retryable: true });
    expect(other.detail).toContain('JSON that is not a problem');
    const empty = problemFromResponse(facts(403, ''), redact);
    expect(empty).toMatchObject({ code: 'unexpected_response', status: 403, retryable: false });
    expect(empty.detail).toContain('empty body');
  });

  it('refuses a redirect and says where it points, without the key', () => {
    const p = problemFromResponse(
      facts(302, '', { location: `https://elsewhere.example/login?k=${KEY}` }),
      redact,
    );
    expect(p).toMatchObject({ code: 'redirect_refused', status: 302, retryable: false });
    expect(p.detail).toContain('https://elsewhere.example/login?k=***');
    expect(p.detail).not.toContain(KEY);
    expect(p.exitCode).toBe(2);
    const relative = problemFromResponse(facts(301, '', { location: '/v2/api/me' }), redact);
    expect(relative.detail).toContain('https://api.example.com/v2/api/me');
  });
});

describe('parseSuccess', () => {
  it('parses JSON', () => {
    expect(parseSuccess(facts(200, '{"found":true}'), redact)).toEqual({ data: { found: true } });
  });

  it('makes a truncated 2xx body a retryable unexpected_response', () => {
    const result = parseSuccess(
      facts(200, '{"found":true,"dom', { 'content-type': 'application/json' }),
      redact,
    );
    expect('problem' in result && result.problem).toMatchObject({
      code: 'unexpected_response',
      status: 200,
      retryable: true,
    });
  });
});

describe('problemFromError', () => {
  const ctx = { target: '127.0.0.1:9', timeoutMs: 300 };
  const err = (code: string, message = code) => Object.assign(new Error(message), { code });

  it.each([
    ['ECONNREFUSED', 'network_error', true],
    ['ECONNRESET', 'network_error', true],
    ['UND_ERR_SOCKET', 'network_error', true],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout', true],
    ['UND_ERR_BODY_TIMEOUT', 'timeout', true],
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout', true],
    ['ENOTFOUND', 'network_error', false],
    ['ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', 'network_error', false],
  ])('%s -> %s (retryable %s)', (code, problemCode, retryable) => {
    const p = problemFromError(err(code), ctx, redact);
    expect(p).toMatchObject({ code: problemCode, retryable, source: 'network' });
    expect(p.exitCode).toBe(5);
  });

  // Set-up mistakes: tried once, exit 2. The servers behind them are in
  // test/commands/setup-mistakes.test.ts; these are the variants no loopback server gives.
  const viaProxy = { ...ctx, proxy: { url: 'http://u:pw@proxy.example:3128', variable: 'https_proxy' } };
  it.each([
    [
      'SELF_SIGNED_CERT_IN_CHAIN',
      ctx,
      'untrusted_certificate',
      /not signed by an authority this machine trusts/,
    ],
    ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', ctx, 'untrusted_certificate', /not signed by an authority/],
    ['CERT_NOT_YET_VALID', ctx, 'untrusted_certificate', /is not valid yet .*clock/],
    ['CERT_REVOKED', ctx, 'untrusted_certificate', /was refused \(CERT_REVOKED/],
    [
      'ENOTFOUND',
      viaProxy,
      'proxy_unreachable',
      /^The proxy proxy\.example:3128 \(from https_proxy\) cannot be found/,
    ],
    [
      'EHOSTUNREACH',
      viaProxy,
      'proxy_unreachable',
      /cannot be reached \(EHOSTUNREACH\), so 127\.0\.0\.1:9 was not/,
    ],
  ])('%s -> %s', (code, context, problemCode, detail) => {
    const p = problemFromError(err(code), context, redact);
    expect(p).toMatchObject({ code: problemCode, retryable: false, source: 'network' });
    expect(p.detail).toMatch(detail);
    expect(p.detail).not.toContain('pw');
    expect(p.exitCode).toBe(2);
  });

  it('names a 407 even without knowing the proxy, and says which credentials were refused', () => {
    const plain = err('UND_ERR_INVALID_ARG', 'Proxy Authentication Required (407)');
    expect(problemFromError(plain, ctx, redact)).toMatchObject({
      code: 'proxy_auth_required',
      detail: 'A proxy on the way asks for a user name and password (HTTP 407).',
    });
    const tunnel = err('UND_ERR_ABORTED', 'Proxy response (407) !== 200 when HTTP Tunneling');
    expect(problemFromError(tunnel, viaProxy, redact).detail).toBe(
      'The proxy proxy.example:3128 (from https_proxy) refused the user name and password in https_proxy (HTTP 407).',
    );
    // Another refusal of a tunnel is not about credentials: the proxy will not tunnel there.
    const forbidden = err('UND_ERR_ABORTED', 'Proxy response (403) !== 200 when HTTP Tunneling');
    expect(problemFromError(forbidden, viaProxy, redact)).toMatchObject({
      code: 'proxy_refused',
      retryable: false,
    });
    expect(problemFromError(forbidden, viaProxy, redact).detail).toMatch(
      /^The proxy proxy\.example:3128 \(from https_proxy\) answered HTTP 403 to CONNECT .+: it will not open a tunnel to the service, so the service was not reached\.$/,
    );
  });

  it('finds the code inside an AggregateError', () => {
    const aggregate = new AggregateError([err('ECONNREFUSED')], 'all failed');
    expect(problemFromError(aggregate, ctx, redact).detail).toContain('Connection refused');
  });

  it('treats a body cut off after a 200 as a retryable unexpected_response', () => {
    const p = problemFromError(err('UND_ERR_SOCKET'), { ...ctx, status: 200, received: 12 }, redact);
    expect(p).toMatchObject({ code: 'unexpected_response', status: 200, retryable: true });
    expect(p.detail).toContain('cut off after 12 bytes');
    const clientError = problemFromError(err('UND_ERR_SOCKET'), { ...ctx, status: 400 }, redact);
    expect(clientError.retryable).toBe(false);
  });

  it('redacts the key from error messages', () => {
    const p = problemFromError(err('EWEIRD', `failed for ${KEY}`), ctx, redact);
    expect(p.detail).not.toContain(KEY);
    expect(p.detail).toContain('***');
  });
});

describe('makeRedactor and excerpt', () => {
  it('redacts the key and its URL-encoded form', () => {
    const r = makeRedactor('a b/c');
    expect(r('x a b/c y a%20b%2Fc z')).toBe('x *** y *** z');
    expect(makeRedactor(undefined)('unchanged')).toBe('unchanged');
  });

  it('cuts excerpts to 200 characters on one line', () => {
    const text = excerpt(`line1\nline2\t${'y'.repeat(400)}`);
    expect(text.length).toBe(200);
    expect(text.startsWith('line1 line2 ')).toBe(true);
  });
});
