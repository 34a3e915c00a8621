// The guesses of the reader: which encoding and which delimiter the start of a file says.
import { describe, expect, it } from 'vitest';
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
