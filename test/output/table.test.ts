import { describe, expect, it } from 'vitest';
import { fitWidths, renderTable, textWidth, wrapValue } from '../../src/output/table.js';

const style = { columns: 40, unicode: true, color: false };

describe('fitWidths', () => {
  it('keeps natural widths that fit', () => {
    expect(fitWidths([5, 10, 7], 80)).toEqual([5, 10, 7]);
  });

  it('caps the widest columns first, at one level, never below their least width', () => {
    // 3 columns -> 4 border characters; 40 - 4 = 36 for the cells.
    expect(fitWidths([6, 60, 30], 40, [6, 11, 11])).toEqual([6, 15, 15]);
  });

  it('shortens only what may shrink: a list gives way, the names beside it keep their width', () => {
    // The fields table at 80 columns: only "capabilities" (28) may shrink.
    expect(fitWidths([18, 9, 11, 7, 9, 28, 11], 80, [18, 9, 11, 7, 9, 7, 11])).toEqual([
      18, 9, 11, 7, 9, 7, 11,
    ]);
  });

  it('no widths (one block per record) when the least widths cannot sit side by side', () => {
    expect(fitWidths([20, 20, 20, 20], 45)).toBeUndefined();
    expect(fitWidths([30, 20, 20], 30, [17, 5, 5])).toBeUndefined();
    expect(fitWidths([30, 20, 20], 30, [16, 5, 5])).toEqual([16, 5, 5]);
  });
});

describe('renderTable', () => {
  const long = 'A very long description that cannot possibly fit into a forty column terminal';

  it('fits the given width: a long value wraps at its spaces, nothing cut (issue 46)', () => {
    const out = renderTable(['id', 'description'], [['profile', long]], style);
    for (const line of out.trimEnd().split('\n')) expect(textWidth(line)).toBeLessThanOrEqual(40);
    expect(out).toMatchInlineSnapshot(`
      "┌─────────┬────────────────────────────┐
      │ id      │ description                │
      ├─────────┼────────────────────────────┤
      │ profile │ A very long description    │
      │         │ that cannot possibly fit   │
      │         │ into a forty column        │
      │         │ terminal                   │
      └─────────┴────────────────────────────┘
      "
    `);
  });

  it('a value without a space to break at becomes one block per record, never cut', () => {
    const word = 'x'.repeat(45);
    expect(renderTable(['id', 'value'], [['a', word]], style)).toBe(
      `─[ RECORD 1 ]${'─'.repeat(27)}\nid    │ a\nvalue │ ${word}\n`,
    );
  });

  it("wrapValue breaks after a space, a path's / or a list's comma, never inside a word", () => {
    expect(wrapValue('/home/someone/.local/state/company-data/store.db', 20)).toEqual([
      '/home/someone/',
      '.local/state/',
      'company-data/',
      'store.db',
    ]);
    expect(wrapValue('a,bb,ccc,dddd', 6)).toEqual(['a,bb,', 'ccc,', 'dddd']);
    expect(wrapValue('unbreakable-word-longer', 10)).toEqual(['unbreakable-word-longer']);
  });

  it('uses ASCII borders without Unicode', () => {
    const out = renderTable(['id', 'description'], [['profile', long]], { ...style, unicode: false });
    expect(out).toContain('+---');
    expect(out).not.toMatch(/[^\x00-\x7f]/);
  });

  it('leaves short tables untouched', () => {
    const out = renderTable(['a', 'b'], [['1', null]], { ...style, columns: 200 });
    expect(out).toBe('┌───┬───┐\n│ a │ b │\n├───┼───┤\n│ 1 │ — │\n└───┴───┘\n');
  });

  it('dims the placeholder only with colour', () => {
    const out = renderTable(['a'], [[null]], { ...style, color: true });
    expect(out).toContain('\x1b[2m—\x1b[0m');
  });
});

describe('renderTable at 50, 80 and 120 columns', () => {
  const head = ['domain', 'company name', 'employee range', 'founded year', 'tech'];
  const rows: (string | null)[][] = [
    ['acme-shoes.com', 'Acme Shoes', '51-200', '2009', 'shopify, klaviyo, google_analytics, stripe, paypal'],
    ['globex.io', 'Globex Corporation', '1001-5000', '1989', null],
  ];
  const shrinkable = [false, false, false, false, true];
  const at = (columns: number) =>
    renderTable(head, rows, { columns, unicode: true, color: false }, { shrinkable });

  it('120: side by side, headers wrapped only as far as needed, every value whole', () => {
    expect(at(120)).toBe(
      [
        '┌────────────────┬────────────────────┬────────────────┬─────────┬────────────────────────────────────────────────────┐',
        '│ domain         │ company name       │ employee range │ founded │ tech                                               │',
        '│                │                    │                │ year    │                                                    │',
        '├────────────────┼────────────────────┼────────────────┼─────────┼────────────────────────────────────────────────────┤',
        '│ acme-shoes.com │ Acme Shoes         │ 51-200         │ 2009    │ shopify, klaviyo, google_analytics, stripe, paypal │',
        '│ globex.io      │ Globex Corporation │ 1001-5000      │ 1989    │ —                                                  │',
        '└────────────────┴────────────────────┴────────────────┴─────────┴────────────────────────────────────────────────────┘',
        '',
      ].join('\n'),
    );
  });

  it('80: the list cannot wrap narrower than its longest word beside the others: one block per record', () => {
    expect(at(80)).toMatchInlineSnapshot(`
      "─[ RECORD 1 ]──────────────────────────────────────────────────────
      domain         │ acme-shoes.com
      company name   │ Acme Shoes
      employee range │ 51-200
      founded year   │ 2009
      tech           │ shopify, klaviyo, google_analytics, stripe, paypal
      ─[ RECORD 2 ]──────────────────────────────────────────────────────
      domain         │ globex.io
      company name   │ Globex Corporation
      employee range │ 1001-5000
      founded year   │ 1989
      tech           │ —
      "
    `);
  });

  it('50: one block per record, nothing cut (a long value continues on the next line)', () => {
    expect(at(50)).toBe(
      [
        '─[ RECORD 1 ]─────────────────────────────────────',
        'domain         │ acme-shoes.com',
        'company name   │ Acme Shoes',
        'employee range │ 51-200',
        'founded year   │ 2009',
        'tech           │ shopify, klaviyo,',
        '               │ google_analytics, stripe, paypal',
        '─[ RECORD 2 ]─────────────────────────────────────',
        'domain         │ globex.io',
        'company name   │ Globex Corporation',
        'employee range │ 1001-5000',
        'founded year   │ 1989',
        'tech           │ —',
        '',
      ].join('\n'),
    );
  });
});
