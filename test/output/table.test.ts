import { describe, expect, it } from 'vitest';
import { fitWidths, renderTable, textWidth } from '../../src/output/table.js';

const style = { columns: 40, unicode: true, color: false };

describe('fitWidths', () => {
  it('keeps natural widths that fit', () => {
    expect(fitWidths([5, 10, 7], 80)).toEqual([5, 10, 7]);
  });

  it('caps the widest columns at one level so the total fits', () => {
    // 3 columns -> 4 border characters; 40 - 4 = 36 for the cells.
    const widths = fitWidths([6, 60, 30], 40);
    expect(widths.reduce((s, w) => s + w, 0)).toBeLessThanOrEqual(36);
    expect(widths[0]).toBe(6);
    expect(widths[1]).toBe(widths[2]);
  });

  it('shortens long columns before short ones', () => {
    // The fields table at 80 columns: only "capabilities" (28) has to give way.
    expect(fitWidths([18, 9, 11, 7, 9, 28, 11], 80)).toEqual([18, 9, 11, 7, 9, 7, 11]);
  });

  it('keeps the first column whole while the others can give way', () => {
    // 45 - 5 borders = 40; the first keeps 20, the other three share 20.
    expect(fitWidths([20, 20, 20, 20], 45)).toEqual([20, 6, 6, 6]);
  });

  it('shrinks the first column too when the others are at their minimum', () => {
    // 30 - 4 borders = 26; the others stop at 5 each, the first gets the remaining 16.
    expect(fitWidths([30, 20, 20], 30)).toEqual([16, 5, 5]);
  });

  it('never goes below a readable minimum, even if the table then overflows', () => {
    expect(fitWidths([50, 50, 50, 50], 10)).toEqual([5, 5, 5, 5]);
  });
});

describe('renderTable', () => {
  const long = 'A very long description that cannot possibly fit into a forty column terminal';

  it('fits the given width and truncates long values with an ellipsis', () => {
    const out = renderTable(['id', 'description'], [['profile', long]], style);
    for (const line of out.trimEnd().split('\n')) expect(textWidth(line)).toBeLessThanOrEqual(40);
    expect(out).toContain('…');
    expect(out).toContain('profile');
    expect(out).not.toContain('terminal');
  });

  it('uses three dots without Unicode', () => {
    const out = renderTable(['id', 'description'], [['profile', long]], { ...style, unicode: false });
    expect(out).toContain('...');
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
