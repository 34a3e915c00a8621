// The sandbox against the spec and docs/contract.md, over real HTTP: every code of the catalog,
// problem+json shape, charging through the balance, auth headers, exclusions, the request log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG, type ErrorCatalogEntry } from '../../src/error-catalog.js';
import { MISSING_DOMAIN, SHOWCASE } from '../../src/sandbox/dataset.js';
import {
  balanceOf,
  type CallOptions,
  type CallResult,
  call,
  readRequestLog,
  type SandboxHandle,
  startTestSandbox,
} from '../helpers/sandbox.js';

let sb: SandboxHandle;
let limited: SandboxHandle;
let published: Map<string, ErrorCatalogEntry>;

beforeAll(async () => {
  sb = await startTestSandbox();
  limited = await startTestSandbox({ companies: 100, rateLimit: 2 });
  const errors = await call(sb.url, '/api/errors');
  published = new Map((errors.json!.errors as ErrorCatalogEntry[]).map((e) => [e.code, e]));
});
afterAll(async () => {
  await sb?.close();
  await limited?.close();
});

const ACME = SHOWCASE.acme;
const SPEC_RETRYABLE = new Set([
  'rate_limited',
  'exclusion_filter_mismatch',
  'catalog_refresh_in_progress',
  'search_unavailable',
  'search_capability_unavailable',
  'search_timeout',
  'search_upstream_error',
  'internal_error',
]);
const TYPE_URI = /^https:\/\/sandbox\.company-data\.dev\/problems\/[a-z0-9]+(-[a-z0-9]+)*$/;

type Trigger = (keys: SandboxHandle['keys']) => [path: string, options: CallOptions];
const fault =
  (code: string): Trigger =>
  (k) => ['/api/search', { key: k.full, query: { query: 'shoes' }, headers: { 'x-sandbox-fault': code } }];

/** How each of the 27 codes is reached; faults only where no request can cause the code. */
const TRIGGERS: Record<string, Trigger> = {
  invalid_api_key: () => ['/api/me', { key: 'cd_live_not_a_real_key' }],
  invalid_field: (k) => [`/api/domains/${ACME}`, { key: k.full, query: { include: 'company_nme' } }],
  field_not_available_for_capability: (k) => [
    '/api/search',
    { key: k.full, query: { include: 'domain,lead_email' } },
  ],
  invalid_product: (k) => [`/api/domains/${ACME}`, { key: k.full, query: { products: 'profile,bogus' } }],
  field_not_in_product: (k) => [`/api/domains/${ACME}`, { key: k.full, query: { include: 'tech' } }],
  product_without_visible_fields: (k) => [
    `/api/domains/${ACME}`,
    { key: k.full, query: { products: 'profile,tech', include: 'company_name' } },
  ],
  max_credits_exceeded: (k) => [
    `/api/domains/${ACME}`,
    { key: k.full, query: { products: 'profile,tech', max_credits: '1' } },
  ],
  invalid_filter: (k) => ['/api/search', { key: k.full, query: { filters: '{"colour":["red"]}' } }],
  invalid_request: (k) => ['/api/search', { key: k.full, query: { limit: 'many' } }],
  invalid_exclude_domains: (k) => [
    '/api/search',
    { key: k.full, json: { query: 'shoes', exclude_domains: 'acme-shoes.com' } },
  ],
  upgrade_required: (k) => [`/api/domains/${ACME}`, { key: k.free, query: { products: 'profile,tech' } }],
  insufficient_credits: (k) => [`/api/domains/${ACME}`, { key: k.empty }],
  api_key_restricted: (k) => ['/api/search', { key: k.restricted, query: { query: 'shoes' } }],
  domain_not_found: (k) => [`/api/domains/${MISSING_DOMAIN}`, { key: k.full }],
  lookalike_not_available: (k) => [`/api/lookalike/${SHOWCASE.lonely}`, { key: k.full }],
  unsupported_media_type: (k) => [
    '/api/search',
    { key: k.full, body: '{"query":"shoes"}', headers: { 'content-type': 'text/plain' } },
  ],
  request_too_large: (k) => [
    '/api/search',
    { key: k.full, json: { query: 'shoes', pad: 'x'.repeat(5_000_000) } },
  ],
  rate_limited: fault('rate_limited'),
  exclusion_filter_mismatch: fault('exclusion_filter_mismatch'),
  catalog_refresh_in_progress: fault('catalog_refresh_in_progress'),
  search_unavailable: fault('search_unavailable'),
  search_capability_unavailable: fault('search_capability_unavailable'),
  search_timeout: fault('search_timeout'),
  search_limit_exceeded: (k) => [
    '/api/search',
    { key: k.full, query: { query: 'a1 b2 c3 d4 e5 f6 g7 h8 i9 j10 k11 l12 m13', query_operator: 'or' } },
  ],
  search_contract_error: fault('search_contract_error'),
  search_upstream_error: fault('search_upstream_error'),
  internal_error: fault('internal_error'),
};

function keyUsed(options: CallOptions): string | undefined {
  return Object.values(sb.keys).includes(options.key ?? '') ? options.key : undefined;
}

function expectProblem(res: CallResult, code: string): void {
  const entry = published.get(code)!;
  expect(res.status).toBe(entry.http_status);
  expect(res.headers['content-type']).toBe('application/problem+json');
  const body = res.json!;
  expect(Object.keys(body).sort()).toEqual(['code', 'detail', 'status', 'title', 'type']);
  expect(body.code).toBe(code);
  expect(body.status).toBe(entry.http_status);
  expect(body.title).toBe(entry.title);
  expect(typeof body.detail).toBe('string');
  expect(body.type).toMatch(TYPE_URI);
  expect(body.type).toBe(`https://sandbox.company-data.dev/problems/${code.replaceAll('_', '-')}`);
}

describe('every code of the catalog', () => {
  it('has a trigger for each of the 27 codes, and /api/errors publishes the shipped catalog', () => {
    expect(Object.keys(TRIGGERS).sort()).toEqual(ERROR_CATALOG.map((e) => e.code).sort());
    expect([...published.values()]).toEqual(ERROR_CATALOG);
  });

  it.each(ERROR_CATALOG.map((e) => e.code))('%s', async (code) => {
    const [path, options] = TRIGGERS[code](sb.keys);
    const key = keyUsed(options);
    const before = key ? await balanceOf(sb.url, key) : undefined;
    const res = await call(sb.url, path, options);
    const entry = published.get(code)!;
    if (entry.http_status === 200) {
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json).toMatchObject({ found: false, code });
    } else {
      expectProblem(res, code);
    }
    // The spec's table, written out independently of src/error-catalog.ts.
    expect(entry.retryable).toBe(SPEC_RETRYABLE.has(code));
    if (code === 'rate_limited') expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    if (key) {
      expect(entry.charged).toBe(false);
      expect(res.headers['x-credits-charged']).toBe('0');
      expect(await balanceOf(sb.url, key)).toBe(before);
      expect(res.headers['x-credits-remaining']).toBe(String(before));
    }
  });

  it('rate_limited comes from the per-key window too, with Retry-After >= 1', async () => {
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await call(limited.url, '/api/me', { key: limited.keys.full }));
    const refused = results.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expectProblem(refused[0], 'rate_limited');
    expect(Number(refused[0].headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another key has its own window.
    expect((await call(limited.url, '/api/me', { key: limited.keys.free })).status).toBe(200);
  });

  it('an oversized body sent without Content-Length (chunked) is refused with 413 as well', async () => {
    async function* chunks() {
      yield '{"query":"shoes","pad":"';
      for (let i = 0; i < 6; i++) yield 'y'.repeat(1_000_000);
      yield '"}';
    }
    const { request } = await import('undici');
    const { Readable } = await import('node:stream');
    const res = await request(`${sb.url}/api/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sb.keys.full}`, 'content-type': 'application/json' },
      body: Readable.from(chunks()),
    });
    expect(res.statusCode).toBe(413);
    expect(((await res.body.json()) as { code: string }).code).toBe('request_too_large');
  });

  it('unknown paths give 404 not_found and wrong methods 405 invalid_request', async () => {
    const missing = await call(sb.url, '/api/companies', { key: sb.keys.full });
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toBe('application/problem+json');
    expect(missing.json).toMatchObject({
      code: 'not_found',
      status: 404,
      type: `${'https://sandbox.company-data.dev/problems'}/not-found`,
    });
    const wrong = await call(sb.url, '/api/me', { key: sb.keys.full, method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.json).toMatchObject({ code: 'invalid_request', status: 405 });
    expect(wrong.headers.allow).toBe('GET');
  });

  it('unparsable JSON in a POST body is invalid_request', async () => {
    const res = await call(sb.url, '/api/search', {
      key: sb.keys.full,
      body: '{"query": "shoes",',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expectProblem(res, 'invalid_request');
  });
});

describe('charging and credit headers', () => {
  it('a found record costs 1 by default, per product with more products; not found costs 0', async () => {
    const start = await balanceOf(sb.url, sb.keys.full);
    const found = await call(sb.url, `/api/domains/${ACME}`, { key: sb.keys.full });
    expect(found.json).toMatchObject({ found: true, domain: ACME, credits: { charged: 1 } });
    expect(found.headers['x-credits-charged']).toBe('1');
    expect(found.headers['x-credits-remaining']).toBe(String(start - 1));
    const both = await call(sb.url, `/api/domains/${ACME}`, {
      key: sb.keys.full,
      query: { products: 'profile,tech' },
    });
    expect(both.json).toMatchObject({
      found: true,
      credits: { charged: 2, products: { profile: 1, tech: 1 } },
    });
    const missing = await call(sb.url, `/api/domains/${MISSING_DOMAIN}`, { key: sb.keys.full });
    expect(missing.json).toMatchObject({ found: false, code: 'domain_not_found', credits: { charged: 0 } });
    expect(missing.headers['x-credits-charged']).toBe('0');
    expect(await balanceOf(sb.url, sb.keys.full)).toBe(start - 3);
    expect(sb.balances().full).toBe(start - 3);
  });

  it('/api/me never charges and public endpoints need no key and carry no credit headers', async () => {
    const me = await call(sb.url, '/api/me', { key: sb.keys.free });
    expect(me.json).toMatchObject({ plan: 'free', key_name: 'free', balance: 1000 });
    expect(me.headers['x-credits-charged']).toBe('0');
    expect(me.headers['x-credits-remaining']).toBe('1000');
    for (const path of ['/api/products', '/api/fields', '/api/errors']) {
      const res = await call(sb.url, path);
      expect(res.status).toBe(200);
      expect(res.headers['x-credits-charged']).toBeUndefined();
    }
  });
});

describe('authentication', () => {
  it('accepts x-api-key and Authorization: Bearer; Bearer wins when both are sent', async () => {
    expect((await call(sb.url, '/api/me', { key: sb.keys.full, auth: 'x-api-key' })).json).toMatchObject({
      key_name: 'full',
    });
    const bearerWins = await call(sb.url, '/api/me', {
      key: sb.keys.full,
      headers: { 'x-api-key': sb.keys.free },
    });
    expect(bearerWins.json).toMatchObject({ key_name: 'full' });
    const badBearer = await call(sb.url, '/api/me', { key: 'wrong', headers: { 'x-api-key': sb.keys.full } });
    expectProblem(badBearer, 'invalid_api_key');
    expectProblem(await call(sb.url, '/api/me'), 'invalid_api_key');
  });
});

describe('exclusions', () => {
  it('an excluded domain written as https://WWW.Domain/x is really absent', async () => {
    const base = { query: '', limit: 5 };
    const first = await call(sb.url, '/api/search', { key: sb.keys.full, json: base });
    const rows = first.json!.rows as Array<{ domain: string }>;
    const target = rows[0].domain;
    const excluded = await call(sb.url, '/api/search', {
      key: sb.keys.full,
      json: { ...base, exclude_domains: [`https://WWW.${target.toUpperCase()}/x?y=1`] },
    });
    expect(excluded.status).toBe(200);
    const domains = (excluded.json!.rows as Array<{ domain: string }>).map((r) => r.domain);
    expect(domains).not.toContain(target);
    expect(domains).toContain(rows[1].domain);
    expect(excluded.json!.total).toBe((first.json!.total as number) - 1);
  });
});

describe('request log', () => {
  it('records method, path, query and auth kind, never the key', async () => {
    const secret = 'cd_live_leaked_Secret_9f8e7d';
    await call(sb.url, `/api/domains/${ACME}`, { key: sb.keys.full, query: { products: 'profile' } });
    await call(sb.url, '/api/search', { key: sb.keys.free, auth: 'x-api-key', json: { query: 'shoes' } });
    await call(sb.url, '/api/me', { key: secret, query: { echo: secret } });
    const log = await readRequestLog(sb.url);
    const [lookup, post, bad] = log.slice(-3);
    expect(lookup).toMatchObject({
      method: 'GET',
      path: `/api/domains/${ACME}`,
      query: 'products=profile',
      auth: 'bearer',
      key_name: 'full',
      status: 200,
      fault: null,
    });
    expect(post).toMatchObject({
      method: 'POST',
      path: '/api/search',
      auth: 'x-api-key',
      key_name: 'free',
      content_type: 'application/json',
    });
    expect(post.body_bytes).toBe(JSON.stringify({ query: 'shoes' }).length);
    expect(bad).toMatchObject({ auth: 'bearer', key_name: null, status: 401 });
    expect(bad.seq).toBeGreaterThan(post.seq);
    const text = JSON.stringify(log);
    for (const key of [...Object.values(sb.keys), secret]) expect(text).not.toContain(key);
    expect(sb.requests().length).toBe(log.length);
  });
});
