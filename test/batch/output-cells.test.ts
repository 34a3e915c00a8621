// The batch writer renders result cells through the shared CSV writer (src/output/csv.ts), which
// skips stripControl for cells without a control character. This holds it to the plain
// definition: every result value as text, stripControl, neutraliseFormula (unless raw), then
// quoted where CSV needs it (a lone \r included).
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBatchWriter, type RowResult } from '../../src/batch/output.js';
import { neutraliseFormula, stripControl } from '../../src/output/sanitize.js';

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
}

function referenceValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(referenceValue).join(';');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function referenceField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function referenceRow(cells: string[], result: RowResult, fields: string[], raw: boolean): string {
  const values = [
    result.found,
    ...fields.map((field) => result.record?.[field] ?? null),
    result.credits_charged,
    result.bought_at,
    result.error_code,
    result.error_detail,
  ];
  const results = values.map((value) => {
    const cell = stripControl(referenceValue(value));
    return raw ? cell : neutraliseFormula(cell);
  });
  const inputs = cells.map((cell) => (raw ? cell : neutraliseFormula(cell)));
  return `${[...inputs, ...results].map(referenceField).join(',')}\n`;
}

// Text near the edges: formula starters, numbers, quotes, separators, escape sequences, C1.
const edgyText = fc.oneof(
  fc.string(),
  fc
    .array(
      fc.constantFrom(
        '=',
        '+',
        '-',
        '@',
        '\t',
        '\r',
        '\n',
        '"',
        ',',
        ';',
        '1',
        '.',
        'e',
        'a',
        ' ',
        '\x1b[31m',
        '\x9b2J',
        '\x07',
        '\x7f',
        '\x85',
      ),
      { maxLength: 8 },
    )
    .map((parts) => parts.join('')),
);
const value: fc.Arbitrary<unknown> = fc.oneof(
  edgyText,
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -1000, max: 1000 }),
  fc.double(),
  fc.array(edgyText, { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('a', 'b'), edgyText, { maxKeys: 2 }),
);
const FIELDS = ['domain', 'company_name', 'tags', 'count'];
const result: fc.Arbitrary<RowResult> = fc.record({
  found: fc.constantFrom(true, false, null),
  record: fc.option(
    fc.record({ domain: value, company_name: value, tags: value, count: value }, { requiredKeys: [] }),
    { nil: null },
  ),
  credits_charged: fc.oneof(fc.integer({ min: -3, max: 5 }), fc.double()),
  bought_at: fc.option(edgyText, { nil: null }),
  error_code: fc.option(edgyText, { nil: null }),
  error_detail: fc.option(edgyText, { nil: null }),
});

describe('CSV result cells', () => {
  it('equal stripControl + neutraliseFormula of every value, and input cells neutraliseFormula alone, raw or not', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.tuple(edgyText, edgyText), result), { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        async (rows, raw) => {
          const out = new Sink();
          const writer = createBatchWriter({
            out,
            format: 'csv',
            inputHeader: ['name', 'domain'],
            resultFields: FIELDS,
            csvRaw: raw,
          });
          for (const [cells, r] of rows) await writer.write({ cells, result: r });
          await writer.end();
          const body = out.text.slice(out.text.indexOf('\n') + 1);
          const expected = rows.map(([cells, r]) => referenceRow(cells, r, FIELDS, raw)).join('');
          expect(body).toBe(expected);
        },
      ),
      { numRuns: 400 },
    );
  });
});
