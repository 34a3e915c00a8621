// Credit headers. The spec does not name them; the sandbox sends X-Credits-Charged and
// X-Credits-Remaining (docs/contract.md), and a real service may spell them otherwise, so any
// header that mentions credits and says which of the two it is counts as well.
import type { Credits } from '../types.js';

const CHARGED_WORDS = /charged|used|cost/;
const REMAINING_WORDS = /remaining|balance|left/;

const PLAIN_COUNT = /^\d{1,15}$/;

function parseCount(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  if (PLAIN_COUNT.test(text)) return Number(text);
  const trimmed = text.trim();
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(trimmed)) return undefined;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * Credits from response headers (names in any case). The exact X-Credits-* names win over
 * headers recognised by pattern; a header whose value is not a number is ignored.
 */
export function readCredits(headers: Record<string, string | string[] | undefined>): Credits {
  // The sandbox's names, already lower-case as the client passes them: no scan of every header
  // (a batch reads these once per row).
  const charged = parseCount(headers['x-credits-charged']);
  const remaining = parseCount(headers['x-credits-remaining']);
  if (charged !== undefined && remaining !== undefined) return { charged, remaining };
  return scanCredits(headers);
}

/** readCredits by looking at every header: what the shortcut above must always agree with. */
export function scanCredits(headers: Record<string, string | string[] | undefined>): Credits {
  const credits: Credits = {};
  let patternCharged: number | undefined;
  let patternRemaining: number | undefined;
  for (const [rawName, value] of Object.entries(headers)) {
    const name = rawName.toLowerCase();
    if (name === 'x-credits-charged') {
      const n = parseCount(value);
      if (n !== undefined) credits.charged = n;
      continue;
    }
    if (name === 'x-credits-remaining') {
      const n = parseCount(value);
      if (n !== undefined) credits.remaining = n;
      continue;
    }
    if (!name.includes('credit')) continue;
    const n = parseCount(value);
    if (n === undefined) continue;
    // "x-credit-balance-used" is ambiguous; charged words are checked first, matching how a
    // header named after what was spent usually reads.
    if (CHARGED_WORDS.test(name)) patternCharged ??= n;
    else if (REMAINING_WORDS.test(name)) patternRemaining ??= n;
  }
  if (credits.charged === undefined && patternCharged !== undefined) credits.charged = patternCharged;
  if (credits.remaining === undefined && patternRemaining !== undefined) credits.remaining = patternRemaining;
  return credits;
}
