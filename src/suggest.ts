// "Did you mean ...?" for names and values checked against the catalogs.

/** Damerau-free Levenshtein distance, small strings only. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

/** The closest candidate, if it is close enough to be a plausible typo (case-insensitive). */
export function closest(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const hay = candidate.toLowerCase();
    if (hay === needle) return candidate;
    const d = hay.startsWith(needle) || needle.startsWith(hay) ? 1 : editDistance(needle, hay);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  const limit = Math.max(2, Math.floor(needle.length / 3));
  return bestDistance <= limit ? best : undefined;
}

/** " (did you mean `x`?)" or "", for appending to a message. */
export function didYouMean(input: string, candidates: readonly string[]): string {
  const match = closest(input, candidates);
  return match ? ` (did you mean \`${match}\`?)` : '';
}
