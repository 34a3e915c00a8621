// The sandbox engine: domain normalisation, lookups and lookalike.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MISSING_DOMAIN, SHOWCASE } from '../../src/sandbox/dataset.js';
import { type Caller, lookupDomain, normaliseDomainParam, runLookalike } from '../../src/sandbox/engine.js';
import { broke, code, domains, ds, free, ok, pro } from './engine-fixtures.js';

describe('normaliseDomainParam', () => {
  it.each([
    ['acme-shoes.com', 'acme-shoes.com'],
    ['  WWW.Acme-Shoes.COM.  ', 'acme-shoes.com'],
    ['https://www.acme-shoes.com:8443/path?q=1#x', 'acme-shoes.com'],
    ['HTTP://ACME-SHOES.COM', 'acme-shoes.com'],
    ['acme-shoes.com/about', 'acme-shoes.com'],
    ['münchner-kaffee.de', SHOWCASE.idn],
    ['www.com', 'www.com'],
    [MISSING_DOMAIN, MISSING_DOMAIN],
  ])('%j -> %j', (input, expected) => {
    expect(normaliseDomainParam(input)).toBe(expected);
  });

  it.each([
    '',
    'localhost',
    'ftp://acme-shoes.com',
    'acme_shoes.com',
    '-acme.com',
    'a..com',
    '1.2.3.4',
    'a b.com',
    'user@acme.com',
  ])('rejects %j', (input) => {
    expect(normaliseDomainParam(input)).toBeNull();
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(fc.domain(), fc.constantFrom('', 'www.', 'https://', 'http://www.'), (domain, prefix) => {
        const once = normaliseDomainParam(prefix + domain);
        if (once !== null) expect(normaliseDomainParam(once)).toBe(once);
      }),
    );
  });
});

describe('lookupDomain', () => {
  const lookup = (domain: string, query: Record<string, string> = {}, caller: Caller = pro) =>
    lookupDomain(ds, domain, query, caller);

  it('charges per product that returns data', () => {
    expect(ok(lookup('acme-shoes.com', { products: 'profile,tech' })).charged).toBe(2);
    expect(ok(lookup('acme-shoes.com', { products: 'profile,tech,leads' })).charged).toBe(7);
    const globex = ok(lookup('globex.io', { products: 'profile,tech' }));
    expect(globex.charged).toBe(1);
    expect(globex.body).toMatchObject({
      found: true,
      tech: null,
      primary_platform: null,
      credits: { products: { profile: 1 } },
    });
    expect(ok(lookup('globex.io', { products: 'tech' })).charged).toBe(0);
    // domain always comes back and belongs to profile, so a found record pays for profile.
    expect(ok(lookup(SHOWCASE.initech, { include: 'site_category' })).charged).toBe(1);
    expect(ok(lookup('https://www.Acme-Shoes.com/')).charged).toBe(1);
  });

  it('returns found:false with its code and no charge for a missing domain', () => {
    const missing = ok(lookup(MISSING_DOMAIN, { products: 'profile,tech' }));
    expect(missing.charged).toBe(0);
    expect(missing.body).toEqual({
      found: false,
      domain: MISSING_DOMAIN,
      code: 'domain_not_found',
      credits: { products: {} },
    });
  });

  it('returns the fields of the selected products, narrowed by include, domain always', () => {
    const all = ok(lookup('acme-shoes.com')).body;
    expect(Object.keys(all)).toEqual([
      'found',
      'domain',
      'company_name',
      'country',
      'site_category',
      'employee_range',
      'founded_year',
      'credits',
    ]);
    const narrow = ok(lookup(SHOWCASE.initech, { include: 'site_category,country' })).body;
    expect(narrow).toMatchObject({
      found: true,
      domain: SHOWCASE.initech,
      site_category: null,
      country: 'GB',
    });
    expect(narrow).not.toHaveProperty('company_name');
  });

  it.each([
    ['not a domain!', {}, pro, 'invalid_request'],
    ['acme-shoes.com', { products: 'profile,tek' }, pro, 'invalid_product'],
    ['acme-shoes.com', { include: 'countryy' }, pro, 'invalid_field'],
    ['acme-shoes.com', { include: 'tech' }, pro, 'field_not_in_product'],
    [
      'acme-shoes.com',
      { products: 'profile,tech', include: 'country' },
      pro,
      'product_without_visible_fields',
    ],
    ['acme-shoes.com', { max_credits: 'two' }, pro, 'invalid_request'],
    ['acme-shoes.com', { products: 'profile,tech' }, free, 'upgrade_required'],
    ['acme-shoes.com', { products: 'leads' }, free, 'upgrade_required'],
    [MISSING_DOMAIN, { products: 'profile,tech', max_credits: '1' }, pro, 'max_credits_exceeded'],
    [MISSING_DOMAIN, {}, broke, 'insufficient_credits'],
    [
      'acme-shoes.com',
      { products: 'profile,tech' },
      { plan: 'pro', balance: 1 } as Caller,
      'insufficient_credits',
    ],
  ])('$0 $1 -> $3', (domain, query, caller, expected) => {
    expect(code(lookup(domain, query as Record<string, string>, caller as Caller))).toBe(expected);
  });

  it('checks in the documented order', () => {
    expect(code(lookup('bad domain', { products: 'nope' }))).toBe('invalid_request');
    expect(code(lookup('acme-shoes.com', { products: 'nope', include: 'nope' }))).toBe('invalid_product');
    expect(code(lookup('acme-shoes.com', { products: 'tech', max_credits: '0' }, free))).toBe(
      'upgrade_required',
    );
    expect(code(lookup('acme-shoes.com', { max_credits: '0' }, broke))).toBe('max_credits_exceeded');
    expect(ok(lookup('acme-shoes.com', { products: 'profile', max_credits: '1' }, free)).charged).toBe(1);
  });
});

describe('runLookalike', () => {
  const lookalike = (seed: string, query: Record<string, string> = {}, caller: Caller = pro) =>
    runLookalike(ds, seed, query, caller);
  type Result = { rank: number; score: number; domain: string; evidence?: Record<string, unknown> };

  it('ranks candidates by score, with evidence only when asked', () => {
    const { body, charged } = ok(lookalike('https://acme-shoes.com', { k: '20', include_evidence: 'true' }));
    expect(charged).toBe(1);
    expect(body).toMatchObject({ found: true, seed: 'acme-shoes.com', k: 20 });
    const results = body.results as Result[];
    expect(results).toHaveLength(20);
    expect(results.map((r) => r.rank)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    for (let i = 1; i < results.length; i++)
      expect(results[i].score).toBeLessThanOrEqual(results[i - 1].score);
    expect(domains(results as unknown as Array<Record<string, unknown>>)).not.toContain('acme-shoes.com');
    const first = results[0];
    const acme = ds.byDomain.get('acme-shoes.com');
    const c = ds.byDomain.get(first.domain);
    const shared = acme?.tech.filter((t) => c?.tech.includes(t)) ?? [];
    const union = new Set([...(acme?.tech ?? []), ...(c?.tech ?? [])]).size;
    const expected =
      (0.5 * shared.length) / union +
      (c?.site_category === 'fashion' ? 0.25 : 0) +
      (c?.primary_platform === 'shopify' ? 0.15 : 0) +
      (c?.country === 'US' ? 0.1 : 0);
    expect(first.score).toBeCloseTo(expected, 4);
    expect(first.evidence).toEqual({
      shared_tech: shared,
      same_site_category: c?.site_category === 'fashion',
      same_primary_platform: c?.primary_platform === 'shopify',
      same_country: c?.country === 'US',
    });
    const plain = ok(lookalike('acme-shoes.com')).body.results as Result[];
    expect(plain).toHaveLength(10);
    expect(plain.every((r) => !('evidence' in r))).toBe(true);
  });

  it('constrains candidates with filters and narrows fields with include', () => {
    const { body } = ok(
      lookalike('acme-shoes.com', { filters: '{"country":["GB"]}', include: 'country,tech' }),
    );
    for (const r of body.results as Array<Record<string, unknown>>) {
      expect(r.country).toBe('GB');
      expect(Object.keys(r)).toEqual(['rank', 'score', 'domain', 'country', 'tech']);
    }
  });

  it('is not available, at no charge, without a candidate set', () => {
    for (const seed of [MISSING_DOMAIN, SHOWCASE.lonely]) {
      const { body, charged } = ok(lookalike(seed, {}, broke));
      expect(charged).toBe(0);
      expect(body).toEqual({ found: false, seed, code: 'lookalike_not_available', results: [] });
    }
    expect(ok(lookalike(SHOWCASE.globex)).body.found).toBe(true);
  });

  it.each<[string, Record<string, string>, Caller, string]>([
    ['not a domain', {}, pro, 'invalid_request'],
    ['acme-shoes.com', { k: '101' }, pro, 'invalid_request'],
    ['acme-shoes.com', { include_evidence: 'yes' }, pro, 'invalid_request'],
    ['acme-shoes.com', { filters: '{"colour":["red"]}' }, pro, 'invalid_filter'],
    ['acme-shoes.com', { include: 'lead_name' }, pro, 'field_not_available_for_capability'],
    ['acme-shoes.com', { include: 'tech' }, free, 'upgrade_required'],
    ['acme-shoes.com', { include_evidence: 'true' }, free, 'upgrade_required'],
    ['acme-shoes.com', {}, broke, 'insufficient_credits'],
  ])('$0 $1 -> $3', (seed, query, caller, expected) => {
    expect(code(lookalike(seed, query, caller))).toBe(expected);
  });
});
