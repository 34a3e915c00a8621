import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openInput } from '../../src/csv/input.js';
import { type CsvRecord, csvRecordsOf, readCsvRecords } from '../../src/csv/records.js';

/** `bytes` in pieces cut at the given offsets (taken modulo its length + 1). */
function pieces(bytes: Buffer, cuts: number[]): Readable {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    if (cut > from) parts.push(bytes.subarray(from, cut));
    from = Math.max(from, cut);
  }
  return Readable.from(parts);
}

async function records(
  source: Readable,
  delimiter = ',',
  encoding: 'utf8' | 'latin1' = 'utf8',
): Promise<CsvRecord[]> {
  const out: CsvRecord[] = [];
  for await (const record of readCsvRecords(source, { delimiter, encoding })) out.push(record);
  return out;
}

async function lines(text: string, chunks = 1): Promise<Array<[string, number]>> {
  const bytes = Buffer.from(text);
  const size = Math.max(1, Math.ceil(bytes.length / chunks));
  const cuts = [];
  for (let at = size; at < bytes.length; at += size) cuts.push(at);
  return (await records(pieces(bytes, cuts))).map((record) => [record.cells.join(','), record.line]);
}

/** Pieces of CSV text: fields, delimiters, every line break, quotes closed or not. */
const token = fc.constantFrom(
  'acme.com',
  'a',
  'é',
  '€',
  '😀',
  ' ',
  ',',
  '\r',
  '\n',
  '\r\n',
  '"',
  '""',
  'x"y',
);

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

describe('readCsvRecords after a \\r\\n followed by another line break', () => {
  it.each([
    ['a\r\n\r\nb\nc', 3],
    ['a\r\n\nb\nc', 3],
    ['"a"\r\n\r\nb\nc', 3],
    ['"a\r\n"\r\n\nb\nc', 4],
    ['a\r\n\r\n\r\n\nb\nc', 5],
  ])('numbers the later records of %j from their own line', async (text, line) => {
    for (let cut = 0; cut <= text.length; cut++) {
      const read = await records(pieces(Buffer.from(text), [cut]));
      expect(read.slice(1).map((r) => [r.cells.join(','), r.line])).toEqual([
        ['b', line],
        ['c', line + 1],
      ]);
    }
  });

  it('names the right line in the error of a later record', async () => {
    for (const text of [
      'name,domain\r\n\r\nshort\r\nacme,acme.com,extra\n',
      'name,domain\r\n\nshort\r\nacme,acme.com,extra\n',
    ]) {
      const input = await openInput(Readable.from([Buffer.from(text)]));
      const errors = [];
      for await (const row of input.rows) errors.push(row.error?.detail);
      expect(errors).toEqual([
        'line 3: 1 field where the header has 2',
        'line 4: 3 fields where the header has 2',
      ]);
    }
    const input = await openInput(Readable.from([Buffer.from('domain,x\r\n\r\n"a.com,1\r\n\nb.com,2\n')]));
    const rows = [];
    for await (const row of input.rows) rows.push([row.line, row.error?.detail]);
    expect(rows).toEqual([
      [
        3,
        'line 3: a quoted field opened on line 3 is never closed; the following lines were read on their own',
      ],
      [5, undefined],
    ]);
  });
});

describe('readCsvRecords with quoting', () => {
  // Well-formed CSV: quoted fields may hold any line break. A record starts on the line after
  // every break before it, inside quotes or not, whatever the chunking.
  const plain = fc.constantFrom('a', 'bb', '', 'x y', 'é');
  const quoted = fc
    .array(fc.constantFrom('a', '""', ',', '\r', '\n', '\r\n', '😀'), { maxLength: 4 })
    .map((parts) => `"${parts.join('')}"`);
  const record = fc.array(fc.oneof(plain, quoted), { minLength: 1, maxLength: 3 });
  const eol = fc.constantFrom('\n', '\r\n', '\r');

  it('gives each record the line it starts on', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.option(record), eol), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(200), { maxLength: 4 }),
        async (rows, cuts) => {
          let text = '';
          const expected: number[] = [];
          for (const [cells, end] of rows) {
            const line = cells?.join(',') ?? '';
            // A lone \r before a line that starts with \n would make one \r\n of the two.
            if (text.endsWith('\r') && line === '' && end.startsWith('\n')) continue;
            if (line !== '') expected.push((text.match(/\r\n|\r|\n/g)?.length ?? 0) + 1);
            text += line + end;
          }
          const read = await records(pieces(Buffer.from(text), cuts));
          expect(read.map((r) => r.line)).toEqual(expected);
          expect(read.every((r) => r.malformed === undefined)).toBe(true);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('readCsvRecords: encodings', () => {
  // csv-parse reads a file that starts with a UTF-16LE byte order mark as UTF-16 but numbers its
  // lines wrongly after an empty one; the reader decodes it itself. (A file of the mark alone,
  // two bytes, is too short to be taken as one.)
  it('reads a UTF-16 file with its byte order mark as the same text in UTF-8, whatever --encoding says', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(token, { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat(200), { maxLength: 6 }),
        fc.constantFrom('utf8', 'latin1'),
        async (tokens, cuts, encoding) => {
          const text = tokens.join('');
          const utf8 = await records(pieces(Buffer.from(text, 'utf8'), []));
          const le = Buffer.from(`\ufeff${text}`, 'utf16le');
          expect(await records(pieces(le, cuts), ',', encoding)).toEqual(utf8);
          expect(await records(pieces(Buffer.from(le).swap16(), cuts), ',', encoding)).toEqual(utf8);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('drops a UTF-8 byte order mark and reads the file as UTF-8 even when Latin-1 was asked for', async () => {
    const bytes = Buffer.from('\ufeffnom,domain\r\nCafé,café.fr\r\n');
    for (const encoding of ['utf8', 'latin1'] as const) {
      for (const cuts of [[], [1], [2, 5]]) {
        const read = await records(pieces(bytes, cuts), ',', encoding);
        expect(read.map((r) => [r.cells, r.line])).toEqual([
          [['nom', 'domain'], 1],
          [['Café', 'café.fr'], 2],
        ]);
      }
    }
  });

  it('reads Latin-1 bytes as Latin-1 when asked to, and as replacement characters otherwise', async () => {
    const bytes = Buffer.from('Caf\xe9,x\n', 'latin1');
    expect((await records(pieces(bytes, []), ',', 'latin1'))[0].cells).toEqual(['Café', 'x']);
    expect((await records(pieces(bytes, []), ',', 'utf8'))[0].cells).toEqual(['Caf\ufffd', 'x']);
  });

  it('reads bytes that are not valid UTF-8 as replacement characters, however they are cut', async () => {
    const bytes = Buffer.from([0x61, 0xc3, 0x2c, 0x62, 0x0a, 0xff, 0xfe, 0x0a, 0xe2, 0x82, 0x0d, 0x0a, 0x63]);
    for (const cuts of [[], [2], [1, 6, 9]]) {
      const read = await records(pieces(bytes, cuts));
      expect(read.map((r) => [r.cells, r.line])).toEqual([
        [['a\ufffd', 'b'], 1],
        [['\ufffd\ufffd'], 2],
        [['\ufffd'], 3],
        [['c'], 4],
      ]);
    }
  });

  it('splits at any delimiter, in any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(',', ';', '\t', '::'),
        fc.array(fc.nat(40), { maxLength: 4 }),
        async (d, cuts) => {
          const text = `a${d}b${d}c\r\n\r\n1${d}"2${d}x"${d}3\n`;
          const read = await records(pieces(Buffer.from(text), cuts), d);
          expect(read.map((r) => [r.cells, r.line])).toEqual([
            [['a', 'b', 'c'], 1],
            [['1', `2${d}x`, '3'], 3],
          ]);
        },
      ),
    );
  });
});

describe('csvRecordsOf: a whole file in memory', () => {
  // A second delimiter, and U+FEFF where it is a character rather than a mark.
  const piece = fc.oneof(token, fc.constantFrom(';', '\ufeff'));
  const bom = fc.constantFrom('', '\ufeff');

  it('gives the records, lines and errors of the streamed reading, unclosed quotes included', async () => {
    await fc.assert(
      fc.asyncProperty(
        bom,
        fc.array(piece, { maxLength: 40 }),
        fc.array(fc.nat(200), { maxLength: 4 }),
        fc.constantFrom(',', ';'),
        fc.constantFrom('utf8', 'utf16le'),
        async (mark, tokens, cuts, delimiter, encoding) => {
          const bytes = Buffer.from(mark + tokens.join(''), encoding);
          const streamed = await records(pieces(bytes, cuts), delimiter);
          expect([...csvRecordsOf(bytes, { delimiter, encoding: 'utf8' })]).toEqual(streamed);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('gives openInput the same rows as a stream of the same bytes', async () => {
    for (const text of [
      'name,domain\r\n\r\nshort\r\nacme,acme.com,extra\n',
      'domain,x\r\n\r\n"a.com,1\r\n\nb.com,2\n',
      '  \nacme.com\n\n  \nb.com,x\n',
    ]) {
      const read = async (source: Readable | Buffer) => {
        const input = await openInput(source);
        const rows = [];
        for await (const row of input.rows) rows.push(row);
        return { header: input.header, rows };
      };
      expect(await read(Buffer.from(text))).toEqual(await read(Readable.from([Buffer.from(text)])));
    }
  });
});
