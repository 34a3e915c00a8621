import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readCsvRecords } from '../../src/batch/csv-records.js';

async function lines(text: string, chunks = 1): Promise<Array<[string, number]>> {
  const bytes = Buffer.from(text);
  const size = Math.max(1, Math.ceil(bytes.length / chunks));
  const parts = [];
  for (let at = 0; at < bytes.length; at += size) parts.push(bytes.subarray(at, at + size));
  const out: Array<[string, number]> = [];
  for await (const record of readCsvRecords(Readable.from(parts), { delimiter: ',', encoding: 'utf8' }))
    out.push([record.cells.join(','), record.line]);
  return out;
}

describe('readCsvRecords line numbers', () => {
  it('count empty lines between records whatever their line endings', async () => {
    expect(await lines('a\n\r\n\nacme.com')).toEqual([
      ['a', 1],
      ['acme.com', 4],
    ]);
    expect(await lines('\r\n\nacme.com\nUrl\n')).toEqual([
      ['acme.com', 3],
      ['Url', 4],
    ]);
  });

  it('give every non-empty line its number, for any mix of breaks and chunking', async () => {
    const line = fc.oneof(fc.constant(''), fc.stringMatching(/^[a-z0-9.]{1,8}$/));
    const eol = fc.constantFrom('\n', '\r\n', '\r');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(line, eol), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 4 }),
        async (rows, chunks) => {
          const text = rows.map(([cell, end]) => cell + end).join('');
          // A lone \r followed by \n would read as one \r\n break: not what the rows say.
          fc.pre(
            !rows.some(
              ([, end], i) =>
                end === '\r' &&
                rows[i + 1]?.[0] === '' &&
                rows[i + 1]?.[1] !== '\r' &&
                rows[i + 1]?.[1].startsWith('\n'),
            ),
          );
          const expected = rows.flatMap(
            ([cell], i): Array<[string, number]> => (cell ? [[cell, i + 1]] : []),
          );
          expect(await lines(text, chunks)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
