// The sandbox's service logic as pure functions (no HTTP): domain lookups here, search in
// search-run.ts, lookalikes in engine-lookalike.ts. The server maps outcomes to responses.
import type { Product } from '../api/types.js';
import { didYouMean } from '../suggest.js';
import { PRODUCTS } from './catalogs.js';
import type { Dataset } from './dataset.js';
import {
  type Caller,
  type EngineOutcome,
  type Failure,
  FIELD_BY_NAME,
  fail,
  fieldValue,
  isFailure,
  normaliseDomainParam,
  quote,
  splitList,
} from './engine-common.js';
import { lookalikeIndex } from './engine-lookalike.js';
import { searchIndex } from './search-index.js';

export type { Caller, EngineOutcome } from './engine-common.js';
export { normaliseDomainParam } from './engine-common.js';
export { runLookalike } from './engine-lookalike.js';
export type { EngineOptions, SearchInput } from './search-run.js';
export { runSearch } from './search-run.js';

/** Builds the per-dataset indexes now, so the first search of a large dataset is not the slow one. */
export function prepareDataset(ds: Dataset): void {
  searchIndex(ds);
  lookalikeIndex(ds);
}

const PRODUCT_IDS = PRODUCTS.map((p) => p.id);
const FIELD_NAMES = [...FIELD_BY_NAME.keys()];

function parseProducts(raw: string | undefined): Product[] | Failure {
  const ids = raw === undefined ? [] : splitList(raw);
  if (ids.length === 0) return PRODUCTS.filter((p) => p.default);
  const selected: Product[] = [];
  for (const id of ids) {
    const product = PRODUCTS.find((p) => p.id === id);
    if (!product)
      return fail('invalid_product', `unknown product ${quote(id)}${didYouMean(id, PRODUCT_IDS)}`);
    selected.push(product);
  }
  return selected;
}

/** The included field names (null = every field of the selected products), after check 3. */
function parseDomainInclude(raw: string | undefined, products: Product[]): string[] | null | Failure {
  const names = raw === undefined ? [] : splitList(raw);
  if (names.length === 0) return null;
  for (const name of names) {
    const entry = FIELD_BY_NAME.get(name);
    if (!entry) return fail('invalid_field', `unknown field ${quote(name)}${didYouMean(name, FIELD_NAMES)}`);
    // domain is always returned, so naming it never needs its product.
    if (name !== 'domain' && !products.some((p) => p.id === entry.product))
      return fail(
        'field_not_in_product',
        `${name} belongs to the ${entry.product} product, which is not selected (products=${products.map((p) => p.id).join(',')})`,
      );
  }
  for (const product of products) {
    if (!product.fields.some((f) => names.includes(f)))
      return fail(
        'product_without_visible_fields',
        `the ${product.id} product is selected but none of its fields (${product.fields.join(', ')}) is included`,
      );
  }
  return names;
}

/** GET /api/domains/{domain}: checks 2..7 of docs/contract.md in order, then result-based charging. */
export function lookupDomain(
  ds: Dataset,
  domainParam: string,
  query: Record<string, string | undefined>,
  caller: Caller,
): EngineOutcome {
  const domain = normaliseDomainParam(domainParam);
  if (!domain) return fail('invalid_request', `${quote(domainParam)} is not a valid domain`);
  const products = parseProducts(query.products);
  if (isFailure(products)) return products;
  const include = parseDomainInclude(query.include, products);
  if (isFailure(include)) return include;
  let maxCredits: number | undefined;
  if (query.max_credits !== undefined) {
    if (!/^\d{1,9}$/.test(query.max_credits.trim()))
      return fail('invalid_request', 'max_credits must be an integer >= 0');
    maxCredits = Number(query.max_credits.trim());
  }
  const fields = include ?? products.flatMap((p) => p.fields);
  const offPlan = products.find((p) =>
    p.fields.some((f) => !FIELD_BY_NAME.get(f)?.plans.includes(caller.plan)),
  );
  if (offPlan)
    return fail('upgrade_required', `the ${offPlan.id} product is not available on the ${caller.plan} plan`);
  const worstCase = products.reduce((sum, p) => sum + p.credit_units, 0);
  const selected = products.map((p) => p.id).join(', ');
  if (maxCredits !== undefined && maxCredits < worstCase)
    return fail(
      'max_credits_exceeded',
      `the selected products (${selected}) could cost ${worstCase} credits; max_credits is ${maxCredits}`,
    );
  if (caller.balance < worstCase)
    return fail(
      'insufficient_credits',
      `the selected products (${selected}) could cost ${worstCase} credits; the balance is ${caller.balance}`,
    );

  const company = ds.byDomain.get(domain);
  if (!company)
    return {
      ok: true,
      body: { found: false, domain, code: 'domain_not_found', credits: { products: {} } },
      charged: 0,
    };
  const body: Record<string, unknown> = { found: true, domain: company.domain };
  for (const field of fields) if (field !== 'domain') body[field] = fieldValue(company, field);
  const charges: Record<string, number> = {};
  for (const product of products) {
    // A product is charged when one of its returned fields has a value (domain always has one).
    const returned = product.fields.filter((f) => f === 'domain' || fields.includes(f));
    if (returned.some((f) => fieldValue(company, f) !== null)) charges[product.id] = product.credit_units;
  }
  const charged = Object.values(charges).reduce((sum, units) => sum + units, 0);
  // The server sets credits.charged and keeps this per-product detail.
  body.credits = { products: charges };
  return { ok: true, body, charged };
}
