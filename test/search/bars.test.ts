import { describe, expect, it } from 'vitest';
import { drawBar, formatShare, renderBars } from '../../src/output/bars.js';

const ESC = /\x1b\[[0-9;]*m/g;
const visible = (s: string) => [...s.replace(ESC, '')].length;

const buckets = [
  { label: 'US', count: 301, share: 0.4068 },
  { label: 'GB', count: 120, share: 0.1622 },
  { label: 'DE', count: 3, share: 0.004 },
];

describe('drawBar', () => {
  it('uses full blocks and an eighth block for the fractional end', () => {
    expect(drawBar(1, 1, 4, true)).toBe('████');
    expect(drawBar(0.5, 1, 4, true)).toBe('██');
    // 0.3 * 4 cells = 1.2 cells = 9.6 eighths -> 10 eighths = one full block + ▎
    expect(drawBar(0.3, 1, 4, true)).toBe('█▎');
    expect(drawBar(1, 8, 1, true)).toBe('▏');
  });

  it('falls back to # cells without Unicode', () => {
    expect(drawBar(1, 1, 5, false)).toBe('#####');
    expect(drawBar(0.5, 1, 4, false)).toBe('##');
  });

  it('shows a mark for any non-zero value and nothing for zero', () => {
    expect(drawBar(0.0001, 1, 10, true)).toBe('▏');
    expect(drawBar(0.0001, 1, 10, false)).toBe('#');
    expect(drawBar(0, 1, 10, true)).toBe('');
  });
});

describe('renderBars', () => {
  it('renders exact lines: label, count, share and a bar scaled to the largest bucket', () => {
    const lines = renderBars(buckets, { width: 40, unicode: false, color: false });
    // room = 40 - (3 + 2 + 5) - 4 = 26; label width 2; bar 24 cells
    expect(lines).toEqual([
      `US  301  40.7%  ${'#'.repeat(24)}`,
      `GB  120  16.2%  ${'#'.repeat(10)}`,
      'DE    3   0.4%  #',
    ]);
  });

  it('makes bars longer on a wider terminal and never exceeds the width', () => {
    for (const unicode of [true, false]) {
      const narrow = renderBars(buckets, { width: 60, unicode, color: false });
      const wide = renderBars(buckets, { width: 120, unicode, color: false });
      expect(visible(wide[0])).toBeGreaterThan(visible(narrow[0]));
      for (const line of narrow) expect(visible(line)).toBeLessThanOrEqual(60);
      for (const line of wide) expect(visible(line)).toBeLessThanOrEqual(120);
      expect(visible(wide[0])).toBe(120);
    }
  });

  it('truncates long labels with an ellipsis and keeps every line within the width', () => {
    const long = [{ label: 'an extremely long category name that goes on', count: 5, share: 1 }];
    const [line] = renderBars(long, { width: 40, unicode: true, color: false });
    expect(visible(line)).toBeLessThanOrEqual(40);
    expect(line).toContain('…');
  });

  it('drops the bar rather than overflow on a very narrow terminal', () => {
    const lines = renderBars(buckets, { width: 16, unicode: true, color: false });
    for (const line of lines) expect(visible(line)).toBeLessThanOrEqual(16);
    expect(lines.join('')).not.toContain('█');
  });

  it('colours only the bar, and strips control characters from labels', () => {
    const [line] = renderBars([{ label: 'x\x1b]0;pwned\x07y', count: 1, share: 1 }], {
      width: 30,
      unicode: true,
      color: true,
    });
    expect(line).toMatch(/^xy {2}1 {2}100\.0% {2}\x1b\[36m█+\x1b\[0m$/);
    expect(visible(line)).toBeLessThanOrEqual(30);
  });

  it('returns nothing for no buckets', () => {
    expect(renderBars([], { width: 80, unicode: true, color: false })).toEqual([]);
  });

  it('formats shares as percentages with one decimal', () => {
    expect(formatShare(0.40678)).toBe('40.7%');
    expect(formatShare(1)).toBe('100.0%');
  });
});
