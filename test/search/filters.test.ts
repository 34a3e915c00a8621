import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  countFilterValues,
  mergeFilters,
  parseFilterFlag,
  parseFiltersJson,
  parseInclude,
  suggestForInvalidFilter,
  validateFacet,
  validateFilters,
  validateInclude,
} from '../../src/api/filters.js';
import type { FieldEntry } from '../../src/api/types.js';
import { Problem } from '../../src/problem.js';

function field(
  name: string,
  product: string,
  filter: FieldEntry['filter'],
  facet = false,
  capabilities = ['domains', 'search', 'lookalike'],
): FieldEntry {
  return {
    name,
    product,
    type: 'string',
    description: name,
    filter,
    facet,
    billing: { product, credit_units: 1 },
    capabilities,
    plans: ['pro'],
  };
}

const FIELDS: FieldEntry[] = [
  field('domain', 'profile', null),
  field('company_name', 'profile', null),
  field('country', 'profile', { name: 'country', value_source: 'enum', values: ['US', 'GB', 'DE'] }, true),
  field(
    'site_category',
    'profile',
    { name: 'site_category', value_source: 'enum', values: ['fashion', 'electronics'] },
    true,
  ),
  field('tech', 'tech', { name: 'tech', value_source: 'enum', values: ['shopify', 'klaviyo', 'stripe'] }),
  field('keyword', 'profile', { name: 'keyword', value_source: 'free' }),
  field('lead_email', 'leads', null, false, ['domains']),
];

function problemOf(fn: () => unknown): Problem {
  try {
    fn();
  } catch (error) {
    if (error instanceof Problem) return error;
    throw error;
  }
  throw new Error('expected a Problem');
}

describe('building filters', () => {
  it('parses name=value[,value] flags', () => {
    expect(parseFilterFlag('country=US,GB')).toEqual({ country: ['US', 'GB'] });
    expect(parseFilterFlag(' tech = shopify , stripe ,')).toEqual({ tech: ['shopify', 'stripe'] });
  });

  it('refuses a flag without a name or value', () => {
    for (const bad of ['country', '=US', 'country=', 'country=,']) {
      const p = problemOf(() => parseFilterFlag(bad));
      expect(p.code).toBe('usage_error');
      expect(p.exitCode).toBe(2);
    }
  });

  it('parses --filters JSON with strings or arrays', () => {
    expect(parseFiltersJson('{"country":"US","tech":["shopify","stripe"]}')).toEqual({
      country: ['US'],
      tech: ['shopify', 'stripe'],
    });
  });

  it('refuses JSON that is not an object of strings', () => {
    for (const bad of ['not json', '[]', '"US"', '{"country":1}', '{"country":["US",2]}', 'null']) {
      expect(problemOf(() => parseFiltersJson(bad)).exitCode).toBe(2);
    }
  });

  it('merges flags and JSON by unioning values', () => {
    expect(
      mergeFilters({ country: ['US'] }, { country: ['GB', 'US'], tech: ['shopify'] }, { tech: ['shopify'] }),
    ).toEqual({ country: ['US', 'GB'], tech: ['shopify'] });
  });

  it('merge is a union: every input value appears exactly once', () => {
    const filtersArb = fc.dictionary(
      fc.constantFrom('a', 'b', 'c'),
      fc.array(fc.constantFrom('x', 'y', 'z'), { minLength: 1 }),
    );
    fc.assert(
      fc.property(filtersArb, filtersArb, (left, right) => {
        const merged = mergeFilters(left, right);
        for (const name of new Set([...Object.keys(left), ...Object.keys(right)])) {
          const expected = new Set([...(left[name] ?? []), ...(right[name] ?? [])]);
          expect(new Set(merged[name])).toEqual(expected);
          expect(merged[name].length).toBe(expected.size);
        }
        expect(countFilterValues(merged)).toBe(Object.values(merged).flat().length);
      }),
    );
  });
});

describe('checking filters against the catalog', () => {
  it('accepts known names and values, spelling enum values as the catalog does', () => {
    expect(validateFilters({ country: ['us', 'GB'], keyword: ['Anything'] }, FIELDS)).toEqual({
      country: ['US', 'GB'],
      keyword: ['Anything'],
    });
  });

  it('refuses an unknown name with a suggestion and the list of filters', () => {
    const p = problemOf(() => validateFilters({ contry: ['US'] }, FIELDS));
    expect(p.code).toBe('usage_error');
    expect(p.detail).toBe('unknown filter `contry` (did you mean `country`?)');
    expect(p.hint).toContain('country, site_category, tech, keyword');
  });

  it('refuses a field that is not filterable', () => {
    expect(problemOf(() => validateFilters({ company_name: ['x'] }, FIELDS)).detail).toBe(
      'field `company_name` cannot be used as a filter',
    );
  });

  it('refuses an unknown enum value with a suggestion', () => {
    const p = problemOf(() => validateFilters({ tech: ['shopfy'] }, FIELDS));
    expect(p.detail).toBe('unknown value "shopfy" for filter `tech` (did you mean `shopify`?)');
    expect(p.hint).toContain('shopify, klaviyo, stripe');
  });

  it('explains a server invalid_filter from the catalog when it can', () => {
    expect(suggestForInvalidFilter({ site_categry: ['fashion'] }, FIELDS)).toContain('`site_category`');
    expect(suggestForInvalidFilter({ country: ['US'] }, FIELDS)).toBeUndefined();
  });
});

describe('included fields and facets', () => {
  it('splits and deduplicates --include', () => {
    expect(parseInclude('domain, country,,domain')).toEqual(['domain', 'country']);
    expect(problemOf(() => parseInclude(' , ')).exitCode).toBe(2);
  });

  it('accepts fields of the capability and explains enrichment-only ones', () => {
    expect(() => validateInclude(['domain', 'tech'], FIELDS, 'search')).not.toThrow();
    const leads = problemOf(() => validateInclude(['lead_email'], FIELDS, 'search'));
    expect(leads.detail).toContain('enrichment-only');
    expect(leads.hint).toContain('--products leads');
    const typo = problemOf(() => validateInclude(['countyr'], FIELDS, 'lookalike'));
    expect(typo.detail).toBe('unknown field `countyr` in --include (did you mean `country`?)');
  });

  it('accepts facets and lists them otherwise', () => {
    expect(validateFacet('Country', FIELDS)).toBe('country');
    const notFacet = problemOf(() => validateFacet('tech', FIELDS));
    expect(notFacet.detail).toContain('not a breakdown facet');
    expect(notFacet.hint).toBe('Facets: country, site_category.');
    expect(problemOf(() => validateFacet('site_categroy', FIELDS)).detail).toContain(
      'did you mean `site_category`',
    );
  });
});

describe('a catalog that does not say: the service decides', () => {
  const silent = (name: string, filter: FieldEntry['filter'] = undefined): FieldEntry => ({
    name,
    product: 'profile',
    type: 'string',
    description: name,
    filter,
    facet: undefined,
    billing: { product: 'profile', credit_units: 1 },
    capabilities: undefined,
    plans: [],
  });

  it('filters: every name is sent when the catalog describes no filter at all', () => {
    const fields = [silent('country'), silent('tech')];
    expect(validateFilters({ country: ['us'], anything: ['x'] }, fields)).toEqual({
      country: ['us'],
      anything: ['x'],
    });
  });

  it('filters: a field whose filter is not described is sent beside described ones', () => {
    const fields = [
      silent('country', { name: 'country', value_source: 'enum', values: ['US'] }),
      silent('tech'),
    ];
    expect(validateFilters({ country: ['us'], tech: ['shopify'] }, fields)).toEqual({
      country: ['US'],
      tech: ['shopify'],
    });
    expect(() => validateFilters({ colour: ['red'] }, fields)).toThrow('unknown filter `colour`');
  });

  it('include: a field without capabilities may be asked of search and lookalike', () => {
    expect(() => validateInclude(['country'], [silent('country')], 'search')).not.toThrow();
    expect(() => validateInclude(['countr'], [silent('country')], 'lookalike')).toThrow(
      'unknown field `countr` in --include (did you mean `country`?)',
    );
  });

  it('facets: sent when the catalog marks no facet, or not this field', () => {
    expect(validateFacet('country', [silent('country')])).toBe('country');
    expect(validateFacet('whatever', [silent('country')])).toBe('whatever');
    const marked = [
      { ...silent('country'), facet: true },
      silent('tech'),
      { ...silent('name'), facet: false },
    ];
    expect(validateFacet('tech', marked)).toBe('tech');
    expect(() => validateFacet('name', marked)).toThrow('field `name` is not a breakdown facet');
    expect(() => validateFacet('whatever', marked)).toThrow('unknown field `whatever`');
  });
});
