// The public catalogs (products, fields, errors): fetched without the key, read through tolerant
// adapters (catalog-adapters.ts), and cached on disk.
//
// Cache: one JSON file per catalog in <cacheDir>/catalogs/<hash of base URL>/, holding the raw
// response and when it was fetched. Entries live 10 minutes: long enough that a script calling
// `search` in a loop does not fetch the fields catalog every time, short enough that a changed
// catalog is picked up within minutes. `catalog_refresh_in_progress` drops the cache at once.
// A cache that cannot be read or written is ignored: no command fails because of its cache.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shortHash, tempSuffix } from '../fs-names.js';
import { checkContractVersion } from '../http/contract.js';
import type { Context, RequestOptions } from '../types.js';
import { adaptErrors, adaptFields, adaptProducts } from './catalog-adapters.js';
import type { ErrorsCatalog, FieldEntry, Product } from './types.js';

export { adaptErrors, adaptFields, adaptProducts, findEntries } from './catalog-adapters.js';

export const CATALOG_TTL_MS = 10 * 60 * 1000;

type CatalogName = 'products' | 'fields' | 'errors';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where the catalogs of a base URL are cached (completion reads them there too). */
export function catalogCacheDir(cacheDir: string, baseUrl: string): string {
  return join(cacheDir, 'catalogs', shortHash(baseUrl));
}

/** The cache directory of this base URL, or undefined when nothing should be cached. */
function cacheDirOf(ctx: Context): string | undefined {
  const base = ctx.config.baseUrl;
  // An in-process sandbox lives on a new port each run: caching it would only leave litter.
  if (!base || base.source === 'sandbox') return undefined;
  return catalogCacheDir(ctx.config.cacheDir, base.value);
}

// The cache is read and written with synchronous calls: a few KB on a local disk take
// microseconds, where each asynchronous call costs a round trip through libuv's thread pool and
// an event-loop turn, on the start-up path of every catalog command.
function readCache(dir: string, name: CatalogName, now: number): unknown {
  try {
    const entry: unknown = JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8'));
    if (!isObject(entry) || typeof entry.fetched_at !== 'number') return undefined;
    const age = now - entry.fetched_at;
    return age >= 0 && age < CATALOG_TTL_MS ? entry.body : undefined;
  } catch {
    return undefined;
  }
}

function writeCache(dir: string, name: CatalogName, baseUrl: string, body: unknown, now: number): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = join(dir, `.${name}.${tempSuffix()}.tmp`);
    writeFileSync(temp, JSON.stringify({ fetched_at: now, base_url: baseUrl, body }), {
      mode: 0o600,
    });
    renameSync(temp, join(dir, `${name}.json`));
  } catch {
    // A read-only or full disk only costs a refetch next time.
  }
}

/** Drops the cached catalogs of the current base URL. */
export async function refreshCatalogs(ctx: Context): Promise<void> {
  const dir = cacheDirOf(ctx);
  if (dir) {
    const { rm } = await import('node:fs/promises');
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * An onRetry hook for any request: when the service says its catalog is changing, cached
 * catalogs are dropped before the retry so the next lookup sees the new one.
 */
export function catalogRetryHook(ctx: Context): NonNullable<RequestOptions['onRetry']> {
  return async (problem) => {
    if (problem.code === 'catalog_refresh_in_progress') await refreshCatalogs(ctx);
  };
}

async function loadCatalog<T>(ctx: Context, name: CatalogName, adapt: (body: unknown) => T): Promise<T> {
  const dir = cacheDirOf(ctx);
  if (dir) {
    const cached = readCache(dir, name, ctx.now());
    if (cached !== undefined) {
      try {
        return adapt(cached);
      } catch {
        // A cache written by another version of the CLI: fetch afresh.
      }
    }
  }
  const response = await ctx.client.request<unknown>({
    method: 'GET',
    path: `/api/${name}`,
    auth: false,
    onRetry: catalogRetryHook(ctx),
  });
  const value = adapt(response.data);
  if (dir && ctx.config.baseUrl) writeCache(dir, name, ctx.config.baseUrl.value, response.data, ctx.now());
  return value;
}

export function loadProducts(ctx: Context): Promise<Product[]> {
  return loadCatalog(ctx, 'products', adaptProducts);
}

export function loadFields(ctx: Context): Promise<FieldEntry[]> {
  return loadCatalog(ctx, 'fields', adaptFields);
}

export async function loadErrors(ctx: Context): Promise<ErrorsCatalog> {
  const catalog = await loadCatalog(ctx, 'errors', adaptErrors);
  if (catalog.contract_version) checkContractVersion(ctx.io, catalog.contract_version);
  return catalog;
}
