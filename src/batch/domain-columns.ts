// Kept apart from input.ts so that a reader needing only the names (exclusions' fast path) does
// not load csv-parse with it.

/** Header names taken as the domain column, in order of preference (case-insensitive). */
export const DOMAIN_COLUMN_NAMES = ['domain', 'website', 'url', 'company_domain', 'homepage'] as const;
