import { describe, expect, it } from 'vitest';
import type { BreakdownResult } from '../../src/api/search.js';
import { breakdownRows, renderBreakdown } from '../../src/search/breakdown-view.js';

const result: BreakdownResult = {
  field: 'country',
  population: 'ecommerce',
  segment: { description: 'ecommerce companies matching "shoes"', size: 100 },
  coverage: { with_value: 90, missing: 10, ratio: 0.9 },
  buckets: [
    { value: 'US', count: 60, share: 0.6667 },
    { value: 'GB', count: 20, share: 0.2222 },
  ],
  other: { buckets: 3, count: 10 },
  document: {},
};

describe('renderBreakdown', () => {
  it('draws the segment, the coverage and one bar per bucket plus other', () => {
    // width 60: label 16, count 2, share 5, three gaps of 2 -> 31 cells of bar for the largest
    expect(renderBreakdown(result, { width: 60, unicode: false, color: false })).toEqual([
      'ecommerce companies matching "shoes": 100 companies',
      'country coverage: 90.0% (90 with a value, 10 missing)',
      '',
      `US                60  66.7%  ${'#'.repeat(31)}`,
      `GB                20  22.2%  ${'#'.repeat(10)}`,
      `other (3 values)  10  11.1%  ${'#'.repeat(5)}`,
    ]);
  });

  it('keeps every line within the width and strips control characters from server text', () => {
    const hostile = {
      ...result,
      segment: {
        description: 'companies \x1b]0;pwned\x07matching a very long description indeed',
        size: 100,
      },
    };
    const lines = renderBreakdown(hostile, { width: 40, unicode: true, color: false });
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(40);
    expect(lines.join('\n')).not.toContain('\x1b');
    expect(lines[0]).toMatch(/…$/);
  });

  it('shows only the header for an empty segment', () => {
    const empty = {
      ...result,
      segment: { size: 0 },
      coverage: { with_value: 0, missing: 0, ratio: 0 },
      buckets: [],
      other: undefined,
    };
    expect(renderBreakdown(empty, { width: 60, unicode: true, color: false })).toEqual([
      'matching companies: 0 companies',
      'country coverage: 0.0% (0 with a value, 0 missing)',
    ]);
  });
});

describe('breakdownRows', () => {
  it('gives buckets, then other and missing marked by kind, adding up to the segment size', () => {
    const rows = breakdownRows(result);
    expect(rows).toEqual([
      { value: 'US', count: 60, share: 0.6667, kind: 'value' },
      { value: 'GB', count: 20, share: 0.2222, kind: 'value' },
      { value: null, count: 10, share: 0.1111, kind: 'other' },
      { value: null, count: 10, share: null, kind: 'missing' },
    ]);
    expect(rows.reduce((n, r) => n + (r.count as number), 0)).toBe(result.segment.size);
  });

  it('leaves out other and missing when there are none', () => {
    const rows = breakdownRows({ ...result, other: undefined, coverage: { with_value: 80, missing: 0 } });
    expect(rows.map((r) => r.kind)).toEqual(['value', 'value']);
  });
});
