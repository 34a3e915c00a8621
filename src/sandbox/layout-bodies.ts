// The bodies of the sandbox's layouts other than `flat` (src/sandbox/layouts.ts): each function
// takes the engine's flat answer and writes it the way that layout does. docs/contract.md,
// "Sandbox layouts", shows every shape.

import { FIELDS } from './catalogs.js';
import type { Layout } from './layouts.js';
import type { RouteName } from './routes.js';

type Json = Record<string, unknown>;

/** The product each field belongs to (the catalog's). */
const PRODUCT_OF = new Map(FIELDS.map((f) => [f.name, f.product]));
/** The fields the catalog types as integers. */
const INTEGERS = new Set(FIELDS.filter((f) => f.type === 'integer').map((f) => f.name));

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A figure as text, as some services send every number. */
const text = (value: unknown): unknown => (typeof value === 'number' ? String(value) : value);

/** The credits member of `enveloped` (as flat) or the usage member of `metered`. */
function creditsMember(layout: Layout, json: Json, charged: number, balance: number): Json {
  if (layout.name === 'metered') return { usage: { cost: charged, balance } };
  if (layout.name === 'grouped') return {};
  return isObject(json.credits) ? { credits: { ...json.credits, charged } } : {};
}

export function reshape(
  layout: Layout,
  route: RouteName,
  json: Json,
  charged: number,
  balance: number,
): unknown {
  const credits = creditsMember(layout, json, charged, balance);
  switch (route) {
    case 'domains':
      return { ...domainBody(layout, json), ...credits };
    case 'search':
      return isObject(json.breakdown)
        ? { ...breakdownBody(layout, json.breakdown), ...credits }
        : { ...searchBody(layout, json), ...credits };
    case 'lookalike':
      return { ...lookalikeBody(layout, json), ...credits };
    case 'me':
      return meBody(layout, json);
    case 'products':
      return productsBody(layout, json);
    case 'fields':
      return fieldsBody(layout, json);
    default:
      // The error catalog's layout is fixed by the spec.
      return json;
  }
}

/** Fields grouped under their products, in the order the fields come. */
function byProduct(fields: Json): Record<string, Json> {
  const groups: Record<string, Json> = {};
  for (const [field, value] of Object.entries(fields)) {
    const product = PRODUCT_OF.get(field) ?? 'other';
    groups[product] ??= {};
    groups[product][field] = value;
  }
  return groups;
}

/** Fields of the record: the flat answer without its members about the lookup. */
function recordOf(json: Json): Json {
  const { found: _found, domain: _domain, code: _code, credits: _credits, ...record } = json;
  return record;
}

function domainBody(layout: Layout, json: Json): Json {
  const head: Json = { found: json.found, domain: json.domain };
  if (json.found !== true) return { ...head, ...(json.code === undefined ? {} : { code: json.code }) };
  const record = recordOf(json);
  // { found, domain, profile: {...}, tech: {...} }: each field under its product, whole numbers
  // as text ("founded_year": "2009").
  if (layout.name === 'grouped') {
    for (const field of INTEGERS)
      if (typeof record[field] === 'number') record[field] = String(record[field]);
    return { ...head, ...byProduct(record) };
  }
  // enveloped and metered: the record under `data`, its domain with it.
  return { found: true, data: { domain: json.domain, ...record } };
}

function searchBody(layout: Layout, json: Json): Json {
  const rows = Array.isArray(json.rows) ? json.rows : [];
  const total = typeof json.total === 'number' ? json.total : rows.length;
  const pageSize = Math.min(Number(json.limit ?? rows.length), layout.pageCap ?? Number.POSITIVE_INFINITY);
  const more = total > rows.length;
  if (layout.name === 'grouped') {
    // Rows under `hits`, each row's fields but its domain grouped by product as a record's are,
    // figures as strings (`limit` says what was asked, not the page's cap), and a cursor naming
    // the next page (null on the last).
    return {
      query: json.query,
      query_operator: json.query_operator,
      total: text(total),
      limit: text(json.limit),
      hits: (rows as Json[]).map(({ domain, ...fields }) => ({ domain, ...byProduct(fields) })),
      next_cursor: more ? Buffer.from(`after:${rows.length}`).toString('base64url') : null,
    };
  }
  return {
    data: rows,
    meta: { query: json.query, query_operator: json.query_operator, total, limit: pageSize, has_more: more },
  };
}

function breakdownBody(layout: Layout, raw: Json): Json {
  const buckets = Array.isArray(raw.buckets) ? (raw.buckets as Json[]) : [];
  const segment = isObject(raw.segment) ? raw.segment : {};
  const coverage = isObject(raw.coverage) ? raw.coverage : {};
  const other = isObject(raw.other) ? raw.other : undefined;
  if (layout.name === 'grouped') {
    // Buckets as a map of value to figures, shares as percentages, every figure a string.
    const map: Json = {};
    for (const b of buckets)
      map[String(b.value)] = {
        count: text(b.count),
        percent: String(Math.round(Number(b.share) * 10_000) / 100),
      };
    return {
      breakdown: {
        field: raw.field,
        population: raw.population,
        segment: { description: segment.description, size: text(segment.size) },
        coverage: {
          with_value: text(coverage.with_value),
          missing: text(coverage.missing),
          ratio: text(coverage.ratio),
        },
        buckets: map,
        other: other ? { buckets: text(other.buckets), count: text(other.count) } : null,
      },
    };
  }
  return {
    data: {
      facet: raw.field,
      population: raw.population,
      segment: { description: segment.description, companies: segment.size },
      coverage: { with_value: coverage.with_value, missing: coverage.missing, ratio: coverage.ratio },
      values: buckets.map((b) => ({ key: b.value, doc_count: b.count, share: b.share })),
      other: other ? { values: other.buckets, companies: other.count } : null,
    },
  };
}

function lookalikeBody(layout: Layout, json: Json): Json {
  const results = Array.isArray(json.results) ? (json.results as Json[]) : [];
  const head: Json = { found: json.found, seed: json.seed };
  if (json.code !== undefined) head.code = json.code;
  if (layout.name === 'grouped') {
    return {
      ...head,
      k: text(json.k),
      matches: results.map((r) => ({ ...r, rank: text(r.rank), score: text(r.score) })),
    };
  }
  return { ...head, data: { k: json.k, candidates: results } };
}

function meBody(layout: Layout, json: Json): Json {
  const capabilities = Array.isArray(json.capabilities) ? (json.capabilities as string[]) : [];
  if (layout.name === 'grouped') {
    const every = ['domains', 'search', 'breakdown', 'lookalike'];
    return {
      plan: { name: json.plan },
      balance: text(json.balance),
      key_name: json.key_name,
      capabilities: Object.fromEntries(every.map((c) => [c, capabilities.includes(c)])),
      rate_limit_per_second: json.rate_limit_per_second,
    };
  }
  return {
    data: {
      account: {
        plan: json.plan,
        credits: { balance: json.balance },
        key_name: json.key_name,
        capabilities: capabilities.join(','),
        rate_limit_per_second: json.rate_limit_per_second,
      },
    },
  };
}

function productsBody(layout: Layout, json: Json): Json {
  const products = Array.isArray(json.products) ? (json.products as Json[]) : [];
  if (layout.name === 'grouped') {
    // The default named once for the catalog, not per product.
    return {
      products: products.map(({ default: _default, ...p }) => p),
      default_products: products.filter((p) => p.default === true).map((p) => p.id),
    };
  }
  return {
    data: {
      items: products.map((p) => ({
        product_id: p.id,
        description: p.description,
        field_names: p.fields,
        bundles: p.bundles,
        price: { credits: p.credit_units },
        ...(p.default === undefined ? {} : { is_default: p.default }),
        addon: p.add_on,
      })),
    },
  };
}

function fieldsBody(layout: Layout, json: Json): Json {
  const fields = Array.isArray(json.fields) ? (json.fields as Json[]) : [];
  if (layout.name === 'grouped') {
    // Filters and facets listed once for the catalog, not per field.
    const filters = fields
      .filter((f) => isObject(f.filter))
      .map((f) => ({ field: f.name, ...(f.filter as Json) }));
    return {
      fields: fields.map(({ filter: _filter, facet: _facet, ...f }) => f),
      filters,
      facets: fields.filter((f) => f.facet === true).map((f) => f.name),
    };
  }
  // Keyed by name, filters as { param, options }, facets and capabilities as flags, plans as text.
  const keyed: Json = {};
  for (const f of fields) {
    const { name, filter, facet, capabilities, plans, ...rest } = f;
    const filterObject = filter as Json | null;
    keyed[String(name)] = {
      ...rest,
      filter: filterObject
        ? {
            param: filterObject.name,
            kind: filterObject.value_source,
            options: (filterObject.values as string[]).map((value) => ({ value })),
          }
        : null,
      facetable: facet === true ? 'yes' : 'no',
      capabilities: Object.fromEntries(
        ['domains', 'search', 'lookalike'].map((c) => [c, (capabilities as string[]).includes(c)]),
      ),
      plans: (plans as string[]).join(','),
    };
  }
  return { data: { fields: keyed } };
}
