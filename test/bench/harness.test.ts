// The benchmark's pure logic: a wrong median, verdict, run order or input plan would silently
// misreport every figure. No timings here.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duplicateOf, mixedDomains } from '../../bench/lib/data.mjs';
import {
  cheapest,
  fastest,
  figure,
  formatMeasured,
  formatNumber,
  formatTarget,
  interleaveOrder,
  mean,
  median,
  meets,
  type Report,
  renderMarkdown,
  renderTable,
} from '../../bench/lib/stats.mjs';

describe('median and mean', () => {
  it.each([
    [[3], 3],
    [[5, 1, 3], 3],
    [[4, 1, 3, 2], 2.5],
    [[10, 10, 1, 10], 10],
  ])('median of %j is %d', (values, expected) => {
    expect(median(values)).toBe(expected);
  });

  it('are NaN for no values, and leave their input unsorted', () => {
    expect(median([])).toBeNaN();
    expect(mean([])).toBeNaN();
    expect(mean([1, 2, 6])).toBe(3);
    const values = [3, 1, 2];
    median(values);
    expect(values).toEqual([3, 1, 2]);
  });

  it('median has as many values at or below it as at or above it', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1 }), (values) => {
        const m = median(values);
        expect(values.filter((v) => v <= m).length).toBeGreaterThanOrEqual(values.length / 2);
        expect(values.filter((v) => v >= m).length).toBeGreaterThanOrEqual(values.length / 2);
      }),
    );
  });
});

describe('fastest and cheapest', () => {
  it('pick the best run, the first of equals, and none of nothing', () => {
    const a = { rowsPerSecond: 5, cpuUsPerRow: 30, tag: 'a' };
    const b = { rowsPerSecond: 9, cpuUsPerRow: 20, tag: 'b' };
    const c = { rowsPerSecond: 9, cpuUsPerRow: 20, tag: 'c' };
    expect(fastest([a, b, c])).toBe(b);
    expect(cheapest([a, c, b])).toBe(c);
    expect(fastest([])).toBeUndefined();
    expect(cheapest([])).toBeUndefined();
  });

  it('are never worse than any run given', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1 }), (values) => {
        const runs = values.map((v) => ({ rowsPerSecond: v, cpuUsPerRow: v }));
        expect(values.every((v) => fastest(runs)!.rowsPerSecond >= v)).toBe(true);
        expect(values.every((v) => cheapest(runs)!.cpuUsPerRow <= v)).toBe(true);
      }),
    );
  });
});

describe('interleaveOrder', () => {
  it('runs every command once a round, reversing every other round', () => {
    expect(interleaveOrder(3, 3)).toEqual([0, 1, 2, 2, 1, 0, 0, 1, 2]);
    expect(interleaveOrder(2, 0)).toEqual([]);
  });

  it('gives each command the same number of runs, and first place as often as last', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 20 }), (commands, rounds) => {
        const order = interleaveOrder(commands, rounds);
        for (let i = 0; i < commands; i++) expect(order.filter((c) => c === i)).toHaveLength(rounds);
        if (commands > 1 && rounds % 2 === 0) {
          const firsts = Array.from({ length: rounds }, (_, r) => order[r * commands]);
          expect(firsts.filter((c) => c === 0).length).toBe(rounds / 2);
        }
      }),
    );
  });
});

describe('meets', () => {
  it.each([
    [1.6, '<=', 1.6, true],
    [1.61, '<=', 1.6, false],
    [0.95, '>=', 0.95, true],
    [0.94, '>=', 0.95, false],
  ] as const)('%d %s %d is %s', (ratio, op, value, expected) => {
    expect(meets(ratio, { op, value })).toBe(expected);
  });

  it('never passes a ratio that could not be measured', () => {
    expect(meets(Number.NaN, { op: '<=', value: 2 })).toBe(false);
    expect(meets(Number.POSITIVE_INFINITY, { op: '<=', value: 2 })).toBe(false);
    expect(meets(Number.NaN, { op: '>=', value: 0 })).toBe(false);
  });

  it('refuses an unknown operator', () => {
    expect(() => meets(1, { op: '==' as '<=', value: 1 })).toThrow(/unknown target operator/);
  });
});

describe('the input plans', () => {
  it('duplicateOf names each of rows/2 domains exactly twice, never twice in a row', () => {
    for (const rows of [10_000, 100_000, 1_000_000]) {
      const counts = new Uint8Array(rows / 2);
      let adjacent = 0;
      let previous = -1;
      for (let i = 0; i < rows; i++) {
        const k = duplicateOf(i, rows);
        if (k === previous) adjacent++;
        counts[k]++;
        previous = k;
      }
      expect(adjacent).toBe(0);
      expect(counts.every((n) => n === 2)).toBe(true);
    }
  });

  it('duplicateOf refuses sizes it cannot pair', () => {
    expect(() => duplicateOf(0, 7)).toThrow(/cannot pair/);
    expect(() => duplicateOf(0, 2 * 7919)).toThrow(/cannot pair/);
  });

  it('mixedDomains gives distinct domains, three known for each unknown', () => {
    const known = Array.from({ length: 30 }, (_, i) => `known-${i}.com`);
    const mixed = mixedDomains(known, 40);
    expect(new Set(mixed).size).toBe(40);
    expect(mixed.filter((d) => known.includes(d))).toEqual(known);
    expect(() => mixedDomains(known, 41)).toThrow(/only 30 known domains/);
  });
});

describe('the report', () => {
  const report: Report = {
    mode: 'full',
    date: '2026-01-02T03:04:05Z',
    seconds: 321,
    machine: { cpu: 'AMD EPYC', cores: 2, node: 'v20.20.2', loadAverage: { start: [1.5], end: [2] } },
    figures: [
      figure({
        id: 'startup.version',
        name: '--version vs node -e 0',
        ratio: 1.354,
        target: { op: '<=', value: 1.6 },
        note: '58 ms vs 43 ms',
      }),
      figure({
        id: 'memory.peak',
        name: 'peak RSS | 1M rows',
        ratio: 312.4,
        target: { op: '<=', value: 300, unit: 'MB' },
      }),
      figure({
        id: 'batch.latency-20',
        name: 'batch, latency 20 ms',
        ratio: 0.9123,
        target: { op: '>=', value: 0.9 },
        note: '730 rows/s',
      }),
    ],
  };

  it('formats targets and measurements in the target terms', () => {
    expect(report.figures.map((f) => formatTarget(f.target))).toEqual(['≤ 1.6x', '≤ 300 MB', '≥ 0.9x']);
    expect(report.figures.map(formatMeasured)).toEqual([
      '1.35x (58 ms vs 43 ms)',
      '312 MB',
      '0.91x (730 rows/s)',
    ]);
    expect([formatNumber(12.345), formatNumber(1234.5), formatNumber(Number.NaN)]).toEqual([
      '12.3',
      '1,235',
      'NaN',
    ]);
  });

  it('prints as a text table with the machine, the date and a verdict per figure', () => {
    expect(renderTable(report).split('\n')).toEqual([
      'company-data bench, full run, 2026-01-02T03:04:05Z',
      'machine: AMD EPYC, 2 cores, node v20.20.2',
      '',
      'figure                  target    measured                result',
      '----------------------  --------  ----------------------  -------',
      '--version vs node -e 0  ≤ 1.6x    1.35x (58 ms vs 43 ms)  met',
      'peak RSS | 1M rows      ≤ 300 MB  312 MB                  NOT MET',
      'batch, latency 20 ms    ≥ 0.9x    0.91x (730 rows/s)      met',
      '',
      '2/3 figures met; 321 s; load average 1.5 -> 2',
    ]);
  });

  it('prints as markdown to paste into docs/performance.md, pipes escaped', () => {
    expect(renderMarkdown(report).split('\n')).toEqual([
      '### 2026-01-02: full run',
      '',
      'Machine: AMD EPYC, 2 cores, node v20.20.2. Finished 2026-01-02T03:04:05Z.',
      '',
      '| figure | target | measured | result |',
      '| --- | --- | --- | --- |',
      '| --version vs node -e 0 | ≤ 1.6x | 1.35x (58 ms vs 43 ms) | met |',
      '| peak RSS \\| 1M rows | ≤ 300 MB | 312 MB | NOT MET |',
      '| batch, latency 20 ms | ≥ 0.9x | 0.91x (730 rows/s) | met |',
      '',
      '2/3 figures met; 321 s; load average 1.5 -> 2',
    ]);
  });
});
