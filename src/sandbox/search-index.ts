// Query matching for search: a term matches a company when it equals or prefixes one of the
// company's words. Words are indexed once per dataset (sorted vocabulary + postings in typed
// arrays), so a prefix is a binary search plus a walk over the matching words' postings.
import { COUNTRY_NAMES, type Company, type Dataset } from './dataset.js';

const STOP_WORDS = new Set(
  'a an and the of in on for with that to companies company businesses stores shops sites using use uses'.split(
    ' ',
  ),
);

/** A query as distinct lower-case terms, stop words dropped. */
export function queryTerms(query: string): string[] {
  return [...new Set(tokens(query).filter((t) => !STOP_WORDS.has(t)))];
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** Whether a UTF-16 code unit continues a word: ASCII fast path, the Unicode classes otherwise. */
function isWordChar(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  if (code < 128)
    return (
      (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 95 || (code >= 65 && code <= 90)
    );
  return LETTER_OR_DIGIT.test(text[i]) || (code >= 0xd800 && code <= 0xdfff);
}

/** Lower-case words of a text: runs of letters, digits and `_` (queries and companies alike). */
function tokens(text: string): string[] {
  const out: string[] = [];
  const lower = text.toLowerCase();
  let from = -1;
  for (let i = 0; i <= lower.length; i++) {
    const inWord = i < lower.length && isWordChar(lower, i);
    if (inWord && from === -1) from = i;
    else if (!inWord && from !== -1) {
      out.push(lower.slice(from, i));
      from = -1;
    }
  }
  return out;
}

/** The words of one company text: a slug such as home_garden also counts by its parts. */
function wordsOf(text: string): string[] {
  const out = tokens(text);
  for (const word of [...out])
    if (word.includes('_')) for (const part of word.split('_')) if (part) out.push(part);
  return out;
}

// Categories, technologies, countries and keywords come from small vocabularies: split each once.
const vocabularyWords = new Map<string, string[]>();
function cachedWordsOf(text: string): string[] {
  let words = vocabularyWords.get(text);
  if (!words) {
    words = wordsOf(text);
    vocabularyWords.set(text, words);
  }
  return words;
}

/** Calls `visit` with every word a query term can match (may repeat a word). */
export function forEachCompanyWord(c: Company, visit: (word: string) => void): void {
  if (c.company_name) for (const w of wordsOf(c.company_name)) visit(w);
  const fromVocabulary = (text: string | null) => {
    if (text) for (const w of cachedWordsOf(text)) visit(w);
  };
  fromVocabulary(c.site_category);
  fromVocabulary(c.primary_platform);
  if (c.country) {
    fromVocabulary(c.country);
    fromVocabulary(COUNTRY_NAMES[c.country] ?? null);
  }
  for (const t of c.tech) fromVocabulary(t);
  for (const k of c.keywords) fromVocabulary(k);
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
  const counts: number[] = [];
  // Word ids of every company, end to end: offsets[i] .. offsets[i + 1] belong to company i.
  let flat = new Int32Array(companies.length * 24 + 16);
  const offsets = new Int32Array(companies.length + 1);
  const lastCompany: number[] = [];
  let used = 0;
  companies.forEach((c, company) => {
    forEachCompanyWord(c, (word) => {
      let id = ids.get(word);
      if (id === undefined) {
        id = ids.size;
        ids.set(word, id);
        counts.push(0);
        lastCompany.push(-1);
      }
      if (lastCompany[id] === company) return;
      lastCompany[id] = company;
      counts[id]++;
      if (used === flat.length) {
        const grown = new Int32Array(flat.length * 2);
        grown.set(flat);
        flat = grown;
      }
      flat[used++] = id;
    });
    offsets[company + 1] = used;
  });
  const words = [...ids.keys()].sort();
  const position = new Int32Array(words.length);
  words.forEach((word, pos) => {
    position[ids.get(word) ?? 0] = pos;
  });
  const start = new Int32Array(words.length + 1);
  for (const id of ids.values()) start[position[id] + 1] = counts[id];
  for (let w = 0; w < words.length; w++) start[w + 1] += start[w];
  const fill = start.slice(0, words.length);
  const postings = new Int32Array(used);
  for (let company = 0; company < companies.length; company++)
    for (let p = offsets[company]; p < offsets[company + 1]; p++)
      postings[fill[position[flat[p]]]++] = company;
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
