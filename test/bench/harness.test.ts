// The benchmark's pure helpers: a wrong median or verdict would silently misreport every figure.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CEILING_NOTE,
  fastest,
  figure,
  formatNumber,
  mean,
  median,
  meets,
  quantile,
  renderTable,
} from '../../bench/lib/stats.mjs';

describe('median', () => {
  it.each([
    [[3], 3],
    [[5, 1, 3], 3],
    [[4, 1, 3, 2], 2.5],
    [[10, 10, 1, 10], 10],
  ])('of %j is %d', (values, expected) => {
    expect(median(values)).toBe(expected);
  });

  it('is NaN for no values, and leaves its input unsorted', () => {
    expect(median([])).toBeNaN();
    const values = [3, 1, 2];
    median(values);
    expect(values).toEqual([3, 1, 2]);
  });

  it('has as many values at or below it as at or above it', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1 }), (values) => {
        const m = median(values);
        const below = values.filter((v) => v <= m).length;
        const above = values.filter((v) => v >= m).length;
        expect(below).toBeGreaterThanOrEqual(values.length / 2);
        expect(above).toBeGreaterThanOrEqual(values.length / 2);
      }),
    );
  });
});

describe('mean and quantile', () => {
  it('average and pick by nearest rank', () => {
    expect(mean([1, 2, 6])).toBe(3);
    expect(mean([])).toBeNaN();
    expect(quantile([5, 1, 4, 2, 3], 0.95)).toBe(5);
    expect(quantile([5, 1, 4, 2, 3], 0.2)).toBe(1);
    expect(quantile([5, 1, 4, 2, 3], 0)).toBe(1);
  });
});

describe('fastest', () => {
  it('picks the run with the most rows per second, the first of equals, and none of nothing', () => {
    const a = { rowsPerSecond: 5, tag: 'a' };
    const b = { rowsPerSecond: 9, tag: 'b' };
    const c = { rowsPerSecond: 9, tag: 'c' };
    expect(fastest([a, b, c])).toBe(b);
    expect(fastest([c, a])).toBe(c);
    expect(fastest([])).toBeUndefined();
  });

  it('is never slower than any run given', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1 }), (rates) => {
        const best = fastest(rates.map((rowsPerSecond) => ({ rowsPerSecond })))!;
        expect(rates.every((rate) => best.rowsPerSecond >= rate)).toBe(true);
        expect(rates).toContain(best.rowsPerSecond);
      }),
    );
  });
});

describe('meets', () => {
  it.each([
    [1.3, '<=', 1.3, true],
    [1.31, '<=', 1.3, false],
    [99.9, '<', 100, true],
    [100, '<', 100, false],
    [0.7, '>=', 0.7, true],
    [0.69, '>=', 0.7, false],
  ] as const)('%d %s %d is %s', (ratio, op, value, expected) => {
    expect(meets(ratio, { op, value })).toBe(expected);
  });

  it('never passes a ratio that could not be measured', () => {
    expect(meets(Number.NaN, { op: '<=', value: 2 })).toBe(false);
    expect(meets(Number.POSITIVE_INFINITY, { op: '<=', value: 2 })).toBe(false);
  });

  it('refuses an unknown operator', () => {
    expect(() => meets(1, { op: '==' as '<=', value: 1 })).toThrow(/unknown target operator/);
  });
});

describe('the report table', () => {
  const rows = [
    figure({
      id: 'a',
      name: 'start-up',
      value: 138.3,
      unit: 'ms',
      ratio: 1.354,
      target: { op: '<=', value: 1.3 },
    }),
    figure({
      id: 'b',
      name: 'memory: peak RSS',
      value: 177.08,
      unit: 'MB',
      ratio: 177.08,
      target: { op: '<', value: 300, unit: 'MB' },
    }),
    figure({
      id: 'c',
      name: 'batch',
      value: 2018.4,
      unit: 'rows/s',
      ratio: 0.72,
      target: { op: '>=', value: 0.7 },
    }),
  ];

  it('has one line per figure under a header, with value, target, ratio and verdict', () => {
    expect(renderTable(rows).split('\n')).toEqual([
      'figure                   value    target   ratio  result',
      '----------------  ------------  --------  ------  ------',
      'start-up                138 ms   <= 1.3x   1.35x    FAIL',
      'memory: peak RSS        177 MB  < 300 MB  177 MB    pass',
      'batch             2,018 rows/s   >= 0.7x   0.72x    pass',
    ]);
  });

  it('adds a bare-loop column, and a line saying what it is, when a figure has a ceiling', () => {
    const withCeiling = [
      rows[2],
      figure({
        id: 'd',
        name: 'vs curl',
        value: 1493,
        unit: 'rows/s',
        ratio: 10.29,
        target: { op: '>=', value: 20 },
        ceiling: 15.5,
      }),
    ];
    expect(withCeiling[1].ceiling).toBe(15.5);
    expect(rows[2]).not.toHaveProperty('ceiling');
    expect(renderTable(withCeiling).split('\n')).toEqual([
      'figure          value   target  ratio  result  bare loop',
      '-------  ------------  -------  -----  ------  ---------',
      'batch    2,018 rows/s  >= 0.7x  0.72x    pass',
      'vs curl  1,493 rows/s   >= 20x  10.3x    FAIL      15.5x',
      '',
      CEILING_NOTE,
    ]);
  });

  it('rounds to what a reader needs', () => {
    expect(formatNumber(0.7234)).toBe('0.72');
    expect(formatNumber(12.345)).toBe('12.3');
    expect(formatNumber(1234.5)).toBe('1,235');
    expect(formatNumber(Number.NaN)).toBe('NaN');
  });
});
