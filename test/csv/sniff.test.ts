// The guesses of the reader: which encoding and which delimiter the start of a file says.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { openInput } from '../../src/csv/input.js';
import { sniffDelimiter, sniffEncoding } from '../../src/csv/sniff.js';

describe('sniffDelimiter', () => {
  const cases: Array<[string, string, boolean, ReturnType<typeof sniffDelimiter>]> = [
    ['commas', 'a,b\n1,2\n', true, { delimiter: ',', why: 'sniffed' }],
    [
      'semicolons, commas inside cells',
      'name;owner\nAcme;Doe, Jane\nGlobex;Sam\n',
      true,
      { delimiter: ';', why: 'sniffed' },
    ],
    ['tabs', 'a\tb\tc\n1\t2\t3\n', true, { delimiter: '\t', why: 'sniffed' }],
    ['pipes', 'a|b\n1|2\n', true, { delimiter: '|', why: 'sniffed' }],
    [
      'a quoted semicolon in a comma file',
      'name,note\n"Acme; Inc",x\n"Globex; Ltd",y\n',
      true,
      { delimiter: ',', why: 'sniffed' },
    ],
    [
      'a quoted comma in a semicolon file, on every row',
      'name;note\n"Doe, Jane";x\n"Roe, Sam";y\n',
      true,
      { delimiter: ';', why: 'sniffed' },
    ],
    ['one column', 'domain\nacme-shoes.com\n', true, { delimiter: ',', why: 'one-column' }],
    ['a plain list', 'acme-shoes.com\nglobex.io\n', true, { delimiter: ',', why: 'one-column' }],
    [
      'ragged rows: the delimiter that splits the header still wins',
      'a,b,c\n1,2\n1,2,3,4\n',
      true,
      { delimiter: ',', why: 'sniffed' },
    ],
    ['a last line cut short is not judged', 'a;b\n1;2\n3;4\n5', false, { delimiter: ';', why: 'sniffed' }],
    [
      'two delimiters splitting alike',
      'a,b;c\n1,2;3\n',
      true,
      { undecided: '"," and ";" each split its header and rows into regular columns' },
    ],
  ];
  it.each(cases)('%s', (_name, text, complete, want) => {
    expect(sniffDelimiter(text, complete)).toEqual(want);
  });

  it('prefers the delimiter whose rows match the header more often', () => {
    // Both split the header in two; only ";" splits every row in two.
    expect(sniffDelimiter('a,x;b\n1;2\n3;4\n5,6;7\n', true)).toEqual({ delimiter: ';', why: 'sniffed' });
  });
});

describe('sniffEncoding', () => {
  const cases: Array<[string, Uint8Array, boolean, ReturnType<typeof sniffEncoding>]> = [
    ['a UTF-8 byte order mark', Buffer.from('\ufeffa,b\n'), true, { encoding: 'utf8', why: 'bom' }],
    [
      'a UTF-16LE byte order mark',
      Buffer.from([0xff, 0xfe, 0x61, 0]),
      true,
      { encoding: 'utf16le', why: 'bom' },
    ],
    [
      'a UTF-16BE byte order mark',
      Buffer.from([0xfe, 0xff, 0, 0x61]),
      true,
      { encoding: 'utf16be', why: 'bom' },
    ],
    ['valid UTF-8', Buffer.from('Münchner,x\n'), true, { encoding: 'utf8', why: 'utf8' }],
    [
      'UTF-8 cut inside a character',
      Buffer.from('Mü').subarray(0, 2),
      false,
      { encoding: 'utf8', why: 'utf8' },
    ],
    [
      'the same bytes as a whole file',
      Buffer.from('Mü').subarray(0, 2),
      true,
      { encoding: 'windows-1252', why: 'not-utf8' },
    ],
    ['Latin-1', Buffer.from('Münchner,x\n', 'latin1'), true, { encoding: 'windows-1252', why: 'not-utf8' }],
    [
      "ISO-8859-15: LibreOffice's euro sign, byte 0xA4, and nothing in 0x80-0x9F",
      Buffer.from([...Buffer.from('Café,5 ', 'latin1'), 0xa4, 0x0a]),
      true,
      { encoding: 'iso-8859-15', why: 'not-utf8' },
    ],
    [
      'Windows-1252: its euro sign, byte 0x80, says so even beside a 0xA4',
      Buffer.from([...Buffer.from('Café,5 ', 'latin1'), 0x80, 0x2c, 0xa4, 0x0a]),
      true,
      { encoding: 'windows-1252', why: 'not-utf8' },
    ],
    [
      'UTF-16 without a mark',
      Buffer.from('a,b\n', 'utf16le'),
      true,
      {
        undecided:
          'it holds NUL bytes, as UTF-16 without a byte order mark (or a file that is not text) does',
      },
    ],
  ];
  it.each(cases)('%s', (_name, bytes, complete, want) => {
    expect(sniffEncoding(bytes, complete)).toEqual(want);
  });
});

describe('openInput: what the sniffing decides, streamed', () => {
  it('a file sniffed as UTF-8 whose later bytes are not stops with invalid_input naming --encoding', async () => {
    const start = Buffer.from(`domain\n${'acme-shoes.com\n'.repeat(5000)}`);
    const late = Buffer.from('M\xfcnchner\n', 'latin1');
    expect((await openInput(Readable.from([start]))).choice).toEqual({
      encoding: 'utf8',
      encodingWhy: 'utf8',
      delimiter: ',',
      delimiterWhy: 'one-column',
    });
    // The parser reads ahead of the rows taken: the failure may come with the first row.
    const read = async () => {
      const reader = await openInput(Readable.from([start, late]));
      for await (const _row of reader.rows as AsyncIterable<unknown>);
    };
    await expect(read()).rejects.toMatchObject({
      code: 'invalid_input',
      detail: `the input is not valid UTF-8 after byte ${start.length}, although its start was, so it was read as UTF-8`,
      extraHint: 'Pass --encoding windows-1252 (or the encoding the file was saved in).',
    });
  });

  it('a pipe that writes slowly is judged on its first lines, without waiting for 64 KB', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const lines = `name;domain\n${'Acme;acme-shoes.com\n'.repeat(60)}`;
    const source = Readable.from(
      (async function* () {
        yield Buffer.from(lines);
        await held;
        yield Buffer.from('Globex;globex.io\n');
      })(),
    );
    const reader = await openInput(source);
    expect(reader.choice).toEqual({
      encoding: 'utf8',
      encodingWhy: 'utf8',
      delimiter: ';',
      delimiterWhy: 'sniffed',
    });
    release();
    const rows: string[][] = [];
    for await (const row of reader.rows as AsyncIterable<{ cells: string[] }>) rows.push(row.cells);
    expect(rows.length).toBe(61);
    expect(rows.at(-1)).toEqual(['Globex', 'globex.io']);
  });

  it('--encoding that contradicts the byte order mark is a usage error', async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('domain\nacme-shoes.com\n', 'utf16le'),
    ]);
    await expect(openInput(bytes, { encoding: 'windows-1252' })).rejects.toMatchObject({
      code: 'usage_error',
      detail: 'the input starts with a UTF-16LE byte order mark, and --encoding says windows-1252',
    });
    const agreeing = await openInput(bytes, { encoding: 'utf16le' });
    expect(agreeing.header).toEqual(['domain']);
  });
});
