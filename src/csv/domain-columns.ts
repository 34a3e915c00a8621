// How a first line is read: a header (and which of its columns holds the domains) or the first
// entry of a plain list, and when a one-column title deserves a note. The reader (input.ts) decides
// with these rules; a batch (run.ts) and an exclusion list (exclusions.ts) word the note with them.
import { normaliseDomain } from '../domain.js';

/** Header names taken as the domain column, in order of preference (case-insensitive). */
export const DOMAIN_COLUMN_NAMES = ['domain', 'website', 'url', 'company_domain', 'homepage'] as const;

/** The domain column of a header: the first of the names above, else the only column; -1 if neither. */
export function domainColumnOf(header: readonly string[]): number {
  for (const name of DOMAIN_COLUMN_NAMES) {
    const index = header.findIndex((cell) => cell.trim().toLowerCase() === name);
    if (index !== -1) return index;
  }
  return header.length === 1 ? 0 : -1;
}

/** A first line of one field that reads as a domain or URL starts a plain list, not a header. */
export function readsAsListEntry(value: string): boolean {
  return normaliseDomain(value).ok || /[./@]/.test(value.trim());
}

/** Words that make a first line a title even when it is not one of the names above. */
const TITLE_WORDS = /domain|website|url|homepage|site|web/i;

/**
 * The first line of a one-column input, when it was read as the column's title although nothing
 * says it is one (not a known column name, no word like "website", no --column): it may be a
 * mistyped domain (`acme`), which is then never looked up. The caller prints a note; undefined
 * when there is nothing to say.
 */
export function doubtfulTitle(header: readonly string[] | null, column?: string): string | undefined {
  if (header?.length !== 1 || column !== undefined) return undefined;
  const title = header[0].trim();
  return TITLE_WORDS.test(title) ? undefined : title;
}
