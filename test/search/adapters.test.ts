import { describe, expect, it } from 'vitest';
import { adaptLookalikeResponse, buildLookalikeCall } from '../../src/api/lookalike.js';
import {
  adaptBreakdownResponse,
  adaptSearchResponse,
  buildBreakdownCall,
  buildSearchCall,
  MAX_BODY_BYTES,
} from '../../src/api/search.js';
import { Problem } from '../../src/problem.js';
import { summariseEvidence } from '../../src/search/evidence.js';

const ROWS = [
  { domain: 'a.com', company_name: 'A' },
  { domain: 'b.com', company_name: 'B' },
];

describe('building search calls', () => {
  it('uses GET with query parameters, filters as JSON text, when there are no exclusions', () => {
    const call = buildSearchCall({
      query: 'shopify shoes',
      operator: 'or',
      filters: { country: ['US'] },
      include: ['domain', 'tech'],
      limit: 5,
    });
    expect(call).toEqual({
      method: 'GET',
      path: '/api/search',
      auth: true,
      query: {
        query: 'shopify shoes',
        query_operator: 'or',
        filters: '{"country":["US"]}',
        include: 'domain,tech',
        limit: 5,
      },
    });
  });

  it('leaves out empty query, filters and include', () => {
    const call = buildSearchCall({ query: '  ', filters: {} });
    expect(call.query).toEqual({
      query: undefined,
      query_operator: undefined,
      filters: undefined,
      include: undefined,
      limit: undefined,
    });
  });

  it('uses POST with filters as an object and include as a string when there are exclusions', () => {
    const call = buildSearchCall({
      query: 'shoes',
      filters: { country: ['US', 'GB'] },
      include: ['domain', 'country'],
      limit: 10,
      excludeDomains: ['a.com'],
    });
    expect(call.method).toBe('POST');
    expect(call.query).toBeUndefined();
    expect(call.body).toEqual({
      query: 'shoes',
      query_operator: undefined,
      filters: { country: ['US', 'GB'] },
      include: 'domain,country',
      limit: 10,
      exclude_domains: ['a.com'],
    });
  });

  it('refuses a body over 5 MB before sending', () => {
    const long = `${'x'.repeat(240)}.com`;
    const domains = Array.from({ length: 20_000 }, (_, i) => `${i}${long}`);
    expect(Buffer.byteLength(JSON.stringify(domains))).toBeGreaterThan(MAX_BODY_BYTES);
    let problem: unknown;
    try {
      buildSearchCall({ filters: {}, excludeDomains: domains });
    } catch (error) {
      problem = error;
    }
    expect(problem).toBeInstanceOf(Problem);
    expect((problem as Problem).exitCode).toBe(2);
    expect((problem as Problem).detail).toMatch(/the search body would be [\d,]+ bytes/);
  });

  it('builds breakdown and lookalike calls', () => {
    expect(
      buildBreakdownCall({ field: 'country', query: 'shoes', filters: {}, population: 'ecommerce', limit: 3 })
        .query,
    ).toEqual({
      query: 'shoes',
      query_operator: undefined,
      filters: undefined,
      breakdown: 'country',
      population: 'ecommerce',
      breakdown_limit: 3,
    });
    const lookalike = buildLookalikeCall({
      seed: 'acme.com',
      k: 5,
      filters: { tech: ['x'] },
      evidence: true,
    });
    expect(lookalike.path).toBe('/api/lookalike/acme.com');
    expect(lookalike.query).toEqual({
      k: 5,
      filters: '{"tech":["x"]}',
      include: undefined,
      include_evidence: true,
    });
  });
});

describe('adaptSearchResponse', () => {
  it('reads the contract envelope and keeps its members', () => {
    const result = adaptSearchResponse({
      query: 'x',
      total: 42,
      limit: 2,
      rows: ROWS,
      credits: { charged: 1 },
    });
    expect(result?.total).toBe(42);
    expect(result?.rows).toEqual(ROWS);
    expect(result?.document).toEqual({
      query: 'x',
      total: 42,
      limit: 2,
      rows: ROWS,
      credits: { charged: 1 },
    });
  });

  it.each([
    ['results', { results: ROWS, total: 9 }, 9],
    ['companies', { companies: ROWS }, 2],
    ['data', { data: ROWS, meta: { total: 7 } }, 7],
    ['items', { items: ROWS, total_count: 3 }, 3],
    ['nested data', { data: { rows: ROWS } }, 2],
    ['first array of objects', { hits: ROWS, took_ms: 3 }, 2],
    ['bare array', ROWS, 2],
  ])('finds rows under %s', (_name, body, total) => {
    const result = adaptSearchResponse(body);
    expect(result?.rows).toEqual(ROWS);
    expect(result?.total).toBe(total);
    expect(result?.document.rows).toEqual(ROWS);
  });

  it('says whether the total was reported (paging needs to know when a segment ends)', () => {
    expect(adaptSearchResponse({ rows: ROWS, total: 42 })?.totalReported).toBe(true);
    expect(adaptSearchResponse({ data: ROWS, meta: { total: 7 } })?.totalReported).toBe(true);
    const missing = adaptSearchResponse({ rows: ROWS });
    expect(missing?.totalReported).toBe(false);
    expect(missing?.total).toBe(2);
  });

  it('reads an empty result and a list of domains', () => {
    expect(adaptSearchResponse({ rows: [], total: 0 })?.rows).toEqual([]);
    expect(adaptSearchResponse({ results: ['a.com'] })?.rows).toEqual([{ domain: 'a.com' }]);
  });

  it('gives up (so the command prints the raw body) when there is no row array', () => {
    for (const body of [null, 'text', 42, { message: 'hello' }, { rows: [1, 2] }]) {
      expect(adaptSearchResponse(body)).toBeUndefined();
    }
  });
});

describe('adaptBreakdownResponse', () => {
  const contract = {
    breakdown: {
      field: 'country',
      population: 'ecommerce',
      segment: { description: 'ecommerce companies matching "shoes"', size: 100 },
      coverage: { with_value: 90, missing: 10, ratio: 0.9 },
      buckets: [
        { value: 'US', count: 60, share: 0.6667 },
        { value: 'GB', count: 20, share: 0.2222 },
      ],
      other: { buckets: 3, count: 10 },
    },
    credits: { charged: 1 },
  };

  it('reads the contract shape', () => {
    const result = adaptBreakdownResponse(contract);
    expect(result?.field).toBe('country');
    expect(result?.segment).toEqual({ description: 'ecommerce companies matching "shoes"', size: 100 });
    expect(result?.coverage).toEqual({ with_value: 90, missing: 10, ratio: 0.9 });
    expect(result?.buckets[0]).toEqual({ value: 'US', count: 60, share: 0.6667 });
    expect(result?.other).toEqual({ buckets: 3, count: 10 });
    expect(result?.document.buckets).toEqual(contract.breakdown.buckets);
  });

  it('reads a flat envelope with other names, computing shares and coverage', () => {
    const result = adaptBreakdownResponse({
      field: 'country',
      total: 50,
      missing: 10,
      values: [
        { key: 'US', doc_count: 30 },
        { key: 'DE', doc_count: 10 },
      ],
    });
    expect(result?.segment.size).toBe(50);
    expect(result?.coverage.with_value).toBe(40);
    expect(result?.buckets).toEqual([
      { value: 'US', count: 30, share: 0.75 },
      { value: 'DE', count: 10, share: 0.25 },
    ]);
    expect(result?.other).toBeUndefined();
  });

  it('gives up on a body without buckets', () => {
    expect(adaptBreakdownResponse({ rows: [{ domain: 'a.com' }] })).toBeUndefined();
    expect(adaptBreakdownResponse('nope')).toBeUndefined();
  });
});

describe('adaptLookalikeResponse', () => {
  it('reads found results in rank order with evidence kept', () => {
    const result = adaptLookalikeResponse({
      found: true,
      seed: 'acme.com',
      results: [
        { rank: 2, score: 0.5, domain: 'b.com' },
        { rank: 1, score: 0.8, domain: 'a.com', evidence: { shared_tech: ['shopify'] } },
      ],
    });
    expect(result?.found).toBe(true);
    expect(result?.seed).toBe('acme.com');
    expect(result?.candidates.map((c) => c.domain)).toEqual(['a.com', 'b.com']);
    expect(result?.document.results).toEqual(result?.candidates);
    expect(result?.candidates[0]?.evidence).toEqual({
      shared_tech: ['shopify'],
    });
  });

  it('reads not-found answers with or without found', () => {
    const notFound = adaptLookalikeResponse({
      found: false,
      seed: 'x.com',
      code: 'lookalike_not_available',
      results: [],
    });
    expect(notFound?.found).toBe(false);
    expect(notFound?.document).toMatchObject({ found: false, seed: 'x.com', results: [] });
    expect(adaptLookalikeResponse({ code: 'lookalike_not_available' })?.found).toBe(false);
  });

  it('ranks candidates found under another name, without rank or score', () => {
    const result = adaptLookalikeResponse({
      candidates: [{ domain: 'a.com', similarity: 0.4 }, { domain: 'b.com' }],
    });
    expect(result?.found).toBe(true);
    expect(result?.candidates).toEqual([
      { domain: 'a.com', similarity: 0.4, rank: 1, score: 0.4 },
      { domain: 'b.com', rank: 2 },
    ]);
    expect(result?.document.candidates).toBeUndefined();
  });

  it('gives up on a body with no candidates and no found flag', () => {
    expect(adaptLookalikeResponse({ message: 'hi' })).toBeUndefined();
    expect(adaptLookalikeResponse(7)).toBeUndefined();
  });
});

describe('summariseEvidence', () => {
  it('summarises the contract evidence', () => {
    expect(
      summariseEvidence({
        shared_tech: ['shopify', 'klaviyo', 'stripe'],
        same_site_category: true,
        same_primary_platform: false,
        same_country: true,
      }),
    ).toBe('same category, country; 3 shared tech (shopify, klaviyo, stripe)');
  });

  it('shortens long lists, handles unknown shapes, and strips control characters', () => {
    expect(summariseEvidence({ shared_tech: ['a', 'b', 'c', 'd', 'e', 'f'] })).toBe(
      '6 shared tech (a, b, c, +3)',
    );
    expect(summariseEvidence({ distance_km: 12.345, note: 'x\x1b[31my' })).toBe(
      'distance km 12.35; note: xy',
    );
    expect(summariseEvidence(['same market', 'similar size'])).toBe('same market; similar size');
    expect(summariseEvidence({ same_team: true, verified: true, same_x: false })).toBe('same team; verified');
    expect(summariseEvidence(undefined)).toBe('');
  });
});
