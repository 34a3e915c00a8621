// Reciprocal Rank Fusion of the seeds' lists against orders worked out by hand (docs/lookalike.md).
import { describe, expect, it } from 'vitest';
import {
  compareFused,
  type FusedCandidate,
  fuseRankings,
  type RankedCandidate,
  RRF_K,
} from '../../src/lookalike/fusion.js';

function list(seed: string, ...domains: string[]) {
  return { seed, candidates: domains.map((domain, i) => ({ domain, rank: i + 1 })) };
}

describe('fuseRankings', () => {
  it('orders by summed 1/(60 + rank), then more seeds, then best rank, then domain', () => {
    // By hand, with the seeds and w.com left out:
    //   x.com  a:1 b:2      1/61 + 1/62 = 0.032522   (2 seeds, best 1)
    //   y.com  a:2 b:1      1/61 + 1/62 = 0.032522   (2 seeds, best 1: the domain decides, x < y)
    //   v.com  b:3 c:1      1/61 + 1/63 = 0.032266
    //   z.com  a:3 c:2      1/62 + 1/63 = 0.032002
    //   u.com  c:3          1/63        = 0.015873
    //   b.com is a seed and w.com an exclusion: dropped, nobody moves up.
    const fused = fuseRankings(
      [
        list('a.com', 'x.com', 'y.com', 'z.com', 'w.com'),
        list('b.com', 'y.com', 'x.com', 'v.com'),
        list('c.com', 'v.com', 'z.com', 'u.com', 'b.com'),
      ],
      { exclude: new Set(['a.com', 'b.com', 'c.com', 'w.com']) },
    );
    expect(fused.map((f) => f.domain)).toEqual(['x.com', 'y.com', 'v.com', 'z.com', 'u.com']);
    expect(fused.map((f) => f.score)).toEqual([
      1 / 61 + 1 / 62,
      1 / 61 + 1 / 62,
      1 / 61 + 1 / 63,
      1 / 62 + 1 / 63,
      1 / 63,
    ]);
    // The seeds each was found under, best rank first.
    expect(fused.map((f) => f.matches.map((m) => `${m.seed}:${m.candidate.rank}`))).toEqual([
      ['a.com:1', 'b.com:2'],
      ['b.com:1', 'a.com:2'],
      ['c.com:1', 'b.com:3'],
      ['c.com:2', 'a.com:3'],
      ['c.com:3'],
    ]);
    expect(fused.map((f) => f.bestRank)).toEqual([1, 1, 1, 2, 3]);
  });

  it('puts the candidate more seeds agree on first when the scores are equal', () => {
    // p.com: rank 10 under one seed, 1/70; q.com: rank 80 under two, 1/140 + 1/140 = 1/70.
    const deep = Array.from({ length: 79 }, (_, i) => `filler-${String(i + 1).padStart(2, '0')}.com`);
    const fused = fuseRankings([
      list('a.com', ...deep.slice(0, 9), 'p.com', ...deep.slice(9, 78), 'q.com'),
      list('b.com', ...deep.map((d) => d.replace('filler', 'other')), 'q.com'),
    ]);
    const p = fused.find((f) => f.domain === 'p.com')!;
    const q = fused.find((f) => f.domain === 'q.com')!;
    expect(p.score).toBe(1 / (RRF_K + 10));
    expect(q.score).toBe(p.score);
    // other-10.com is rank 10 under b.com alone: a tie with p.com broken by the domain.
    expect(fused.filter((f) => f.score === p.score).map((f) => f.domain)).toEqual([
      'q.com',
      'other-10.com',
      'p.com',
    ]);
  });

  it('keeps the better rank of a domain one seed lists twice, and stops at the limit', () => {
    const fused = fuseRankings(
      [
        {
          seed: 'a.com',
          candidates: [
            { domain: 'x.com', rank: 1 },
            { domain: 'y.com', rank: 2 },
            { domain: 'x.com', rank: 3 },
          ],
        },
        {
          seed: 'b.com',
          candidates: [
            { domain: 'y.com', rank: 5 },
            { domain: 'z.com', rank: 6 },
          ],
        },
      ],
      { limit: 2 },
    );
    expect(fused.map((f) => [f.domain, f.score])).toEqual([
      ['y.com', 1 / 62 + 1 / 65],
      ['x.com', 1 / 61],
    ]);
  });

  it('gives nothing for no lists or empty ones', () => {
    expect(fuseRankings([])).toEqual([]);
    expect(fuseRankings([list('a.com'), list('b.com')])).toEqual([]);
  });
});

describe('compareFused', () => {
  const fused = (domain: string, score: number, ranks: number[]): FusedCandidate<RankedCandidate> => ({
    domain,
    score,
    matches: ranks.map((rank, i) => ({ seed: `s${i}.com`, candidate: { domain, rank } })),
    bestRank: Math.min(...ranks),
  });

  it('breaks an exact tie of score and seed count by the best single rank, then by the domain', () => {
    const sorted = [
      fused('d.com', 0.03, [4, 5]),
      fused('c.com', 0.03, [2, 9]),
      fused('b.com', 0.03, [4, 6]),
      fused('a.com', 0.02, [1]),
    ].sort(compareFused);
    expect(sorted.map((f) => f.domain)).toEqual(['c.com', 'b.com', 'd.com', 'a.com']);
  });
});
