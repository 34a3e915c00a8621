// Rates as the user and the account give them: --rate's text, and the default pace for an
// account's reported limit (docs/batch.md, "Pacing").

/** The highest rate paced: one-millisecond timers cannot space requests more finely. */
export const MAX_RATE = 1000;

/** The share of an account's reported limit a batch paces at by default (see docs/batch.md). */
export const ACCOUNT_LIMIT_SHARE = 0.9;

/**
 * A rate given on the command line: a number of requests per second up to MAX_RATE, decimals
 * allowed (0.5: one request every 2 s), or 0 for no pacing. Undefined when it is not one.
 */
export function parseRate(raw: string): number | undefined {
  const text = raw.trim();
  if (!/^(\d+\.?\d*|\.\d+)$/.test(text)) return undefined;
  const value = Number(text);
  return value <= MAX_RATE ? value : undefined;
}

/** The default pace for an account's `rate_limit_per_second`: undefined when it reports none. */
export function paceForLimit(limit: unknown): number | undefined {
  const value = typeof limit === 'string' && limit.trim() !== '' ? Number(limit) : limit;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return undefined;
  // Rounded to a thousandth: 13 * 0.9 is 11.700000000000001 in floating point.
  const pace = Math.round(value * ACCOUNT_LIMIT_SHARE * 1000) / 1000;
  // Beyond what the pacer can space exactly, the scheduler's reaction to a 429 is left to act.
  return pace <= MAX_RATE ? pace : undefined;
}

/** A usable rate: a finite number above 0; else undefined (no pacing). */
export function positiveRate(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}
