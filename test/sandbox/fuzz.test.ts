// Random query strings and bodies for every endpoint: each answer must be a well-formed problem of
// the catalog (or not_found) or a well-formed 200 result. Never a crash (500), never a hang.
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../src/error-catalog.js';
import { SHOWCASE } from '../../src/sandbox/dataset.js';
import { anyCodePointText, webPathText, webUrlText } from '../helpers/arbitraries.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await startTestSandbox({ companies: 1000 });
});
afterAll(async () => {
  await sb?.close();
});

const STATUS = new Map<string, number>([
  ...ERROR_CATALOG.map((e) => [e.code, e.http_status] as const),
  ['not_found', 404],
]);
const RUNS = 40;

const PARAMS = [
  'products',
  'include',
  'max_credits',
  'query',
  'query_operator',
  'filters',
  'limit',
  'breakdown',
  'population',
  'breakdown_limit',
  'k',
  'include_evidence',
  'exclude_domains',
  'unknown',
];

// Mostly plausible values, so the fuzzer gets past the first check often enough to reach the engine.
const value = fc.oneof(
  fc.string(),
  anyCodePointText,
  fc.integer({ min: -5, max: 5000 }).map(String),
  fc.constantFrom(
    'profile',
    'profile,tech',
    'tech,leads',
    'domain,company_name',
    'lead_email',
    'and',
    'or',
    'xor',
  ),
  fc.constantFrom(
    'country',
    'site_category',
    'primary_platform',
    'founded_year',
    'ecommerce',
    'all',
    'true',
    'false',
  ),
  fc.constantFrom(
    '{"country":["US"]}',
    '{"tech":"shopify"}',
    '{"country":[1]}',
    '[]',
    '{',
    'null',
    '{"x":["y"]}',
  ),
  fc.json(),
);
const query = fc.dictionary(fc.constantFrom(...PARAMS), value, { maxKeys: 5 });
const domainParam = fc.oneof(
  fc.constantFrom(...Object.values(SHOWCASE), 'no-such-company.example', ''),
  fc.domain(),
  webUrlText,
  fc.string(),
);
const keyChoice = fc.constantFrom<'full' | 'free' | 'restricted' | 'empty' | 'bogus' | 'none'>(
  'full',
  'free',
  'restricted',
  'empty',
  'bogus',
  'none',
);

function authHeaders(choice: string): Record<string, string> {
  if (choice === 'none') return {};
  const key = choice === 'bogus' ? 'cd_bogus' : sb.keys[choice as keyof SandboxHandle['keys']];
  return { authorization: `Bearer ${key}` };
}

async function send(path: string, headers: Record<string, string>, method = 'GET', body?: string | Buffer) {
  const res = await request(`${sb.url}${path}`, {
    method,
    headers,
    body,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

type Shape = 'domains' | 'search' | 'lookalike' | 'any';

/** The invariants every answer keeps; returns nothing, throws on a violation. */
function checkAnswer(res: Awaited<ReturnType<typeof send>>, shape: Shape, authenticated: boolean): void {
  expect(res.status).not.toBe(500);
  const body = JSON.parse(res.text) as Record<string, unknown>;
  expect(body !== null && typeof body === 'object' && !Array.isArray(body)).toBe(true);
  if (res.status === 200) {
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const credits = body.credits as { charged: number } | undefined;
    if (shape === 'domains') {
      expect(typeof body.found).toBe('boolean');
      if (body.found === false) expect(body.code).toBe('domain_not_found');
    } else if (shape === 'lookalike') {
      expect(typeof body.found).toBe('boolean');
      expect(Array.isArray(body.results)).toBe(true);
      if (body.found === false) expect(body.code).toBe('lookalike_not_available');
    } else if (shape === 'search') {
      expect(
        Array.isArray(body.rows) || (body.breakdown !== null && typeof body.breakdown === 'object'),
      ).toBe(true);
    }
    if (shape !== 'any' && authenticated) {
      expect(Number.isInteger(credits?.charged)).toBe(true);
      expect(res.headers['x-credits-charged']).toBe(String(credits?.charged));
    }
  } else {
    expect(res.headers['content-type']).toBe('application/problem+json');
    const code = body.code as string;
    expect(STATUS.has(code)).toBe(true);
    expect(res.status === 405 && code === 'invalid_request' ? 405 : STATUS.get(code)).toBe(res.status);
    expect(body.status).toBe(res.status);
    expect(body.type).toBe(`https://sandbox.company-data.dev/problems/${code.replaceAll('_', '-')}`);
    expect(typeof body.title).toBe('string');
    expect(typeof body.detail).toBe('string');
    expect(code).not.toBe('internal_error');
  }
  if (authenticated && shape !== 'any') {
    expect(res.headers['x-credits-charged']).toMatch(/^\d+$/);
    expect(res.headers['x-credits-remaining']).toMatch(/^\d+$/);
  }
}

const isValidKey = (choice: string) => choice !== 'bogus' && choice !== 'none';
const qs = (q: Record<string, string>) => (Object.keys(q).length ? `?${new URLSearchParams(q)}` : '');

describe('fuzzing every endpoint', () => {
  it('GET /api/domains/{domain}', async () => {
    await fc.assert(
      fc.asyncProperty(domainParam, query, keyChoice, async (domain, q, key) => {
        const res = await send(`/api/domains/${encodeURIComponent(domain)}${qs(q)}`, authHeaders(key));
        checkAnswer(res, 'domains', isValidKey(key));
      }),
      { numRuns: RUNS },
    );
  });

  it('GET /api/search', async () => {
    await fc.assert(
      fc.asyncProperty(query, keyChoice, async (q, key) => {
        checkAnswer(await send(`/api/search${qs(q)}`, authHeaders(key)), 'search', isValidKey(key));
      }),
      { numRuns: RUNS },
    );
  });

  it('POST /api/search with random bodies and content types', async () => {
    const member = fc.oneof(
      value,
      fc.array(value, { maxLength: 4 }),
      fc.dictionary(fc.string(), fc.array(value)),
    );
    const exclusions = fc.array(fc.oneof(fc.domain(), webUrlText, fc.string(), fc.integer()), {
      maxLength: 30,
    });
    const body = fc.oneof(
      fc.dictionary(fc.constantFrom(...PARAMS), member, { maxKeys: 5 }).map((o) => JSON.stringify(o)),
      fc.record({ query: fc.string(), exclude_domains: exclusions }).map((o) => JSON.stringify(o)),
      fc.json(),
      fc.string(),
    );
    const contentType = fc.constantFrom(
      'application/json',
      'Application/JSON; charset=utf-8',
      'text/plain',
      '',
    );
    await fc.assert(
      fc.asyncProperty(body, contentType, keyChoice, async (text, type, key) => {
        const headers = { ...authHeaders(key), ...(type ? { 'content-type': type } : {}) };
        checkAnswer(await send('/api/search', headers, 'POST', text), 'search', isValidKey(key));
      }),
      { numRuns: RUNS },
    );
  });

  it('GET /api/lookalike/{domain}', async () => {
    await fc.assert(
      fc.asyncProperty(domainParam, query, keyChoice, async (domain, q, key) => {
        const res = await send(`/api/lookalike/${encodeURIComponent(domain)}${qs(q)}`, authHeaders(key));
        checkAnswer(res, 'lookalike', isValidKey(key));
      }),
      { numRuns: RUNS },
    );
  });

  it('other paths, public endpoints and methods', async () => {
    const path = fc.oneof(
      fc.constantFrom(
        '/api/me',
        '/api/products',
        '/api/fields',
        '/api/errors',
        '/api/search',
        '/api/domains/',
      ),
      webPathText.map((p) => `/api${p}`),
      fc.string().map((s) => `/api/${encodeURIComponent(s)}`),
    );
    const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH');
    await fc.assert(
      fc.asyncProperty(path, query, method, keyChoice, async (p, q, m, key) => {
        const res = await send(`${p}${qs(q)}`, authHeaders(key), m, m === 'GET' ? undefined : '{}');
        checkAnswer(res, 'any', isValidKey(key));
      }),
      { numRuns: RUNS },
    );
  });

  it('still answers normally after all that', async () => {
    const res = await send(`/api/domains/${SHOWCASE.acme}`, authHeaders('full'));
    expect(res.status).toBe(200);
  });
});
