// The catalogs as the client shows them: under the names and in the order of docs/contract.md,
// whatever the service's layout (`products`, `fields` and the MCP tools print these), and what
// `doctor` says it recognised of a catalog's layout.
import {
  adaptFields,
  adaptProducts,
  CATALOG_DEFAULTS,
  catalogFilters,
  envelopeOf,
  FACET,
  FACET_LISTS,
  FILTER,
  findEntries,
  member,
  PRODUCT_DEFAULT,
} from './catalog-adapters.js';
import type { FieldEntry, Product } from './types.js';

type Json = Record<string, unknown>;

/**
 * A product as `products -o json` prints it: the members the client reads, under the contract's
 * names and in its order, whatever the catalog's layout (the raw catalog: `api GET /api/products`).
 */
export function productDocument(p: Product): Json {
  return {
    id: p.id,
    description: p.description,
    fields: p.fields,
    bundles: p.bundles,
    credit_units: p.credit_units,
    ...(p.default === undefined ? {} : { default: p.default }),
    ...(p.add_on === undefined ? {} : { add_on: p.add_on }),
  };
}

/** A field as `fields -o json` prints it, like productDocument. */
export function fieldDocument(f: FieldEntry): Json {
  const filter = f.filter
    ? {
        name: f.filter.name,
        value_source: f.filter.value_source,
        ...(f.filter.values ? { values: f.filter.values } : {}),
      }
    : f.filter;
  const billing = f.billing as Json;
  return {
    name: f.name,
    product: f.product,
    type: f.type,
    description: f.description,
    ...(filter === undefined ? {} : { filter }),
    ...(f.facet === undefined ? {} : { facet: f.facet }),
    billing: {
      product: billing.product,
      credit_units: billing.credit_units,
      ...(typeof billing.charged === 'string' ? { charged: billing.charged } : {}),
    },
    ...(f.capabilities === undefined ? {} : { capabilities: f.capabilities }),
    plans: f.plans,
  };
}

/** Where a catalog says something: in each entry, once for the whole catalog, or nowhere. */
export type SaidWhere = 'per entry' | 'catalog' | 'not said';

/** What `doctor` shows of a products catalog: how many, and where the default selection is said. */
export function describeProducts(body: unknown): {
  count: number;
  defaults: SaidWhere;
  defaultIds: string[];
} {
  const products = adaptProducts(body);
  const entries = findEntries(body, 'products', 'id') ?? [];
  const perEntry = entries.some((p) => member(p, PRODUCT_DEFAULT) !== undefined);
  const atCatalog = member(envelopeOf(body, 'products'), CATALOG_DEFAULTS) !== undefined;
  return {
    count: products.length,
    defaults: perEntry ? 'per entry' : atCatalog ? 'catalog' : 'not said',
    defaultIds: products.filter((p) => p.default === true).map((p) => p.id),
  };
}

/** What `doctor` shows of a fields catalog: filters and facets, and where each is said. */
export function describeFields(body: unknown): {
  count: number;
  filters: SaidWhere;
  filterCount: number;
  facets: SaidWhere;
  facetCount: number;
} {
  const fields = adaptFields(body);
  const entries = findEntries(body, 'fields') ?? [];
  const envelope = envelopeOf(body, 'fields');
  const where = (perEntry: boolean, atCatalog: boolean): SaidWhere =>
    perEntry ? 'per entry' : atCatalog ? 'catalog' : 'not said';
  return {
    count: fields.length,
    filters: where(
      entries.some((f) => member(f, FILTER) !== undefined),
      catalogFilters(envelope) !== undefined,
    ),
    filterCount: fields.filter((f) => f.filter).length,
    facets: where(
      entries.some((f) => member(f, FACET) !== undefined),
      member(envelope, FACET_LISTS) !== undefined,
    ),
    facetCount: fields.filter((f) => f.facet === true).length,
  };
}

/** The fields the catalog types as whole numbers (`integer`): their values sent as text are read as numbers. */
export function integerFields(fields: readonly FieldEntry[]): ReadonlySet<string> {
  return new Set(fields.filter((f) => /^(integer|int|long|number)$/i.test(f.type)).map((f) => f.name));
}
