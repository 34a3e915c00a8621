// Reciprocal Rank Fusion of the seeds' ranked lists (docs/lookalike.md): a candidate scores
// 1/(RRF_K + rank) under every seed whose list holds it, the scores add up, and the fused list is
// ordered by that sum. RRF needs no comparable scores across lists, only ranks, and rewards a
// company that several seeds agree on over one that a single seed ranks high.

/** The constant of Cormack, Clarke and Büttcher (2009): dampens the weight of the very top ranks. */
export const RRF_K = 60;

/** One candidate in one seed's list: its domain and its 1-based rank there. */
export interface RankedCandidate {
  domain: string;
  rank: number;
}

export interface SeedList<C extends RankedCandidate> {
  seed: string;
  candidates: readonly C[];
}

export interface FusedMatch<C extends RankedCandidate> {
  seed: string;
  candidate: C;
}

export interface FusedCandidate<C extends RankedCandidate> {
  domain: string;
  /** The sum of 1/(RRF_K + rank) over the seeds whose lists hold the candidate. */
  score: number;
  /** The seeds that found it, best rank first; equal ranks keep the seeds' order. */
  matches: Array<FusedMatch<C>>;
  bestRank: number;
}

export interface FusionOptions {
  /** Domains left out of the fused list (the seeds themselves and the exclusions). */
  exclude?: ReadonlySet<string>;
  /** How many candidates to keep (all when absent). */
  limit?: number;
}

/** Fused order: higher score, then more seeds, then the better single rank, then the domain. */
export function compareFused<C extends RankedCandidate>(a: FusedCandidate<C>, b: FusedCandidate<C>): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.matches.length !== b.matches.length) return b.matches.length - a.matches.length;
  if (a.bestRank !== b.bestRank) return a.bestRank - b.bestRank;
  return a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0;
}

/**
 * Fuses the seeds' lists. Ranks are the ones each list gives (excluded domains are dropped after
 * scoring, so they move nobody up); a domain listed twice by one seed counts once, at its better
 * rank. Each sum is taken over the ranks in ascending order, so two candidates with the same ranks
 * under different seeds get exactly the same score and the tie-breaks decide.
 */
export function fuseRankings<C extends RankedCandidate>(
  lists: ReadonlyArray<SeedList<C>>,
  options: FusionOptions = {},
): Array<FusedCandidate<C>> {
  const byDomain = new Map<string, Map<string, C>>();
  for (const { seed, candidates } of lists) {
    for (const candidate of candidates) {
      if (options.exclude?.has(candidate.domain)) continue;
      let bySeed = byDomain.get(candidate.domain);
      if (!bySeed) {
        bySeed = new Map();
        byDomain.set(candidate.domain, bySeed);
      }
      const held = bySeed.get(seed);
      if (!held || candidate.rank < held.rank) bySeed.set(seed, candidate);
    }
  }
  const seedOrder = new Map(lists.map(({ seed }, index) => [seed, index]));
  const fused: Array<FusedCandidate<C>> = [];
  for (const [domain, bySeed] of byDomain) {
    const matches = [...bySeed].map(([seed, candidate]) => ({ seed, candidate }));
    matches.sort(
      (a, b) => a.candidate.rank - b.candidate.rank || seedOrder.get(a.seed)! - seedOrder.get(b.seed)!,
    );
    const score = matches.reduce((sum, { candidate }) => sum + 1 / (RRF_K + candidate.rank), 0);
    fused.push({ domain, score, matches, bestRank: matches[0].candidate.rank });
  }
  fused.sort(compareFused);
  return options.limit === undefined ? fused : fused.slice(0, options.limit);
}
