import { Writable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { type BatchWriterOptions, createBatchWriter, type RowResult } from '../../src/batch/output.js';

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
}

const FOUND: RowResult = {
  found: true,
  record: {
    domain: 'acme-shoes.com',
    company_name: 'Acme Shoes',
    tech: ['shopify', 'klaviyo'],
    tech_count: 2,
  },
  credits_charged: 2,
  bought_at: null,
  error_code: null,
  error_detail: null,
};
const NOT_FOUND: RowResult = {
  found: false,
  record: null,
  credits_charged: 0,
  bought_at: null,
  error_code: null,
  error_detail: null,
};
/** An answer reused from the store: bought by an earlier run, free in this one. */
const REUSED: RowResult = { ...FOUND, credits_charged: 0, bought_at: '2026-11-21T09:30:05Z' };
const FAILED: RowResult = {
  found: null,
  record: null,
  credits_charged: 0,
  bought_at: null,
  error_code: 'invalid_domain',
  error_detail: 'looks like an e-mail address',
};

async function render(
  options: Omit<BatchWriterOptions, 'out'>,
  rows: Array<{ cells: string[]; result: RowResult }>,
): Promise<string> {
  const out = new Sink();
  const writer = createBatchWriter({ ...options, out });
  for (const row of rows) await writer.write(row);
  await writer.end();
  return out.text;
}

const FIELDS = ['domain', 'company_name', 'tech', 'tech_count'];

describe('createBatchWriter: CSV', () => {
  it('writes input columns as read (a formula neutralised), then found, the fields, credits and the error', async () => {
    const text = await render({ format: 'csv', inputHeader: ['company', 'website'], resultFields: FIELDS }, [
      { cells: ['Acme, "the" shoe people', 'https://www.Acme-Shoes.com/'], result: FOUND },
      { cells: ['Nobody', 'no-such-company.example'], result: NOT_FOUND },
      { cells: ['=HYPERLINK("x")', 'jo@acme.com'], result: FAILED },
      { cells: ['Acme again', 'acme-shoes.com'], result: REUSED },
    ]);
    expect(text).toBe(
      [
        'company,website,found,domain,company_name,tech,tech_count,credits_charged,bought_at,error_code,error_detail',
        '"Acme, ""the"" shoe people",https://www.Acme-Shoes.com/,true,acme-shoes.com,Acme Shoes,shopify;klaviyo,2,2,,,',
        'Nobody,no-such-company.example,false,,,,,0,,,',
        '"\'=HYPERLINK(""x"")",jo@acme.com,,,,,,0,,invalid_domain,looks like an e-mail address',
        'Acme again,acme-shoes.com,true,acme-shoes.com,Acme Shoes,shopify;klaviyo,2,0,2026-11-21T09:30:05Z,,',
        '',
      ].join('\n'),
    );
  });

  it('renames result columns that clash with input columns, case-insensitively, never overwriting', async () => {
    const out = new Sink();
    const writer = createBatchWriter({
      out,
      format: 'csv',
      inputHeader: ['Domain', 'FOUND', 'cd_domain', 'note', 'Bought_At'],
      resultFields: ['domain', 'company_name'],
    });
    expect(writer.columns).toEqual([
      'Domain',
      'FOUND',
      'cd_domain',
      'note',
      'Bought_At',
      'cd_found',
      'cd_2_domain',
      'company_name',
      'credits_charged',
      'cd_bought_at',
      'error_code',
      'error_detail',
    ]);
    await writer.write({ cells: ['acme-shoes.com', 'yes', 'x', '', 'yesterday'], result: REUSED });
    await writer.end();
    expect(out.text.split('\n')[1]).toBe(
      'acme-shoes.com,yes,x,,yesterday,true,acme-shoes.com,Acme Shoes,0,2026-11-21T09:30:05Z,,',
    );
  });

  it('neutralises formulas in input and result cells (unless raw), and strips control characters in result cells only', async () => {
    const hostile: RowResult = {
      ...FOUND,
      record: { company_name: '=cmd|"/c calc"!A1', tagline: '\x1b]0;pwned\x07Hi\x1b[31m there', count: -3 },
    };
    const rows = [{ cells: ['=1+1', '+49 30 1234', '-x', '@me'], result: hostile }];
    const options = {
      format: 'csv' as const,
      inputHeader: ['a', 'b', 'c', 'd'],
      resultFields: ['company_name', 'tagline', 'count'],
    };
    const safe = await render(options, rows);
    expect(safe.split('\n')[1]).toBe(
      `'=1+1,'+49 30 1234,'-x,'@me,true,"'=cmd|""/c calc""!A1",Hi there,-3,2,,,`,
    );
    const raw = await render({ ...options, csvRaw: true }, rows);
    expect(raw.split('\n')[1]).toBe('=1+1,+49 30 1234,-x,@me,true,"=cmd|""/c calc""!A1",Hi there,-3,2,,,');
  });

  it('names the column of a plain list `domain`', async () => {
    const text = await render(
      { format: 'csv', inputHeader: null, resultFields: ['domain', 'company_name'] },
      [{ cells: ['https://www.acme-shoes.com'], result: FOUND }],
    );
    expect(text).toBe(
      'domain,found,cd_domain,company_name,credits_charged,bought_at,error_code,error_detail\n' +
        'https://www.acme-shoes.com,true,acme-shoes.com,Acme Shoes,2,,,\n',
    );
  });

  it('writes the header alone for no rows, and a BOM first with bom', async () => {
    const text = await render({ format: 'csv', inputHeader: ['domain'], resultFields: [], bom: true }, []);
    expect(text).toBe('\ufeffdomain,found,credits_charged,bought_at,error_code,error_detail\n');
  });

  it('keeps input cells with quotes, CR, LF and unicode byte-exact through a CSV parser', async () => {
    const cells = ['line 1\r\nline 2', ' "quoted" ', 'Köln 😀', '', 'a\rb'];
    const text = await render({ format: 'csv', inputHeader: ['a', 'b', 'c', 'd', 'e'], resultFields: [] }, [
      { cells, result: NOT_FOUND },
    ]);
    const parsed: string[][] = parse(text);
    expect(parsed[1].slice(0, 5)).toEqual(cells);
  });
});

describe('createBatchWriter: JSON and NDJSON', () => {
  it('writes one JSON array with input columns by name and typed result members', async () => {
    const text = await render(
      { format: 'json', inputHeader: ['company', 'domain', 'company'], resultFields: FIELDS },
      [
        { cells: ['Acme', 'acme-shoes.com', 'dup'], result: FOUND },
        { cells: ['Bad', 'x', ''], result: FAILED },
      ],
    );
    const document = JSON.parse(text);
    expect(document).toEqual([
      {
        company: 'Acme',
        domain: 'acme-shoes.com',
        company_2: 'dup',
        found: true,
        cd_domain: 'acme-shoes.com',
        company_name: 'Acme Shoes',
        tech: ['shopify', 'klaviyo'],
        tech_count: 2,
        credits_charged: 2,
        bought_at: null,
        error_code: null,
        error_detail: null,
      },
      {
        company: 'Bad',
        domain: 'x',
        company_2: '',
        found: null,
        cd_domain: null,
        company_name: null,
        tech: null,
        tech_count: null,
        credits_charged: 0,
        bought_at: null,
        error_code: 'invalid_domain',
        error_detail: 'looks like an e-mail address',
      },
    ]);
    expect(Object.keys(document[0])[0]).toBe('company');
  });

  it('writes [] for no rows and never a BOM', async () => {
    const text = await render({ format: 'json', inputHeader: ['domain'], resultFields: [], bom: true }, []);
    expect(JSON.parse(text)).toEqual([]);
    expect(text.startsWith('[')).toBe(true);
  });

  it('keeps column order and odd names such as 2024 and __proto__', async () => {
    const text = await render(
      { format: 'ndjson', inputHeader: ['name', '2024', '__proto__'], resultFields: [] },
      [{ cells: ['a', 'b', 'c'], result: NOT_FOUND }],
    );
    expect(text).toBe(
      '{"name":"a","2024":"b","__proto__":"c","found":false,"credits_charged":0,"bought_at":null,"error_code":null,"error_detail":null}\n',
    );
  });

  it('writes one object per line in NDJSON', async () => {
    const text = await render({ format: 'ndjson', inputHeader: null, resultFields: ['company_name'] }, [
      { cells: ['acme-shoes.com'], result: FOUND },
      { cells: ['nobody.example'], result: NOT_FOUND },
      { cells: ['https://acme-shoes.com/'], result: REUSED },
    ]);
    const lines = text.trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      {
        domain: 'acme-shoes.com',
        found: true,
        company_name: 'Acme Shoes',
        credits_charged: 2,
        bought_at: null,
        error_code: null,
        error_detail: null,
      },
      {
        domain: 'nobody.example',
        found: false,
        company_name: null,
        credits_charged: 0,
        bought_at: null,
        error_code: null,
        error_detail: null,
      },
      {
        domain: 'https://acme-shoes.com/',
        found: true,
        company_name: 'Acme Shoes',
        credits_charged: 0,
        bought_at: '2026-11-21T09:30:05Z',
        error_code: null,
        error_detail: null,
      },
    ]);
  });
});

describe('createBatchWriter: backpressure and failures', () => {
  it('does not resolve a write until the output drains', async () => {
    const held: Array<() => void> = [];
    const out = new Writable({
      highWaterMark: 1,
      write(_chunk, _encoding, callback) {
        held.push(() => callback());
      },
    });
    const writer = createBatchWriter({ out, format: 'ndjson', inputHeader: ['domain'], resultFields: [] });
    let resolved = false;
    const pending = writer.write({ cells: ['a.com'], result: NOT_FOUND }).then(() => {
      resolved = true;
    });
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(resolved).toBe(false);
    expect(held).toHaveLength(1);
    held.shift()!();
    await pending;
    expect(resolved).toBe(true);
  });

  it('rejects instead of hanging when the output fails', async () => {
    const out = new Writable({
      highWaterMark: 1,
      write(_chunk, _encoding, callback) {
        callback(new Error('EPIPE: broken pipe'));
      },
    });
    out.on('error', () => {});
    const writer = createBatchWriter({ out, format: 'csv', inputHeader: ['domain'], resultFields: [] });
    await expect(writer.write({ cells: ['a.com'], result: NOT_FOUND })).rejects.toThrow(/EPIPE|closed/);
    await expect(writer.write({ cells: ['b.com'], result: NOT_FOUND })).rejects.toThrow(/closed/);
  });
});
