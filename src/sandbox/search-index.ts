// Query matching for search: a term matches a company when it equals or prefixes one of the
// company's words. Words are indexed once per dataset (sorted vocabulary + postings in typed
// arrays), so a prefix is a binary search plus a walk over the matching words' postings.
import { COUNTRY_NAMES, type Company, type Dataset } from './dataset.js';

const STOP_WORDS = new Set(
  'a an and the of in on for with that to companies company businesses stores shops sites using use uses'.split(
    ' ',
  ),
);
const WORD_SPLIT = /[^\p{L}\p{N}_]+/u;

/** A query as distinct lower-case terms, stop words dropped. */
export function queryTerms(query: string): string[] {
  const terms = query.toLowerCase().split(WORD_SPLIT);
  return [...new Set(terms.filter((t) => t !== '' && !STOP_WORDS.has(t)))];
}

/** Every word a query term can match: name, category, technologies, platform, country, keywords. */
export function companyWords(c: Company): Set<string> {
  const out = new Set<string>();
  const add = (text: string | null) => {
    if (!text) return;
    for (const word of text.toLowerCase().split(WORD_SPLIT)) {
      if (word === '') continue;
      out.add(word);
      // A slug such as home_garden matches as a whole and by its parts.
      if (word.includes('_')) for (const part of word.split('_')) if (part !== '') out.add(part);
    }
  };
  add(c.company_name);
  add(c.site_category);
  for (const t of c.tech) add(t);
  add(c.primary_platform);
  if (c.country) {
    add(c.country);
    add(COUNTRY_NAMES[c.country] ?? null);
  }
  for (const k of c.keywords) add(k);
  return out;
}

export interface SearchIndex {
  /** Distinct words, sorted, so all words with a given prefix are one contiguous run. */
  words: string[];
  /** postings[start[w] .. start[w + 1]) are the companies (indices into ds.companies) with word w. */
  start: Int32Array;
  postings: Int32Array;
  /** Company indices by popularity rank (1 first). */
  order: Int32Array;
}

// The dataset is treated as immutable once generated; the index lives as long as the dataset.
const cache = new WeakMap<Dataset, SearchIndex>();

export function searchIndex(ds: Dataset): SearchIndex {
  let index = cache.get(ds);
  if (!index) {
    index = buildIndex(ds.companies);
    cache.set(ds, index);
  }
  return index;
}

function buildIndex(companies: readonly Company[]): SearchIndex {
  const ids = new Map<string, number>();
  const perCompany: Int32Array[] = [];
  const counts: number[] = [];
  for (const c of companies) {
    const ownWords = companyWords(c);
    const own = new Int32Array(ownWords.size);
    let i = 0;
    for (const word of ownWords) {
      let id = ids.get(word);
      if (id === undefined) {
        id = ids.size;
        ids.set(word, id);
        counts.push(0);
      }
      counts[id]++;
      own[i++] = id;
    }
    perCompany.push(own);
  }
  const words = [...ids.keys()].sort();
  const position = new Int32Array(words.length);
  words.forEach((word, pos) => {
    position[ids.get(word) ?? 0] = pos;
  });
  const start = new Int32Array(words.length + 1);
  for (const id of ids.values()) start[position[id] + 1] = counts[id];
  for (let w = 0; w < words.length; w++) start[w + 1] += start[w];
  const fill = start.slice(0, words.length);
  const postings = new Int32Array(start[words.length]);
  perCompany.forEach((own, company) => {
    for (const id of own) postings[fill[position[id]]++] = company;
  });
  const order = Int32Array.from(companies.keys()).sort(
    (a, b) => companies[a].popularity - companies[b].popularity,
  );
  return { words, start, postings, order };
}

function lowerBound(words: readonly string[], term: string): number {
  let lo = 0;
  let hi = words.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (words[mid] < term) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Thrown out of the hot loops when the execution bound passes; the caller maps it to search_timeout. */
export class SearchDeadline extends Error {}

/** Checks the clock every so many steps (cheap enough for the inner loops). */
export function deadlineCheck(deadline: number, now: () => number): (step: number) => void {
  return (step) => {
    if ((step & 0x1fff) === 0 && now() >= deadline) throw new SearchDeadline('search deadline passed');
  };
}

/**
 * How many distinct terms each company matches (Uint8Array by company index).
 * Throws SearchDeadline when `check` says time is up.
 */
export function matchCounts(
  index: SearchIndex,
  size: number,
  terms: string[],
  check: (step: number) => void,
) {
  const counts = new Uint8Array(size);
  const lastTerm = new Int32Array(size).fill(-1);
  let step = 0;
  terms.forEach((term, t) => {
    for (let w = lowerBound(index.words, term); w < index.words.length; w++) {
      if (!index.words[w].startsWith(term)) break;
      for (let p = index.start[w]; p < index.start[w + 1]; p++) {
        check(step++);
        const company = index.postings[p];
        if (lastTerm[company] !== t) {
          lastTerm[company] = t;
          counts[company]++;
        }
      }
    }
  });
  return counts;
}
