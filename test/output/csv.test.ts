import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvCell, csvLine, renderCsv } from '../../src/output/csv.js';
import { neutraliseFormula } from '../../src/output/sanitize.js';

describe('CSV formula neutralisation', () => {
  it.each([
    ['=HYPERLINK("http://x")', `'=HYPERLINK("http://x")`],
    ['+1+2', `'+1+2`],
    ['-2+3', `'-2+3`],
    ['@SUM(A1)', `'@SUM(A1)`],
    ['\t=1', `'\t=1`],
    ['\r=1', `'\r=1`],
    ['-12', '-12'],
    ['+3.5', '+3.5'],
    ['-1e5', '-1e5'],
    ['plain', 'plain'],
    ['', ''],
  ])('%j -> %j', (input, expected) => {
    expect(neutraliseFormula(input)).toBe(expected);
  });

  it('is applied to every cell, header included, unless raw', () => {
    const records = [{ '=name': '=1+1', n: -12, t: '@x' }];
    const safe = renderCsv(['=name', 'n', 't'], records, { raw: false });
    expect(parse(safe)).toEqual([
      [`'=name`, 'n', 't'],
      [`'=1+1`, '-12', `'@x`],
    ]);
    const raw = renderCsv(['=name', 'n', 't'], records, { raw: true });
    expect(parse(raw)).toEqual([
      ['=name', 'n', 't'],
      ['=1+1', '-12', '@x'],
    ]);
  });

  it('numbers stay numbers', () => {
    expect(csvCell(-12, { raw: false })).toBe('-12');
    expect(csvCell(3.25, { raw: false })).toBe('3.25');
  });
});

describe('renderCsv', () => {
  it('writes a header even with no records', () => {
    expect(renderCsv(['a', 'b'], [], { raw: false })).toBe('a,b\n');
  });

  it('quotes commas, quotes and newlines', () => {
    const out = renderCsv(['v'], [{ v: 'a,"b"\nc' }], { raw: false });
    expect(out).toBe('v\n"a,""b""\nc"\n');
  });

  it('quotes a cell holding any line break, a lone \\r included, in the one-line form too', () => {
    expect(csvLine(['\r', 'a\nb', 'x', '"', ''])).toBe('"\r","a\nb",x,"""",\n');
  });

  it('round-trips printable text through csv-parse (raw mode)', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'Z', ',', '"', '\n', ' ', ';', 'é', '=', '-', '1') });
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text), { maxLength: 5 }), (pairs) => {
        const records = pairs.map(([x, y]) => ({ x, y }));
        const parsed = parse(renderCsv(['x', 'y'], records, { raw: true }), { relax_column_count: true });
        expect(parsed).toEqual([['x', 'y'], ...pairs.map(([x, y]) => [x, y])]);
      }),
    );
  });
});
