import { domainToASCII } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../src/error-catalog.js';
import {
  CATEGORIES,
  COUNTRIES,
  ERRORS_RESPONSE,
  FIELDS,
  PRODUCTS,
  SANDBOX_KEYS,
} from '../../src/sandbox/catalogs.js';
import {
  buildDataset,
  CATEGORY_KEYWORDS,
  COUNTRY_NAMES,
  type Company,
  generateDataset,
  MISSING_DOMAIN,
  SHOWCASE,
} from '../../src/sandbox/dataset.js';
import { normaliseDomainParam } from '../../src/sandbox/engine.js';

const ds = generateDataset();

function hasGap(c: Company): boolean {
  return (
    c.company_name === null ||
    c.country === null ||
    c.site_category === null ||
    c.employee_range === null ||
    c.founded_year === null ||
    c.tech.length === 0 ||
    c.lead_name === null
  );
}

describe('generateDataset', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    // Generated afresh each time: equal by content, not by being one object.
    const a = buildDataset({ seed: 7, companies: 3000 });
    const b = buildDataset({ seed: 7, companies: 3000 });
    const c = buildDataset({ seed: 8, companies: 3000 });
    expect(b).not.toBe(a);
    expect(JSON.stringify(b.companies)).toBe(JSON.stringify(a.companies));
    expect(JSON.stringify(c.companies)).not.toBe(JSON.stringify(a.companies));
    expect(a.seed).toBe(7);
  });

  it('gives the same seed and size the dataset it generated last, and keeps the last four', () => {
    const first = generateDataset({ seed: 11, companies: 300 });
    expect(generateDataset({ seed: 11, companies: 300 })).toBe(first);
    expect(generateDataset({ seed: 11, companies: 301 })).not.toBe(first);
    expect(JSON.stringify(first.companies)).toBe(
      JSON.stringify(buildDataset({ seed: 11, companies: 300 }).companies),
    );
    // Four other datasets later, the first is generated again.
    for (const seed of [12, 13, 14, 15]) generateDataset({ seed, companies: 300 });
    expect(generateDataset({ seed: 11, companies: 300 })).not.toBe(first);
  });

  it('defaults to seed 42 and 10,000 companies, ordered by popularity, with unique valid domains', () => {
    expect(ds.seed).toBe(42);
    expect(ds.companies).toHaveLength(10_000);
    expect(ds.byDomain.size).toBe(10_000);
    const misplaced = ds.companies.filter(
      (c, i) =>
        c.popularity !== i + 1 ||
        normaliseDomainParam(c.domain) !== c.domain ||
        ds.byDomain.get(c.domain) !== c,
    );
    expect(misplaced).toEqual([]);
  });

  it('honours the requested size and never drops the showcase records', () => {
    expect(generateDataset({ companies: 500 }).companies).toHaveLength(500);
    const tiny = generateDataset({ companies: 1 });
    expect(tiny.companies.map((c) => c.domain).sort()).toEqual(Object.values(SHOWCASE).sort());
  });

  it('has gaps in roughly one record in ten', () => {
    const ratio = ds.companies.filter(hasGap).length / ds.companies.length;
    expect(ratio).toBeGreaterThan(0.07);
    expect(ratio).toBeLessThan(0.13);
  });

  it('has skewed countries and an ecommerce flag that goes with a platform', () => {
    const countries = new Map<string, number>();
    for (const c of ds.companies)
      if (c.country) countries.set(c.country, (countries.get(c.country) ?? 0) + 1);
    const ranked = [...countries].sort((a, b) => b[1] - a[1]).map(([code]) => code);
    expect(ranked.slice(0, 3)).toEqual(['US', 'GB', 'DE']);
    expect(countries.get('US')).toBeGreaterThan(5 * (countries.get('SE') ?? 0));
    const shop = ds.companies.filter((c) => c.is_ecommerce);
    const other = ds.companies.filter((c) => !c.is_ecommerce);
    const withPlatform = (list: Company[]) => list.filter((c) => c.primary_platform).length / list.length;
    expect(withPlatform(shop)).toBeGreaterThan(0.95);
    expect(withPlatform(other)).toBeLessThan(0.4);
  });

  it('keeps tech_count equal to the number of technologies, null when tech is missing', () => {
    const wrong = ds.companies.filter((c) => c.tech_count !== (c.tech.length > 0 ? c.tech.length : null));
    expect(wrong).toEqual([]);
  });

  it('uses only values that the field catalog lists for enum filters', () => {
    const enumValues = (name: string) => new Set(FIELDS.find((f) => f.name === name)?.filter?.values);
    for (const name of ['country', 'site_category', 'employee_range', 'primary_platform'] as const) {
      const allowed = enumValues(name);
      const outside = ds.companies.map((c) => c[name]).filter((v) => v !== null && !allowed.has(v));
      expect(outside, name).toEqual([]);
    }
    const techs = enumValues('tech');
    expect(ds.companies.flatMap((c) => c.tech).filter((t) => !techs.has(t))).toEqual([]);
    for (const code of COUNTRIES) expect(COUNTRY_NAMES[code]).toBeTruthy();
    expect(CATEGORIES).toContain('home_garden');
    expect(Object.keys(CATEGORY_KEYWORDS).sort()).toEqual([...CATEGORIES].sort());
  });
});

describe('showcase records', () => {
  const get = (name: string) => ds.byDomain.get(SHOWCASE[name]);

  it('are present in every dataset with their documented traits', () => {
    for (const seed of [1, 42, 99]) {
      const other = generateDataset({ seed, companies: 200 });
      for (const domain of Object.values(SHOWCASE)) expect(other.byDomain.has(domain)).toBe(true);
    }
    const acme = get('acme');
    expect(acme).toMatchObject({ country: 'US', site_category: 'fashion', primary_platform: 'shopify' });
    expect(acme && hasGap(acme)).toBe(false);
    expect(get('globex')).toMatchObject({ tech: [], tech_count: null, primary_platform: null });
    expect(get('globex')?.company_name).toBeTruthy();
    expect(get('initech')).toMatchObject({ site_category: null, employee_range: null, country: 'GB' });
    expect(get('lonely')).toMatchObject({ tech: [], site_category: null });
    expect(get('umbrella')?.domain).toBe('umbrella-health.de');
  });

  it('include an IDN stored as its real punycode', () => {
    expect(SHOWCASE.idn).toBe(domainToASCII('münchner-kaffee.de'));
    expect(SHOWCASE.idn.startsWith('xn--')).toBe(true);
    expect(get('idn')?.company_name).toBe('Münchner Kaffee');
  });

  it('include a company name carrying terminal escape sequences', () => {
    const name = get('escape')?.company_name ?? '';
    expect(name).toContain('\x1b]0;pwned\x07');
    expect(name).toContain('\x1b[31m');
  });

  it('never contain the documented missing domain', () => {
    expect(normaliseDomainParam(MISSING_DOMAIN)).toBe(MISSING_DOMAIN);
    expect(ds.byDomain.has(MISSING_DOMAIN)).toBe(false);
    expect(generateDataset({ seed: 3, companies: 5000 }).byDomain.has(MISSING_DOMAIN)).toBe(false);
  });
});

describe('catalogs', () => {
  it('publish the three products with their credit units', () => {
    expect(PRODUCTS.map((p) => [p.id, p.credit_units, p.default, p.add_on])).toEqual([
      ['profile', 1, true, false],
      ['tech', 1, false, false],
      ['leads', 5, false, true],
    ]);
    expect(PRODUCTS[0].fields).toEqual([
      'domain',
      'company_name',
      'country',
      'site_category',
      'employee_range',
      'founded_year',
    ]);
  });

  it('publish the field table of docs/contract.md', () => {
    const table = FIELDS.map((f) => [f.name, f.product, f.type, f.filter?.value_source ?? null, f.facet]);
    expect(table).toEqual([
      ['domain', 'profile', 'string', null, false],
      ['company_name', 'profile', 'string', null, false],
      ['country', 'profile', 'string', 'enum', true],
      ['site_category', 'profile', 'string', 'enum', true],
      ['employee_range', 'profile', 'string', 'enum', true],
      ['founded_year', 'profile', 'integer', null, false],
      ['primary_platform', 'tech', 'string', 'enum', true],
      ['tech', 'tech', 'string[]', 'enum', false],
      ['tech_count', 'tech', 'integer', null, false],
      ['lead_name', 'leads', 'string', null, false],
      ['lead_title', 'leads', 'string', null, false],
      ['lead_email', 'leads', 'string', null, false],
    ]);
    for (const f of FIELDS) {
      expect(f.capabilities).toEqual(
        f.product === 'leads' ? ['domains'] : ['domains', 'search', 'lookalike'],
      );
      expect(f.plans).toEqual(f.product === 'profile' ? ['free', 'pro'] : ['pro']);
      expect(f.billing.credit_units).toBe(PRODUCTS.find((p) => p.id === f.product)?.credit_units);
    }
  });

  it('list the sandbox keys with their plans and balances', () => {
    expect(SANDBOX_KEYS.full).toMatchObject({
      key: 'cd_sandbox_full_7f3a9c2e',
      plan: 'pro',
      balance: 1_000_000,
    });
    expect(SANDBOX_KEYS.restricted).toMatchObject({ key: 'cd_sandbox_restricted_5b1d8e40', plan: 'pro' });
    expect(SANDBOX_KEYS.restricted.capabilities).toEqual(['domains']);
    expect(SANDBOX_KEYS.free).toMatchObject({ key: 'cd_sandbox_free_c94e1a77', plan: 'free', balance: 1000 });
    expect(SANDBOX_KEYS.empty).toMatchObject({ key: 'cd_sandbox_empty_0a6f3d19', plan: 'pro', balance: 0 });
  });

  it('serve the error catalog of the client', () => {
    expect(ERRORS_RESPONSE.contract_version).toBe('2026-08-26');
    expect(ERRORS_RESPONSE.content_type).toBe('application/problem+json');
    expect(ERRORS_RESPONSE.errors).toHaveLength(27);
    expect(ERRORS_RESPONSE.errors).toEqual(ERROR_CATALOG);
  });
});
