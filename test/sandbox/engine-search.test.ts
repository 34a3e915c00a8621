// The sandbox engine: search rows and breakdowns.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CATEGORIES, COUNTRIES } from '../../src/sandbox/catalogs.js';
import { SHOWCASE } from '../../src/sandbox/dataset.js';
import { type Caller, runSearch, type SearchInput } from '../../src/sandbox/engine.js';
import { broke, code, domains, ds, free, ok, pro, search } from './engine-fixtures.js';

describe('runSearch rows', () => {
  it('matches all terms with and, any with or, by prefix, ignoring stop words', () => {
    const and = ok(search({ query: 'shopify shoes companies in the US', limit: '1000' })).body;
    expect(and.total).toBeGreaterThan(0);
    for (const domain of domains(and.rows)) {
      const c = ds.byDomain.get(domain as string);
      expect([...(c?.tech ?? []), c?.primary_platform]).toContain('shopify');
      expect(c?.country).toBe('US');
    }
    const or = ok(search({ query: 'shopify shoes', query_operator: 'or' })).body;
    expect(or.total).toBeGreaterThan(ok(search({ query: 'shopify shoes' })).body.total);
    expect(ok(search({ query: 'sneak' })).body.total).toBe(ok(search({ query: 'sneakers' })).body.total);
    expect(domains(ok(search({ query: 'germany coffee', limit: '1000' })).body.rows)).toContain(SHOWCASE.idn);
    expect(ok(search({ query: 'the of and' })).body.total).toBe(ds.companies.length);
    expect(domains(ok(search({ query: 'MÜNCHNER kaff' })).body.rows)).toEqual([SHOWCASE.idn]);
    const withTagManager = ds.companies.filter((c) => c.tech.includes('google_tag_manager')).length;
    expect(ok(search({ query: 'manager' })).body.total).toBe(withTagManager);
  });

  it('orders by matched terms, then popularity', () => {
    const { rows } = ok(search({ query: 'klaviyo fashion', query_operator: 'or', limit: '1000' })).body;
    const key = (domain: unknown) => {
      const c = ds.byDomain.get(domain as string);
      const matched = Number(c?.tech.includes('klaviyo')) + Number(c?.site_category === 'fashion');
      return [-matched, c?.popularity ?? 0];
    };
    const keys = rows.map((r) => key(r.domain));
    const sorted = [...keys].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    expect(keys).toEqual(sorted);
    expect(keys[0][0]).toBe(-2);
  });

  it('applies filters, include and limit', () => {
    const filters = JSON.stringify({ country: ['DE', 'FR'], tech: 'klarna' });
    const { body, charged } = ok(search({ filters, include: 'company_name,tech', limit: '7' }));
    expect(charged).toBe(1);
    expect(body.rows).toHaveLength(7);
    expect(body).toMatchObject({ query: '', query_operator: 'and', limit: 7 });
    for (const row of body.rows) {
      expect(Object.keys(row)).toEqual(['domain', 'company_name', 'tech']);
      const c = ds.byDomain.get(row.domain as string);
      expect(['DE', 'FR']).toContain(c?.country);
      expect(c?.tech).toContain('klarna');
    }
    const defaults = ok(search({ query: 'shoes' })).body;
    expect(defaults.limit).toBe(25);
    expect(Object.keys(defaults.rows[0])).toEqual(['domain', 'company_name', 'country', 'site_category']);
    expect(ok(search({ limit: '1000' })).body.rows).toHaveLength(1000);
  });

  it('charges nothing for an empty result, even at a zero balance', () => {
    expect(ok(search({ query: 'zzzzqqq' }, broke))).toMatchObject({
      charged: 0,
      body: { total: 0, rows: [] },
    });
    expect(code(search({ query: 'shoes' }, broke))).toBe('insufficient_credits');
  });

  it('excludes domains given as URLs or in upper case (POST)', () => {
    const top = domains(ok(search({ query: 'shoes', limit: '3' })).body.rows) as string[];
    const exclude_domains = [`https://www.${top[0]}/home`, top[1].toUpperCase()];
    const after = ok(search({ query: 'shoes', limit: '3', exclude_domains }, pro, 'POST')).body;
    expect(domains(after.rows)).not.toContain(top[0]);
    expect(domains(after.rows)).not.toContain(top[1]);
    expect(after.rows[0].domain).toBe(top[2]);
    expect(after.total).toBe(ok(search({ query: 'shoes' })).body.total - 2);
  });

  it.each<[string, SearchInput, 'GET' | 'POST', Caller, string]>([
    ['bad operator', { query: 'x', query_operator: 'xor' }, 'GET', pro, 'invalid_request'],
    ['query not a string', { query: 42 }, 'POST', pro, 'invalid_request'],
    ['filters not JSON', { filters: '{country' }, 'GET', pro, 'invalid_request'],
    ['filters as a string in POST', { filters: '{"country":["US"]}' }, 'POST', pro, 'invalid_request'],
    ['filter values not strings', { filters: '{"country":[1]}' }, 'GET', pro, 'invalid_request'],
    ['unknown filter', { filters: '{"county":["US"]}' }, 'GET', pro, 'invalid_filter'],
    ['value outside the enum', { filters: '{"country":["us"]}' }, 'GET', pro, 'invalid_filter'],
    ['unknown include', { include: 'domain,nme' }, 'GET', pro, 'invalid_field'],
    ['lead field', { include: 'domain,lead_email' }, 'GET', pro, 'field_not_available_for_capability'],
    ['limit too large', { limit: '1001' }, 'GET', pro, 'invalid_request'],
    ['limit not a number', { limit: 'ten' }, 'GET', pro, 'invalid_request'],
    ['free plan, tech include', { include: 'domain,tech' }, 'GET', free, 'upgrade_required'],
    [
      'free plan, tech filter',
      { filters: '{"primary_platform":["shopify"]}' },
      'GET',
      free,
      'upgrade_required',
    ],
    [
      '13 terms',
      { query: 'a1 b2 c3 d4 e5 f6 g7 h8 i9 j10 k11 l12 m13' },
      'GET',
      pro,
      'search_limit_exceeded',
    ],
    [
      '201 filter values',
      { filters: { tech: Array(201).fill('stripe') } },
      'POST',
      pro,
      'search_limit_exceeded',
    ],
    ['exclusions in GET', { exclude_domains: 'acme-shoes.com' }, 'GET', pro, 'invalid_request'],
    [
      'exclusions not an array',
      { exclude_domains: 'acme-shoes.com' },
      'POST',
      pro,
      'invalid_exclude_domains',
    ],
    [
      'exclusion not a domain',
      { exclude_domains: ['ok.com', 'ftp://x.com'] },
      'POST',
      pro,
      'invalid_exclude_domains',
    ],
    [
      '20,001 exclusions',
      { exclude_domains: Array(20_001).fill('a.com') },
      'POST',
      pro,
      'invalid_exclude_domains',
    ],
  ])('$0 -> $4', (_name, input, via, caller, expected) => {
    expect(code(search(input, caller, via))).toBe(expected);
  });

  it('accepts 20,000 exclusions and 12 terms', () => {
    const exclude_domains = Array.from({ length: 20_000 }, (_, i) => `x${i}.com`);
    expect(ok(search({ exclude_domains }, pro, 'POST')).charged).toBe(1);
    expect(
      ok(search({ query: 'zq1 zq2 zq3 zq4 zq5 zq6 zq7 zq8 zq9 zq10 zq11 zq12', query_operator: 'or' }))
        .charged,
    ).toBe(0);
  });

  it('gives search_timeout when the execution bound passes', () => {
    const outcome = runSearch(ds, { query: 'shoes' }, 'GET', pro, { timeLimitMs: 0 });
    expect(code(outcome)).toBe('search_timeout');
    expect(code(runSearch(ds, { breakdown: 'country' }, 'GET', pro, { timeLimitMs: 0 }))).toBe(
      'search_timeout',
    );
  });
});

describe('runSearch breakdown', () => {
  type Breakdown = {
    segment: { size: number };
    coverage: { with_value: number; missing: number; ratio: number };
    buckets: Array<{ value: string; count: number; share: number }>;
    other: { buckets: number; count: number };
  };
  const breakdown = (input: SearchInput, caller: Caller = pro) =>
    ok(search(input, caller)).body.breakdown as Breakdown;

  it('counts the segment, its coverage and buckets', () => {
    const b = breakdown({
      query: 'shoes',
      breakdown: 'country',
      population: 'ecommerce',
      breakdown_limit: '3',
    });
    expect(b).toMatchObject({ field: 'country', population: 'ecommerce' });
    expect(b.buckets.map((x) => x.value)).toEqual(['US', 'GB', 'DE']);
    expect(b.other.buckets).toBeGreaterThan(0);
    const all = breakdown({ breakdown: 'site_category', breakdown_limit: '100' });
    expect(all.segment.size).toBe(ds.companies.length);
    expect(all.coverage.missing).toBe(ds.companies.filter((c) => c.site_category === null).length);
    expect(all.buckets.map((x) => x.value).sort()).toEqual([...CATEGORIES].sort());
    expect(ok(search({ query: 'zzzzqqq', breakdown: 'country' }, broke)).charged).toBe(0);
    expect(code(search({ breakdown: 'country' }, broke))).toBe('insufficient_credits');
  });

  it.each<[SearchInput, Caller, string]>([
    [{ breakdown: 'tech' }, pro, 'invalid_request'],
    [{ breakdown: 'country', population: 'everyone' }, pro, 'invalid_request'],
    [{ breakdown: 'country', breakdown_limit: '101' }, pro, 'invalid_request'],
    [{ breakdown: 'primary_platform' }, free, 'upgrade_required'],
  ])('$0 -> $2', (input, caller, expected) => {
    expect(code(search(input, caller))).toBe(expected);
  });

  it('names the facets when the field is not one', () => {
    const outcome = search({ breakdown: 'founded_year' });
    expect(outcome.ok ? '' : outcome.detail).toMatch(
      /country, site_category, employee_range, primary_platform/,
    );
  });

  it('keeps sum(buckets) + other + missing = segment size (property)', () => {
    const words = [
      'shoes',
      'shopify',
      'coffee',
      's',
      'us',
      'germany',
      'klaviyo',
      'fashion',
      'zzq',
      'home',
      'stripe',
    ];
    const input = fc.record({
      query: fc.subarray(words).map((w) => w.join(' ')),
      query_operator: fc.constantFrom('and', 'or'),
      filters: fc.record(
        {
          country: fc.subarray(COUNTRIES, { minLength: 1 }),
          site_category: fc.subarray(CATEGORIES, { minLength: 1 }),
        },
        { requiredKeys: [] },
      ),
      breakdown: fc.constantFrom('country', 'site_category', 'employee_range', 'primary_platform'),
      population: fc.constantFrom('all', 'ecommerce'),
      breakdown_limit: fc.integer({ min: 1, max: 100 }),
    });
    fc.assert(
      fc.property(input, (raw) => {
        const b = breakdown({
          ...raw,
          filters: JSON.stringify(raw.filters),
          breakdown_limit: String(raw.breakdown_limit),
        });
        const inBuckets = b.buckets.reduce((sum, x) => sum + x.count, 0);
        expect(inBuckets + b.other.count + b.coverage.missing).toBe(b.segment.size);
        expect(b.coverage.with_value + b.coverage.missing).toBe(b.segment.size);
        expect(b.buckets.length).toBeLessThanOrEqual(raw.breakdown_limit);
        for (const x of b.buckets)
          expect(Math.abs(x.share - x.count / b.coverage.with_value)).toBeLessThanOrEqual(0.00005 + 1e-12);
        if (raw.population === 'all') {
          const rows = ok(
            search({
              query: raw.query,
              query_operator: raw.query_operator,
              filters: JSON.stringify(raw.filters),
            }),
          );
          expect(rows.body.total).toBe(b.segment.size);
        }
      }),
      { numRuns: 60 },
    );
  });
});
