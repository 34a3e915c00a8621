// What a search, a breakdown or a lookalike may cost. The spec publishes no price for them and
// takes no max_credits for them: the worst case held is the largest charge seen for that endpoint
// and size (the page's limit, the breakdown's bucket count, the lookalike's k), kept across runs
// beside the catalogs of the base URL, and the contract's 1 credit before any answer has said.
// The first call of a size is the one exposure: it may cost more than is held (README, "Credits").
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { catalogCacheDir } from '../api/catalogs.js';
import { tempSuffix } from '../fs-names.js';
import type { Context } from '../types.js';

/**
 * What a search, a breakdown or a lookalike is held at before any answer has said: the contract's
 * price of one that returns something (docs/contract.md).
 */
export const REQUEST_PRICE_ESTIMATE = 1;

export type PricedEndpoint = 'search' | 'breakdown' | 'lookalike';

/** Where the prices seen for this base URL are kept; undefined when nothing is kept (the in-process sandbox). */
function pricesFile(ctx: Context): string | undefined {
  // A context without settings (a test's own) keeps nothing.
  const base = ctx.config?.baseUrl;
  if (!base || base.source === 'sandbox') return undefined;
  return join(catalogCacheDir(ctx.config.cacheDir, base.value), 'prices.json');
}

function keyOf(endpoint: PricedEndpoint, size: number | undefined): string {
  return `${endpoint}:${size ?? 'default'}`;
}

function readPrices(file: string | undefined): Record<string, number> {
  if (!file) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, number>)
      : {};
  } catch {
    return {};
  }
}

/** The worst case of one request of `endpoint` at `size`: the largest charge seen, at least the estimate. */
export function learntPrice(ctx: Context, endpoint: PricedEndpoint, size: number | undefined): number {
  const seen = readPrices(pricesFile(ctx))[keyOf(endpoint, size)];
  return typeof seen === 'number' && Number.isSafeInteger(seen) && seen > REQUEST_PRICE_ESTIMATE
    ? seen
    : REQUEST_PRICE_ESTIMATE;
}

/** Keeps `charged` as the price of `endpoint` at `size` when it is the largest seen. */
export function notePrice(
  ctx: Context,
  endpoint: PricedEndpoint,
  size: number | undefined,
  charged: number,
): void {
  const file = pricesFile(ctx);
  if (!file || !Number.isSafeInteger(charged) || charged <= REQUEST_PRICE_ESTIMATE) return;
  const prices = readPrices(file);
  const key = keyOf(endpoint, size);
  if ((prices[key] ?? 0) >= charged) return;
  try {
    const dir = join(file, '..');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = join(dir, `.prices.${tempSuffix()}.tmp`);
    writeFileSync(temp, JSON.stringify({ ...prices, [key]: charged }), { mode: 0o600 });
    renameSync(temp, file);
  } catch {
    // A read-only or full disk: the next run holds less than it could, as before any answer.
  }
}
