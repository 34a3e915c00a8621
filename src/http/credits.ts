// Credit headers. The spec does not name them; the sandbox sends X-Credits-Charged and
// X-Credits-Remaining (docs/contract.md), and a real service may spell them otherwise, so any
// header that mentions credits and says which of the two it is counts as well.
import type { Credits } from '../types.js';

const CHARGED_WORDS = /charged|used|cost/;
const REMAINING_WORDS = /remaining|balance|left/;

function parseCount(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
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
  const credits: Credits = {};
  let patternCharged: number | undefined;
  let patternRemaining: number | undefined;
  for (const [rawName, value] of Object.entries(headers)) {
    const name = rawName.toLowerCase();
    if (!name.includes('credit')) continue;
    const n = parseCount(value);
    if (n === undefined) continue;
    if (name === 'x-credits-charged') credits.charged = n;
    else if (name === 'x-credits-remaining') credits.remaining = n;
    // "x-credit-balance-used" is ambiguous; charged words are checked first, matching how a
    // header named after what was spent usually reads.
    else if (CHARGED_WORDS.test(name)) patternCharged ??= n;
    else if (REMAINING_WORDS.test(name)) patternRemaining ??= n;
  }
  if (credits.charged === undefined && patternCharged !== undefined) credits.charged = patternCharged;
  if (credits.remaining === undefined && patternRemaining !== undefined) credits.remaining = patternRemaining;
  return credits;
}
