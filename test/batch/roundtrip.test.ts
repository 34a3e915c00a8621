// Round trip: a random CSV written by an independent writer (csv-stringify) goes through
// openInput and createBatchWriter; parsing the output gives back every input cell, in order.
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBatchWriter, type RowResult } from '../../src/batch/output.js';
import { openInput } from '../../src/csv/input.js';
import { neutraliseFormula } from '../../src/output/sanitize.js';

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
}

const tricky = fc.constantFrom(
  ',',
  ';',
  '"',
  '""',
  '\n',
  '\r',
  '\r\n',
  '=',
  '+',
  '-',
  '@',
  ' ',
  '\t',
  "'",
  'é',
  'ß',
  '日本',
  '😀',
  'a',
);
// A BOM is only a BOM at the very start of the file, and csv-parse removes it there by design.
const cell = fc
  .array(fc.oneof(tricky, fc.string({ unit: 'grapheme', maxLength: 4 })), { maxLength: 6 })
  .map((parts) => parts.join('').replaceAll('\ufeff', ''));

const table = fc.integer({ min: 1, max: 5 }).chain((extra) =>
  fc.record({
    names: fc.array(cell, { minLength: extra, maxLength: extra }),
    domainAt: fc.integer({ min: 0, max: extra }),
    rows: fc.array(fc.array(cell, { minLength: extra + 1, maxLength: extra + 1 }), { maxLength: 15 }),
    delimiter: fc.constantFrom(',', ';'),
    crlf: fc.boolean(),
    quoted: fc.boolean(),
    bom: fc.boolean(),
    raw: fc.boolean(),
    results: fc.array(fc.constantFrom('found', 'reused', 'not_found', 'error'), {
      minLength: 15,
      maxLength: 15,
    }),
    resultFields: fc.subarray(['domain', 'found', 'company_name', 'tech', 'Error_Code'], { minLength: 0 }),
  }),
);

const BOUGHT_AT = '2026-11-21T09:30:05Z';

function resultFor(kind: string): RowResult {
  if (kind === 'reused') {
    return {
      found: true,
      record: { domain: 'acme-shoes.com', company_name: 'Acme Shoes' },
      credits_charged: 0,
      bought_at: BOUGHT_AT,
      error_code: null,
      error_detail: null,
    };
  }
  if (kind === 'found') {
    return {
      found: true,
      record: { domain: 'acme-shoes.com', company_name: '=Acme, "Shoes"\n', tech: ['a', 'b'] },
      credits_charged: 1,
      bought_at: null,
      error_code: null,
      error_detail: null,
    };
  }
  if (kind === 'not_found')
    return {
      found: false,
      record: null,
      credits_charged: 0,
      bought_at: null,
      error_code: null,
      error_detail: null,
    };
  return {
    found: null,
    record: null,
    credits_charged: 0,
    bought_at: null,
    error_code: 'invalid_domain',
    error_detail: 'is empty',
  };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cd-roundtrip-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('CSV round trip', () => {
  it('keeps every input cell identical (with --csv-raw; else the formula rule alone), with the same rows in the same order', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(table, async (t) => {
        const header = [...t.names];
        header.splice(t.domainAt, 0, 'domain');
        const file = path.join(dir, `input-${run++}.csv`);
        const body = stringify([header, ...t.rows], {
          delimiter: t.delimiter,
          record_delimiter: t.crlf ? 'windows' : 'unix',
          quoted: t.quoted,
          // csv-stringify leaves a lone CR or LF unquoted when it is not its own line end, which every reader (this one, Excel) ends a
          // line on: an input no one can read back unambiguously, so it is not generated.
          quoted_match: /[\r\n]/,
          bom: t.bom,
        });
        await writeFile(file, body);

        const reader = await openInput(createReadStream(file), { delimiter: t.delimiter });
        expect(reader.header).toEqual(header);
        expect(reader.domainColumn).toBe(header.findIndex((name) => name.trim().toLowerCase() === 'domain'));
        const out = new Sink();
        const writer = createBatchWriter({
          out,
          format: 'csv',
          inputHeader: reader.header,
          resultFields: t.resultFields,
          csvRaw: t.raw,
        });
        let index = 0;
        for await (const row of reader.rows) {
          expect(row.error).toBeUndefined();
          expect(row.index).toBe(index);
          await writer.write({ cells: row.cells, result: resultFor(t.results[index % t.results.length]) });
          index++;
        }
        await writer.end();

        const parsed: string[][] = parse(out.text);
        // --csv-raw keeps every input cell byte for byte; without it the one rule of CSV cells
        // (a formula-like cell gets a quote first) applies to the input's cells too.
        const asWritten = (cells: string[]) => (t.raw ? cells : cells.map(neutraliseFormula));
        expect(parsed[0].slice(0, header.length)).toEqual(asWritten(header));
        // found, the fields, credits_charged, bought_at, error_code, error_detail.
        expect(parsed[0]).toHaveLength(header.length + t.resultFields.length + 5);
        expect(parsed.slice(1).map((row) => row.slice(0, header.length))).toEqual(t.rows.map(asWritten));
        const boughtAt = header.length + 1 + t.resultFields.length + 1;
        expect(parsed[0][boughtAt]).toBe(writer.columns[boughtAt]);
        expect(writer.columns[boughtAt]).toMatch(/(^|_)bought_at$/);
        expect(parsed.slice(1).map((row) => row[boughtAt])).toEqual(
          t.rows.map((_, i) => (t.results[i % t.results.length] === 'reused' ? BOUGHT_AT : '')),
        );
      }),
      { numRuns: 150 },
    );
  });
});
