import { describe, expect, it } from 'vitest';
import { isRateRefusal, mayHaveBeenCharged } from '../../src/http/outcome.js';
import { problemFromError, problemFromResponse } from '../../src/http/problems.js';
import { Problem } from '../../src/problem.js';

const redact = (text: string) => text;
const ctx = { target: 'api.example:443', timeoutMs: 1000 };
const transport = (code: string, status?: number) =>
  problemFromError(Object.assign(new Error(code), { code }), { ...ctx, status }, redact);
const answer = (status: number, body: string, headers: Record<string, string> = {}) =>
  problemFromResponse({ status, headers, body, url: 'https://api.example/api/domains/a.com' }, redact);
const problemJson = (code: string) => JSON.stringify({ code, title: code });

describe('mayHaveBeenCharged', () => {
  it('an attempt sent whose answer never came: possibly charged', () => {
    expect(mayHaveBeenCharged(transport('UND_ERR_HEADERS_TIMEOUT'))).toBe(true);
    expect(mayHaveBeenCharged(transport('UND_ERR_BODY_TIMEOUT'))).toBe(true);
    expect(mayHaveBeenCharged(transport('ECONNRESET'))).toBe(true);
    expect(mayHaveBeenCharged(transport('UND_ERR_SOCKET'))).toBe(true);
    expect(mayHaveBeenCharged(transport('ECONNRESET', 200))).toBe(true); // a success cut off
    expect(mayHaveBeenCharged(answer(200, '{"found": tru'))).toBe(true);
    expect(mayHaveBeenCharged(answer(502, '<html>Bad Gateway</html>'))).toBe(true);
    expect(mayHaveBeenCharged(answer(504, '<html>Gateway Time-out</html>'))).toBe(true);
    expect(mayHaveBeenCharged(answer(500, '<html>Internal Server Error</html>'))).toBe(true);
    // The call's own deadline, and a call cancelled by the run while in flight.
    expect(mayHaveBeenCharged(new Problem({ code: 'timeout', source: 'network' }))).toBe(true);
    expect(mayHaveBeenCharged(new Problem({ code: 'interrupted', source: 'client' }))).toBe(true);
  });

  it('an answer that says no, or a request never sent: not charged', () => {
    expect(mayHaveBeenCharged(answer(400, problemJson('invalid_request')))).toBe(false);
    expect(mayHaveBeenCharged(answer(429, '<html>slow down</html>'))).toBe(false);
    expect(mayHaveBeenCharged(answer(503, '<html>busy</html>', { 'retry-after': '5' }))).toBe(false);
    // A gateway's limiter (nginx limit_req) answers 503 with a page and no Retry-After: the request
    // never reached the service.
    expect(mayHaveBeenCharged(answer(503, '<html>503 Service Temporarily Unavailable</html>'))).toBe(false);
    expect(mayHaveBeenCharged(answer(503, ''))).toBe(false);
    expect(mayHaveBeenCharged(answer(503, problemJson('search_unavailable')))).toBe(false);
    expect(mayHaveBeenCharged(answer(500, problemJson('internal_error')))).toBe(false);
    expect(mayHaveBeenCharged(answer(404, ''))).toBe(false);
    expect(mayHaveBeenCharged(transport('ECONNREFUSED'))).toBe(false);
    expect(mayHaveBeenCharged(transport('ENOTFOUND'))).toBe(false);
    expect(mayHaveBeenCharged(transport('UND_ERR_CONNECT_TIMEOUT'))).toBe(false);
    expect(mayHaveBeenCharged(transport('DEPTH_ZERO_SELF_SIGNED_CERT'))).toBe(false);
    expect(mayHaveBeenCharged(new Problem({ code: 'insecure_http', source: 'client' }))).toBe(false);
  });
});

describe('isRateRefusal', () => {
  it("is a 429, or a 503 that is not the service's own problem", () => {
    expect(isRateRefusal(answer(429, problemJson('rate_limited')))).toBe(true);
    expect(isRateRefusal(answer(429, '<html>slow down</html>'))).toBe(true);
    expect(isRateRefusal(answer(503, '<html>503 Service Temporarily Unavailable</html>'))).toBe(true);
    expect(isRateRefusal(answer(503, problemJson('search_unavailable')))).toBe(false);
    expect(isRateRefusal(answer(502, '<html>Bad Gateway</html>'))).toBe(false);
    expect(isRateRefusal(answer(504, '<html>Gateway Time-out</html>'))).toBe(false);
    expect(isRateRefusal(transport('ECONNRESET'))).toBe(false);
  });
});
