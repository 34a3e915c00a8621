// The adapters of the public catalogs (products, fields, errors): they read a catalog by what its
// members mean, not by one layout. The spec leaves the layouts "not shown"; docs/contract.md
// records the sandbox's and the other shapes accepted here ("Catalog shapes the client reads").
//
// Where the catalog does not say something (is this field a filter? a facet? where can it be
// requested? is this product a default?), the adapted entry says `undefined`, never a guessed
// `false`: a local check refuses only what the catalog clearly refuses, and leaves the rest to the
// service (src/api/filters.ts). Members are looked up with Object.hasOwn, never through the
// prototype: a catalog entry named `constructor` is a name like any other.
import type { ErrorCatalogEntry } from '../error-catalog.js';
import { Problem } from '../problem.js';
import type { ErrorsCatalog, FieldEntry, FieldFilter, Product } from './types.js';

type Json = Record<string, unknown>;
type CatalogName = 'products' | 'fields' | 'errors';

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The first of `keys` that `object` has as its own member (value may be null). */
export function member(object: Json, keys: readonly string[]): unknown {
  for (const key of keys) if (Object.hasOwn(object, key) && object[key] !== undefined) return object[key];
  return undefined;
}

const str = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);
const num = (value: unknown, fallback = 0): number => {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : fallback;
};

/** true/false from a boolean or its usual spellings; undefined when the value says neither. */
function flag(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === null) return false;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') {
    if (/^(true|yes|y|1)$/i.test(value.trim())) return true;
    if (/^(false|no|n|0|)$/i.test(value.trim())) return false;
  }
  return undefined;
}

/** The name of an entry given as a string, or as an object with a name or id. */
function nameOf(value: unknown, keys: readonly string[] = ['name', 'id', 'key', 'value']): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return isObject(value) ? str(member(value, keys)) : '';
}

/** An array of names (entries that are objects give their name or id), or a comma-separated string. */
const names = (value: unknown): string[] => {
  if (typeof value === 'string')
    return value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (!Array.isArray(value)) return [];
  return value.map((item) => nameOf(item)).filter((s) => s !== '');
};

/** A list of names, or the names set to true in an object of booleans ({ search: true }). */
function nameList(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (isObject(value))
    return Object.entries(value)
      .filter(([, allowed]) => flag(allowed) === true || isObject(allowed))
      .map(([name]) => name);
  return names(value);
}

/** Members that wrap the real body: `{ "data": ... }` and the like. */
const WRAPPERS = ['data', 'result', 'response', 'catalog'];

/**
 * The entries of a catalog: under the expected member, as a bare array, as an object keyed by
 * the entries' names (each then gets `keyName` from its key unless it has one), inside a wrapper
 * (`data`, `result`), or as the first member holding an array of objects (a renamed envelope).
 */
export function findEntries(body: unknown, member: string, keyName = 'name'): Json[] | undefined {
  const keyed = (object: Json): Json[] | undefined => {
    const values = Object.entries(object);
    if (values.length === 0 || !values.every(([, v]) => isObject(v))) return undefined;
    return values.map(([key, v]) => ({ [keyName]: key, ...(v as Json) }));
  };
  const search = (value: unknown, depth: number): Json[] | undefined => {
    if (Array.isArray(value)) return value.filter(isObject);
    if (!isObject(value)) return undefined;
    if (Object.hasOwn(value, member)) {
      const list = value[member];
      if (Array.isArray(list)) return list.filter(isObject);
      if (isObject(list)) return keyed(list) ?? (depth < 2 ? search(list, depth + 1) : undefined);
    }
    for (const wrapper of WRAPPERS) {
      if (depth < 2 && Object.hasOwn(value, wrapper)) {
        const found = search(value[wrapper], depth + 1);
        if (found) return found;
      }
    }
    const list = Object.values(value).find((v) => Array.isArray(v) && v.some(isObject));
    return Array.isArray(list) ? list.filter(isObject) : undefined;
  };
  return search(body, 0);
}

function unexpected(name: CatalogName): Problem {
  return new Problem({
    code: 'unexpected_response',
    title: 'Unexpected response',
    detail: `GET /api/${name} did not return a ${name} catalog`,
    source: 'client',
  });
}

const PRODUCT_ID = ['id', 'product_id', 'key', 'slug', 'name'];
const PRODUCT_PRICE = ['credit_units', 'credits', 'cost', 'price', 'unit_cost', 'credit_cost'];
export const PRODUCT_DEFAULT = [
  'default',
  'is_default',
  'selected_by_default',
  'default_selected',
  'included_by_default',
];
const PRODUCT_ADD_ON = ['add_on', 'addon', 'is_add_on', 'is_addon'];

/** A price given as a number, or nested ({ "price": { "credits": 1 } }). */
function priceOf(value: unknown): number {
  if (isObject(value)) return num(member(value, [...PRODUCT_PRICE, 'units', 'amount', 'value']), 0);
  return num(value);
}

/**
 * The object that holds a catalog's entries under `member`, through the wrappers findEntries
 * accepts: where members about the whole catalog sit (`facets`, `filters`, `default_products`).
 */
export function envelopeOf(body: unknown, member: string): Json {
  let value: unknown = body;
  for (let depth = 0; depth < 3 && isObject(value); depth++) {
    if (Object.hasOwn(value, member)) return value;
    const wrapper = WRAPPERS.find((w) => isObject((value as Json)[w]));
    if (!wrapper) return value;
    const inner = (value as Json)[wrapper] as Json;
    // Members beside the wrapper count too ({ "data": {...}, "facets": [...] }).
    value = { ...value, ...inner, [wrapper]: undefined };
  }
  return isObject(value) ? value : {};
}

/** The products a catalog names once as its default selection, when it does so. */
export const CATALOG_DEFAULTS = ['default_products', 'defaults', 'default_selection', 'default_product_ids'];

export function adaptProducts(body: unknown): Product[] {
  const entries = findEntries(body, 'products', 'id');
  if (!entries) throw unexpected('products');
  const listed = member(envelopeOf(body, 'products'), CATALOG_DEFAULTS);
  const catalogDefaults = listed === undefined ? undefined : names(listed);
  return entries
    .map((p) => {
      const product: Product = {
        ...p,
        id: str(member(p, PRODUCT_ID)),
        description: str(member(p, ['description', 'summary', 'title'])),
        fields: names(member(p, ['fields', 'field_names'])),
        bundles: names(member(p, ['bundles', 'plans'])),
        credit_units: priceOf(member(p, PRODUCT_PRICE)),
      };
      // Said only when the catalog says it: no product is a default (or not) by guess.
      const isDefault =
        flag(member(p, PRODUCT_DEFAULT)) ??
        (catalogDefaults ? catalogDefaults.includes(product.id) : undefined);
      const addOn = flag(member(p, PRODUCT_ADD_ON));
      if (isDefault === undefined) delete product.default;
      else product.default = isDefault;
      if (addOn === undefined) delete product.add_on;
      else product.add_on = addOn;
      return product;
    })
    .filter((p) => p.id !== '');
}

const FIELD_NAME = ['name', 'field', 'id', 'key', 'field_name'];
export const FILTER = ['filter', 'filterable', 'is_filter', 'is_filterable', 'search_filter', 'can_filter'];
const FILTER_NAME = ['name', 'param', 'parameter', 'key', 'id', 'filter_name'];
const FILTER_VALUES = ['values', 'allowed_values', 'enum', 'options', 'choices', 'filter_values'];
const VALUE_SOURCE = ['value_source', 'values_source', 'source', 'kind', 'match'];
/** Facets listed once for the whole catalog. */
export const FACET_LISTS = ['facets', 'breakdown_fields', 'breakdowns'];
export const FACET = [
  'facet',
  'breakdown',
  'facetable',
  'is_facet',
  'breakdown_facet',
  'is_breakdown',
  'groupable',
];
const CAPABILITIES = ['capabilities', 'available_in', 'availability', 'endpoints', 'usable_in', 'contexts'];

/** The values of an enum filter: strings, numbers, or objects with a value or name. */
function valueList(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((v) => nameOf(v, ['value', 'name', 'id', 'key'])).filter((v) => v !== '');
}

function valueSource(raw: string, values: string[] | undefined): string {
  if (/enum|list|exact|fixed|closed|catalog/i.test(raw)) return 'enum';
  if (/free|text|any|open|string/i.test(raw)) return 'free';
  if (raw !== '') return raw;
  return values ? 'enum' : 'free';
}

/**
 * The filter of a field entry: an object (`{ name, value_source, values }`, the sandbox's), a
 * filter name as a string, `true`, or a flag under another name (`filterable`), with its values
 * nested or beside it. null when the catalog says the field cannot filter (null, false); undefined
 * when it does not say.
 */
function filterOf(field: Json, fieldName: string): FieldFilter | null | undefined {
  const raw = member(field, FILTER);
  let nested: Json = {};
  let name: string;
  if (raw === undefined) {
    name = str(member(field, ['filter_name', 'filter_param']));
    if (name === '') return undefined;
  } else if (isObject(raw)) {
    if (flag(member(raw, ['enabled', 'allowed'])) === false) return null;
    nested = raw;
    name = str(member(raw, FILTER_NAME), str(member(field, ['filter_name']), fieldName));
  } else if (typeof raw === 'string' && flag(raw) === undefined) {
    name = raw;
  } else {
    const said = flag(raw);
    if (said === undefined) return undefined;
    if (!said) return null;
    name = str(member(field, ['filter_name', 'filter_param']), fieldName);
  }
  const values = valueList(member(nested, FILTER_VALUES) ?? member(field, FILTER_VALUES));
  const source = str(member(nested, VALUE_SOURCE) ?? member(field, ['value_source', 'values_source']));
  return {
    ...nested,
    name,
    value_source: valueSource(source, values),
    ...(values ? { values } : {}),
  };
}

/** A facet flag under any of its names: a boolean, its spelling, or an object (a facet's settings). */
function facetOf(field: Json): boolean | undefined {
  const raw = member(field, FACET);
  if (isObject(raw)) return flag(member(raw, ['enabled', 'allowed'])) ?? true;
  return flag(raw);
}

/** The product of a field: a name, an object with an id, or the billing's product. */
function productOf(field: Json, billing: Json): string {
  const raw = member(field, ['product', 'product_id']);
  return nameOf(raw, ['id', 'product_id', 'name']) || str(billing.product);
}

/**
 * Filters listed once for the whole catalog (`{ "fields": [...], "filters": [...] }`): each an
 * object naming its field (`field`, else its own name), or an object keyed by field name. Returned
 * as a map from field name to a field-like entry whose filter filterOf reads; a field the list
 * leaves out cannot filter (the catalog lists the ones that can).
 */
export function catalogFilters(envelope: Json): Map<string, Json> | undefined {
  const raw = member(envelope, ['filters', 'search_filters', 'filter_catalog']);
  if (raw === undefined) return undefined;
  const entries: Json[] = Array.isArray(raw)
    ? raw.filter(isObject)
    : isObject(raw)
      ? Object.entries(raw).map(([key, value]) =>
          isObject(value) ? { field: key, name: key, ...value } : {},
        )
      : [];
  const byField = new Map<string, Json>();
  for (const entry of entries) {
    const field = str(member(entry, ['field', 'field_name']), str(member(entry, FILTER_NAME)));
    if (field !== '') byField.set(field, { filter: entry });
  }
  return byField;
}

export function adaptFields(body: unknown): FieldEntry[] {
  const entries = findEntries(body, 'fields');
  if (!entries) throw unexpected('fields');
  // Facets and filters may also be listed once for the whole catalog:
  // { "fields": [...], "facets": [...], "filters": [...] }.
  const envelope = envelopeOf(body, 'fields');
  const listedFacets = nameList(member(envelope, FACET_LISTS));
  const listedFilters = catalogFilters(envelope);
  return entries
    .map((f) => {
      const name = str(member(f, FIELD_NAME));
      const billing = isObject(f.billing) ? f.billing : {};
      const product = productOf(f, billing);
      const facet = facetOf(f) ?? (listedFacets ? listedFacets.includes(name) : undefined);
      const ownFilter = filterOf(f, name);
      const listedFilter = listedFilters?.get(name);
      const filter =
        ownFilter !== undefined || !listedFilters
          ? ownFilter
          : listedFilter
            ? filterOf(listedFilter, name)
            : null;
      const capabilities = nameList(member(f, CAPABILITIES));
      return {
        ...f,
        name,
        product,
        type: str(f.type, 'string'),
        description: str(f.description),
        filter,
        facet,
        billing: {
          ...billing,
          product: str(billing.product, product),
          credit_units: num(billing.credit_units ?? member(f, ['credit_units', 'credits', 'cost'])),
          ...(typeof billing.charged === 'string' ? { charged: billing.charged } : {}),
        },
        capabilities,
        plans: nameList(f.plans) ?? [],
      };
    })
    .filter((f) => f.name !== '');
}

export function adaptErrors(body: unknown): ErrorsCatalog {
  const entries = findEntries(body, 'errors', 'code');
  if (!entries) throw unexpected('errors');
  const envelope = isObject(body) ? body : {};
  const errors: ErrorCatalogEntry[] = entries
    .map((e) => ({
      ...e,
      code: str(e.code),
      http_status: num(e.http_status ?? e.status),
      title: str(e.title, str(e.code)),
      detail: str(e.detail),
      retryable: flag(e.retryable) ?? false,
      charged: flag(e.charged) ?? false,
    }))
    .filter((e) => e.code !== '');
  return {
    ...envelope,
    contract_version: str(envelope.contract_version),
    content_type: str(envelope.content_type, 'application/problem+json'),
    errors,
  };
}
