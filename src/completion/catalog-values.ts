// Product ids, facet and field names for completion, read from the catalogs that other commands
// cached on disk (src/api/catalogs.ts). Completion never calls the network: a shell start-up must
// not wait on, or pay for, a service. Stale entries are fine here; a missing cache falls back to
// the sandbox's documented ids (docs/contract.md), and the script says which one it used.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { adaptFields, adaptProducts, catalogCacheDir } from '../api/catalogs.js';

export interface CatalogValues {
  products: string[];
  facets: string[];
  /** Every field name (only from a cache: there is no useful default). */
  fields: string[];
  /**
   * What `--filter` takes: `name=` for every field that filters, and `name=value` for each value
   * of an enumerated one (country=US), so completion offers the catalog's names and values.
   */
  filters: string[];
  /** Where the values came from, said in a comment of the generated script. */
  source: string;
}

export const DEFAULT_PRODUCTS = ['profile', 'tech', 'leads'];
export const DEFAULT_FACETS = ['country', 'site_category', 'primary_platform', 'employee_range'];

/** `name=` and `name=value` words of the filterable fields of a fields catalog. */
export function filterWords(
  entries: ReadonlyArray<{ filter?: { name: string; values?: readonly string[] } | null }>,
): string[] {
  const out: string[] = [];
  for (const entry of entries) {
    if (!entry.filter) continue;
    out.push(`${entry.filter.name}=`);
    for (const value of entry.filter.values ?? []) out.push(`${entry.filter.name}=${value}`);
  }
  return out;
}

async function readBody(dir: string, name: 'products' | 'fields'): Promise<unknown> {
  try {
    const entry = JSON.parse(await readFile(join(dir, `${name}.json`), 'utf8')) as { body?: unknown };
    return entry?.body;
  } catch {
    return undefined;
  }
}

/** The cache of the configured base URL, else the most recently written one. */
async function candidateDirs(cacheDir: string, baseUrl: string | undefined): Promise<string[]> {
  const dirs: string[] = [];
  if (baseUrl) dirs.push(catalogCacheDir(cacheDir, baseUrl));
  try {
    const root = join(cacheDir, 'catalogs');
    const entries = await readdir(root);
    const dated = await Promise.all(
      entries.map(async (name) => {
        const dir = join(root, name);
        const info = await stat(dir).catch(() => undefined);
        return { dir, time: info?.isDirectory() ? info.mtimeMs : -1 };
      }),
    );
    dated
      .filter((d) => d.time >= 0)
      .sort((a, b) => b.time - a.time)
      .forEach((d) => {
        if (!dirs.includes(d.dir)) dirs.push(d.dir);
      });
  } catch {
    // no cache at all
  }
  return dirs;
}

export async function readCatalogValues(
  cacheDir: string,
  baseUrl: string | undefined,
): Promise<CatalogValues> {
  for (const dir of await candidateDirs(cacheDir, baseUrl)) {
    let products: string[] = [];
    let facets: string[] = [];
    let fields: string[] = [];
    let filters: string[] = [];
    try {
      const productsBody = await readBody(dir, 'products');
      if (productsBody !== undefined) products = adaptProducts(productsBody).map((p) => p.id);
    } catch {
      // a cache from another version: ignore
    }
    try {
      const fieldsBody = await readBody(dir, 'fields');
      if (fieldsBody !== undefined) {
        const entries = adaptFields(fieldsBody);
        facets = entries.filter((f) => f.facet).map((f) => f.name);
        fields = entries.map((f) => f.name);
        filters = filterWords(entries);
      }
    } catch {
      // as above
    }
    if (products.length > 0 || fields.length > 0) {
      return {
        products: products.length > 0 ? products : DEFAULT_PRODUCTS,
        facets: facets.length > 0 ? facets : DEFAULT_FACETS,
        fields,
        filters: filters.length > 0 ? filters : DEFAULT_FACETS.map((f) => `${f}=`),
        source: `the cached catalogs in ${dir}${products.length && fields.length ? '' : ' (partly defaults)'}`,
      };
    }
  }
  return {
    products: DEFAULT_PRODUCTS,
    facets: DEFAULT_FACETS,
    fields: [],
    filters: DEFAULT_FACETS.map((f) => `${f}=`),
    source:
      'defaults: the sandbox ids of docs/contract.md (no cached catalog found; run `company-data products` and `company-data fields` once, then regenerate)',
  };
}
