// A products catalog that marks no product as default: the selection leaves the columns to the
// answers, and the writer takes them from the first found answer without losing a bought field.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  catalogColumns,
  columnsOfAnswer,
  createAnswerColumnsWriter,
  writerFor,
} from '../../src/batch/answer-columns.js';
import type { RowResult } from '../../src/batch/output.js';
import { FIELDS, PRODUCTS, productsWithoutDefaults } from '../../src/sandbox/catalogs.js';
import { checkMaxCredits, resolveSelection } from '../../src/spend/selection.js';

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
}

/** The catalogs as the adapter reads a products list without `default` members. */
const UNMARKED = {
  products: productsWithoutDefaults().map((p) => ({ ...p, default: false })),
  fields: FIELDS,
};
const MARKED = { products: PRODUCTS, fields: FIELDS };
const PROFILE_FIELDS = [...PRODUCTS[0].fields];

const answer = (found: boolean, record: RowResult['record'], charged: number): RowResult => ({
  found,
  record,
  credits_charged: charged,
  bought_at: null,
  error_code: null,
  error_detail: null,
});
const found = (record: Record<string, unknown>, charged = 1) => answer(true, record, charged);
const NOT_FOUND = answer(false, null, 0);
const PROFILE_RECORD = {
  domain: 'acme-shoes.com',
  company_name: 'Acme Shoes',
  country: 'US',
  site_category: 'fashion',
  employee_range: null,
  founded_year: 2009,
};

describe('the selection without a marked default', () => {
  it('leaves the columns to the answers and bounds the cost by every product', () => {
    const selection = resolveSelection(UNMARKED, {});
    expect(selection.defaultUnknown).toBe(true);
    expect(selection.resultFields).toBeUndefined();
    expect(selection.products.map((p) => p.id)).toEqual(['profile', 'tech', 'leads']);
    expect(selection.worstCase).toBe(7);
  });

  it('bounds the cost by --max-credits, and leaves refusing it to the service', () => {
    const selection = resolveSelection(UNMARKED, { maxCredits: 1 });
    expect(selection.worstCase).toBe(1);
    expect(() => checkMaxCredits(selection, 1)).not.toThrow();
  });

  it('takes --include as the columns, charging at most the products of its fields', () => {
    const selection = resolveSelection(UNMARKED, { include: ['domain', 'company_name', 'lead_email'] });
    expect(selection.resultFields).toEqual(['domain', 'company_name', 'lead_email']);
    expect(selection.products.map((p) => p.id)).toEqual(['profile', 'leads']);
    expect(selection.worstCase).toBe(6);
    expect(() => resolveSelection(UNMARKED, { include: ['company_nme'] })).toThrow(
      /unknown field `company_nme`/,
    );
  });

  it('is unchanged when the catalog marks the default, or --products is given', () => {
    expect(resolveSelection(MARKED, {})).toEqual({
      products: [PRODUCTS[0]],
      worstCase: 1,
      resultFields: PROFILE_FIELDS,
    });
    const chosen = resolveSelection(UNMARKED, { products: ['tech'] });
    expect(chosen.defaultUnknown).toBeUndefined();
    expect(chosen.resultFields).toEqual(['domain', 'primary_platform', 'tech', 'tech_count']);
    expect(() => resolveSelection(UNMARKED, { products: ['tech'], include: ['company_name'] })).toThrow(
      /belongs to product `profile`/,
    );
  });
});

describe('columns from an answer', () => {
  it('are every field of the products the answer returned, in catalog order', () => {
    // A service that leaves out empty fields still gives the whole product.
    expect(columnsOfAnswer(UNMARKED, { domain: 'a.com', country: 'US', company_name: 'A' })).toEqual(
      PROFILE_FIELDS,
    );
    expect(columnsOfAnswer(UNMARKED, { domain: 'a.com', tech: [], company_name: 'A' })).toEqual([
      ...PROFILE_FIELDS,
      'primary_platform',
      'tech',
      'tech_count',
    ]);
    expect(columnsOfAnswer(UNMARKED, { domain: 'a.com', lead_email: 'x@a.com' })).toEqual([
      'domain',
      'lead_name',
      'lead_title',
      'lead_email',
    ]);
  });

  it('keep fields the catalog does not list, in the answer order, and wait for more than `domain`', () => {
    expect(columnsOfAnswer(UNMARKED, { domain: 'a.com', revenue: 5, company_name: 'A' })).toEqual([
      ...PROFILE_FIELDS,
      'revenue',
    ]);
    expect(columnsOfAnswer(UNMARKED, { domain: 'a.com' })).toBeUndefined();
    expect(catalogColumns(UNMARKED)).toEqual(FIELDS.map((f) => f.name));
  });
});

async function render(
  rows: RowResult[],
  options: { format?: 'csv' | 'ndjson'; holdLimit?: number } = {},
): Promise<string> {
  const out = new Sink();
  const writer = createAnswerColumnsWriter(
    { out, format: options.format ?? 'csv', inputHeader: ['domain'] },
    UNMARKED,
    options.holdLimit,
  );
  for (const [i, result] of rows.entries()) await writer.write({ cells: [`d${i}.com`], result });
  await writer.end();
  return out.text;
}

describe('the writer with columns from the answers', () => {
  it('holds the rows before the first found answer, then writes them under its columns', async () => {
    const reused = { ...NOT_FOUND, bought_at: '2026-11-20T08:00:00Z' };
    const text = await render([NOT_FOUND, reused, found(PROFILE_RECORD), NOT_FOUND]);
    expect(text).toBe(
      [
        'domain,found,cd_domain,company_name,country,site_category,employee_range,founded_year,credits_charged,bought_at,error_code,error_detail',
        'd0.com,false,,,,,,,0,,,',
        'd1.com,false,,,,,,,0,2026-11-20T08:00:00Z,,',
        'd2.com,true,acme-shoes.com,Acme Shoes,US,fashion,,2009,1,,,',
        'd3.com,false,,,,,,,0,,,',
        '',
      ].join('\n'),
    );
  });

  it('writes what a writer given those columns writes, in ndjson too', async () => {
    const rows = [NOT_FOUND, found(PROFILE_RECORD), NOT_FOUND];
    const out = new Sink();
    const marked = await writerFor(resolveSelection(MARKED, {}), {
      out,
      format: 'ndjson',
      inputHeader: ['domain'],
    });
    for (const [i, result] of rows.entries()) await marked.write({ cells: [`d${i}.com`], result });
    await marked.end();
    expect(await render(rows, { format: 'ndjson' })).toBe(out.text);
  });

  it('stops on a value outside the columns rather than drop what was bought', async () => {
    const leads = found({ ...PROFILE_RECORD, lead_email: 'jane@acme-shoes.com' }, 6);
    await expect(render([found(PROFILE_RECORD), leads])).rejects.toMatchObject({
      code: 'unexpected_fields',
      exitCode: 2,
      detail: expect.stringContaining('`lead_email` (product leads)'),
    });
    // A field outside the columns without a value was not bought: nothing is lost.
    await expect(
      render([found(PROFILE_RECORD), found({ ...PROFILE_RECORD, lead_email: null })]),
    ).resolves.toContain('Acme Shoes');
  });

  it('falls back to every catalog field when no answer shows its fields (end, or too many rows held)', async () => {
    const header = `domain,found,cd_domain,${FIELDS.slice(1)
      .map((f) => f.name)
      .join(',')},credits_charged,bought_at,error_code,error_detail`;
    expect((await render([NOT_FOUND])).split('\n')[0]).toBe(header);
    expect((await render([])).split('\n')[0]).toBe(header);
    const held = await render([NOT_FOUND, NOT_FOUND, found(PROFILE_RECORD)], { holdLimit: 2 });
    expect(held.split('\n')[0]).toBe(header);
    expect(held).toContain('d2.com,true,acme-shoes.com,Acme Shoes,US,fashion,,2009,,,,,,,1,,,');
  });
});
