import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readCsvRecords, readWithCsvParse } from '../../src/batch/csv-records.js';

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

describe('readCsvRecords without csv-parse', () => {
  async function both(bytes: Buffer, cuts: number[], delimiter: string, encoding: 'utf8' | 'latin1') {
    const parts = (): Readable => {
      const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
      const pieces: Buffer[] = [];
      let from = 0;
      for (const cut of [...at, bytes.length]) {
        if (cut > from) pieces.push(bytes.subarray(from, cut));
        from = Math.max(from, cut);
      }
      return Readable.from(pieces);
    };
    const read = async (reader: typeof readCsvRecords) => {
      const out = [];
      for await (const record of reader(parts(), { delimiter, encoding })) out.push(record);
      return out;
    };
    return { fast: await read(readCsvRecords), parsed: await read(readWithCsvParse) };
  }

  const PLAIN = ['acme.com', 'a', 'é', '€', '😀', ' ', ',', ';', '\t', '\r', '\n', '\r\n'];
  const plainToken = fc.constantFrom(...PLAIN);
  const token = fc.constantFrom(...PLAIN, '"', '""', 'x"y');

  it('gives the records csv-parse gives, for any text, chunking, delimiter, encoding and byte order mark', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.array(plainToken, { maxLength: 30 }), fc.array(token, { maxLength: 30 })),
        fc.constantFrom('', '\ufeff'),
        fc.constantFrom(',', ';', '\t', '::'),
        fc.array(fc.nat(200), { maxLength: 6 }),
        async (tokens, bom, delimiter, cuts) => {
          const bytes = Buffer.from(bom + tokens.join(''), 'utf8');
          for (const encoding of ['utf8', 'latin1'] as const) {
            const { fast, parsed } = await both(bytes, cuts, delimiter, encoding);
            expect(fast).toEqual(parsed);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  // csv-parse reads a file that starts with a UTF-16LE byte order mark as UTF-16 (and so does the
  // reader above), but numbers its lines wrongly after an empty one: held to the UTF-8 reading.
  // (A file of the mark alone, two bytes, is too short for csv-parse to take it as one.)
  it('reads a UTF-16LE file with its byte order mark as the same text in UTF-8', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(token, { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat(200), { maxLength: 6 }),
        async (tokens, cuts) => {
          const text = tokens.join('');
          const utf16 = await both(Buffer.from(`\ufeff${text}`, 'utf16le'), cuts, ',', 'latin1');
          const utf8 = await both(Buffer.from(text, 'utf8'), [], ',', 'utf8');
          expect(utf16.fast).toEqual(utf8.fast);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads bytes that are not valid UTF-8 as csv-parse does', async () => {
    const bytes = Buffer.from([0x61, 0xc3, 0x2c, 0x62, 0x0a, 0xff, 0xfe, 0x0a, 0xe2, 0x82, 0x0d, 0x0a, 0x63]);
    for (const cuts of [[], [2], [1, 6, 9]]) {
      const { fast, parsed } = await both(bytes, cuts, ',', 'utf8');
      expect(fast).toEqual(parsed);
      expect(fast.length).toBeGreaterThan(0);
    }
  });
});
