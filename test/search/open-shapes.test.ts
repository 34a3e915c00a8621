// The adapters of src/api/ on the open shapes of docs/contract.md ("Open shapes of the answers",
// "Catalog shapes the client reads"), one shape at a time. The commands on whole layouts:
// test/commands/layouts.test.ts.
import { describe, expect, it } from 'vitest';
import { adaptAccount } from '../../src/api/account.js';
import { adaptFields, adaptProducts } from '../../src/api/catalog-adapters.js';
import { describeFields, describeProducts } from '../../src/api/catalog-views.js';
import { adaptDomainResult } from '../../src/api/domains.js';
import { adaptLookalikeResponse } from '../../src/api/lookalike.js';
import { adaptBreakdownResponse, adaptSearchResponse, findRows } from '../../src/api/search.js';

describe('a found record', () => {
  const asked = ['domain', 'company_name', 'country', 'tech'];

  it('grouped by product, `tech` both a product and a field', () => {
    const body = {
      found: true,
      domain: 'a.com',
      profile: { company_name: 'A', country: 'US' },
      tech: { tech: ['x'] },
    };
    const read = adaptDomainResult(body, 'a.com', {}, asked);
    expect({ ...read.record }).toEqual({ domain: 'a.com', company_name: 'A', country: 'US', tech: ['x'] });
    expect(read.fieldsUnread).toBeUndefined();
  });

  it('under an envelope whose own `found` says it', () => {
    const read = adaptDomainResult(
      { data: { found: true, company_name: 'A', country: 'US', tech: null } },
      'a.com',
    );
    expect(read.found).toBe(true);
    expect({ ...read.record }).toEqual({ company_name: 'A', country: 'US', tech: null });
  });

  it('unreadable when none of the fields asked for is in it; one missing among others is an empty field', () => {
    const none = adaptDomainResult(
      { found: true, domain: 'a.com', attributes: [{ name: 'company_name' }] },
      'a.com',
      {},
      asked,
    );
    expect(none.fieldsUnread).toMatchObject({
      missing: ['company_name', 'country', 'tech'],
      members: ['found', 'domain', 'attributes'],
    });
    const some = adaptDomainResult({ found: true, company_name: 'A' }, 'a.com', {}, asked);
    expect(some.fieldsUnread).toBeUndefined();
    expect({ ...some.record }).toEqual({ domain: 'a.com', company_name: 'A', country: null, tech: null });
  });

  it('a field the catalog types as an integer, sent as text, is read as a number', () => {
    const body = { found: true, profile: { founded_year: '2009', company_name: '1999' } };
    const read = adaptDomainResult(body, 'a.com', {}, undefined, undefined, new Set(['founded_year']));
    expect({ ...read.record }).toEqual({ founded_year: 2009, company_name: '1999' });
  });

  it('a missing domain is never unreadable, nor are the credits a field', () => {
    const missing = adaptDomainResult(
      { found: false, code: 'domain_not_found', usage: { cost: 0 } },
      'a.com',
      {},
      asked,
    );
    expect(missing.fieldsUnread).toBeUndefined();
    const found = adaptDomainResult(
      { found: true, company_name: 'A', usage: { cost: 1, balance: 9 } },
      'a.com',
    );
    expect({ ...found.record }).toEqual({ company_name: 'A' });
  });
});

describe('search rows, totals and paging signals', () => {
  it('an empty list under a name not known is an empty result', () => {
    expect(findRows({ total: 0, entries: [] })).toEqual({ key: 'entries', rows: [] });
    expect(findRows({ a: [], b: [] })).toBeUndefined();
  });

  it('rows whose fields come grouped by product are read flat', () => {
    const read = adaptSearchResponse({
      hits: [{ domain: 'a.com', profile: { company_name: 'A' }, tech: { tech: ['x'] } }],
    });
    expect(read?.rows.map((row) => ({ ...row }))).toEqual([
      { domain: 'a.com', company_name: 'A', tech: ['x'] },
    ]);
  });

  it('a total as text, under meta, and the service’s word on more pages', () => {
    const grouped = adaptSearchResponse({
      query: 'q',
      total: '30',
      limit: '25',
      hits: [{ domain: 'a.com' }],
      next_cursor: null,
    });
    expect(grouped).toMatchObject({ total: 30, totalReported: true, more: false });
    expect(grouped?.document).toEqual({ query: 'q', total: 30, limit: 25, rows: [{ domain: 'a.com' }] });
    const enveloped = adaptSearchResponse(
      { data: [{ domain: 'a.com' }], meta: { total: 7, has_more: true } },
      { charged: 1 },
    );
    expect(enveloped).toMatchObject({ total: 7, more: true });
    expect(enveloped?.document).toEqual({ total: 7, rows: [{ domain: 'a.com' }], credits: { charged: 1 } });
    expect(adaptSearchResponse({ rows: [], total: 0 })?.more).toBeUndefined();
  });
});

describe('breakdowns', () => {
  it('buckets as a map, shares as percentages, figures as text', () => {
    const read = adaptBreakdownResponse({
      breakdown: {
        field: 'country',
        segment: { size: '100' },
        coverage: { with_value: '90', missing: '10', ratio: '0.9' },
        buckets: { US: { count: '45', percent: '50' }, GB: 27 },
        other: { buckets: '3', count: '18' },
      },
    });
    expect(read?.buckets).toEqual([
      { value: 'US', count: 45, share: 0.5 },
      { value: 'GB', count: 27, share: 0.3 },
    ]);
    expect(read?.document).toEqual({
      field: 'country',
      segment: { size: 100 },
      coverage: { with_value: 90, missing: 10, ratio: 0.9 },
      buckets: read?.buckets,
      other: { buckets: 3, count: 18 },
    });
  });

  it('buckets as a list under other names, the field as `facet`', () => {
    const read = adaptBreakdownResponse({
      data: {
        facet: 'country',
        segment: { companies: 10 },
        values: [{ key: 'US', doc_count: 10, share: 1 }],
      },
    });
    expect(read).toMatchObject({
      field: 'country',
      segment: { size: 10 },
      buckets: [{ value: 'US', count: 10, share: 1 }],
    });
  });
});

it('lookalike candidates under another name, rank and score as text', () => {
  const read = adaptLookalikeResponse({
    found: true,
    seed: 'a.com',
    k: '2',
    matches: [
      { rank: '2', score: '0.5', domain: 'c.com' },
      { rank: '1', score: '0.75', domain: 'b.com' },
    ],
  });
  expect(read?.document).toEqual({
    found: true,
    seed: 'a.com',
    k: 2,
    results: [
      { rank: 1, score: 0.75, domain: 'b.com' },
      { rank: 2, score: 0.5, domain: 'c.com' },
    ],
  });
});

describe('catalogs and the account', () => {
  it('the default selection and the filters said once for the catalog', () => {
    const products = { products: [{ id: 'profile' }, { id: 'tech' }], default_products: ['profile'] };
    expect(adaptProducts(products).map((p) => [p.id, p.default])).toEqual([
      ['profile', true],
      ['tech', false],
    ]);
    expect(describeProducts(products)).toEqual({ count: 2, defaults: 'catalog', defaultIds: ['profile'] });
    const fields = {
      fields: [{ name: 'country' }, { name: 'company_name' }],
      filters: [{ field: 'country', name: 'country', values: ['US'] }],
      facets: ['country'],
    };
    expect(adaptFields(fields).map((f) => [f.name, f.filter?.name ?? f.filter, f.facet])).toEqual([
      ['country', 'country', true],
      ['company_name', null, false],
    ]);
    expect(describeFields(fields)).toMatchObject({
      filters: 'catalog',
      facets: 'catalog',
      filterCount: 1,
      facetCount: 1,
    });
  });

  it('the account under the contract’s names, in the place of the members read', () => {
    expect(
      adaptAccount({
        data: {
          account: { plan: { name: 'pro' }, credits: { balance: '12' }, capabilities: 'domains, search' },
        },
      }),
    ).toEqual({ plan: 'pro', balance: 12, capabilities: ['domains', 'search'] });
    expect(
      adaptAccount({ plan: 'free', balance: 3, capabilities: { search: true, lookalike: false } }),
    ).toEqual({
      plan: 'free',
      balance: 3,
      capabilities: ['search'],
    });
  });
});
