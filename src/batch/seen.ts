// The domains one batch has met, for telling a first row from a duplicate: a Set of the run's own
// copies of them (src/batch/own-copy.ts), so that no chunk of the input stays alive through one.
import { ownCopy } from './own-copy.js';

export interface SeenSet {
  /** The run's own copy of `domain` the first time it is added; undefined for a duplicate. */
  add(domain: string): string | undefined;
  close(): void;
}

export function seenSet(): SeenSet {
  const seen = new Set<string>();
  return {
    add(domain) {
      if (seen.has(domain)) return undefined;
      const own = ownCopy(domain);
      seen.add(own);
      return own;
    },
    close: () => seen.clear(),
  };
}
