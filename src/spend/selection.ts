// --products and --include checked against the published catalogs before any credit is spent,
// with "did you mean" suggestions, and what follows from the choice: the worst-case cost of one
// lookup and the result columns. The server stays the authority; this only catches mistakes early.
import type { FieldEntry, Product } from '../api/types.js';
import { Problem } from '../problem.js';
import { didYouMean } from '../suggest.js';
import { plural } from '../text.js';

export interface SelectionInput {
  products?: readonly string[];
  include?: readonly string[];
  /** Caps the worst case when the catalog cannot say it: the service never charges more. */
  maxCredits?: number;
}

export interface Selection {
  /**
   * Selected products in catalog order (the default ones when --products is absent). When the
   * catalog marks no product as default (`defaultUnknown`), every product a default request may
   * return: with --include, the products of its fields; without, all of them.
   */
  products: Product[];
  /** The sum of their credit units: the most one lookup can cost (at most --max-credits when unknown). */
  worstCase: number;
  /**
   * Result columns: --include as given, or every field of the selected products; undefined when
   * they cannot be known before the service answers (the default selection is unknown and there
   * is no --include): the answers decide them (src/batch/answer-columns.ts).
   */
  resultFields: string[] | undefined;
  /** No --products, and the products catalog marks no product as default (the spec leaves it open). */
  defaultUnknown?: true;
}

/** `domain` is always returned on a found record, whichever products are selected (contract). */
const ALWAYS_ALLOWED = 'domain';

/** Splits a comma-separated option into trimmed, non-empty, de-duplicated names. */
export function splitList(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const names = [
    ...new Set(
      raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  ];
  return names;
}

function clientProblem(code: string, detail: string): Problem {
  return new Problem({ code, detail, source: 'client' });
}

export function resolveSelection(
  catalog: { products: Product[]; fields: FieldEntry[] },
  input: SelectionInput,
): Selection {
  const byId = new Map(catalog.products.map((p) => [p.id, p]));
  const ids = catalog.products.map((p) => p.id);
  let chosen: Set<string>;
  if (input.products && input.products.length > 0) {
    for (const id of input.products) {
      if (!byId.has(id)) {
        throw clientProblem(
          'invalid_product',
          `unknown product \`${id}\`${didYouMean(id, ids)}; products: ${ids.join(', ')}`,
        );
      }
    }
    chosen = new Set(input.products);
  } else {
    chosen = new Set(catalog.products.filter((p) => p.default).map((p) => p.id));
  }
  const fieldByName = new Map(catalog.fields.map((f) => [f.name, f]));
  const productOf = (name: string): string | undefined =>
    fieldByName.get(name)?.product ?? catalog.products.find((p) => p.fields.includes(name))?.id;
  const include = input.include?.length ? input.include : undefined;
  // No --products and no product marked as default: which products a request returns is known
  // only from the answers. Nothing is refused that the service might accept; the worst case is
  // what every product that may be returned costs together (with --include, only the products of
  // its fields can be charged), and the service never charges more than --max-credits.
  const defaultUnknown = chosen.size === 0 && !input.products?.length;
  if (defaultUnknown) {
    chosen = new Set(include ? include.map(productOf).filter((id) => id !== undefined) : ids);
  }
  const products = catalog.products.filter((p) => chosen.has(p.id));
  let worstCase = products.reduce(
    (sum, p) => sum + (Number.isFinite(p.credit_units) ? p.credit_units : 0),
    0,
  );
  if (defaultUnknown && input.maxCredits !== undefined) worstCase = Math.min(worstCase, input.maxCredits);
  const unknown = defaultUnknown ? ({ defaultUnknown } as const) : {};

  if (!include && defaultUnknown) return { products, worstCase, resultFields: undefined, ...unknown };
  if (!include) {
    const resultFields: string[] = [];
    for (const p of products) for (const f of p.fields) if (!resultFields.includes(f)) resultFields.push(f);
    if (!resultFields.includes(ALWAYS_ALLOWED)) resultFields.unshift(ALWAYS_ALLOWED);
    return { products, worstCase, resultFields };
  }

  const names = [...fieldByName.keys()];
  for (const name of include) {
    const entry = fieldByName.get(name);
    const owner = productOf(name);
    if (!entry && !owner) {
      throw clientProblem('invalid_field', `unknown field \`${name}\`${didYouMean(name, names)}`);
    }
    if (entry?.capabilities?.length && !entry.capabilities.includes('domains')) {
      throw clientProblem(
        'field_not_available_for_capability',
        `field \`${name}\` cannot be requested from enrichment`,
      );
    }
    if (name !== ALWAYS_ALLOWED && owner && !chosen.has(owner)) {
      const selected = [...chosen].join(',') || 'none';
      throw clientProblem(
        'field_not_in_product',
        `field \`${name}\` belongs to product \`${owner}\`, which is not selected (--products ${selected}); add it with --products ${[...chosen, owner].join(',')}`,
      );
    }
  }
  for (const p of products) {
    const visible = include.some((name) => name !== ALWAYS_ALLOWED && productOf(name) === p.id);
    const domainCounts = p.fields.includes(ALWAYS_ALLOWED) && include.includes(ALWAYS_ALLOWED);
    if (!visible && !domainCounts) {
      throw clientProblem(
        'product_without_visible_fields',
        `product \`${p.id}\` is selected but none of its fields is in --include (its fields: ${p.fields.join(', ')})`,
      );
    }
  }
  return { products, worstCase, resultFields: [...include], ...unknown };
}

/** --max-credits below the worst case: the service would refuse every lookup, so stop first. */
export function checkMaxCredits(selection: Selection, maxCredits: number | undefined): void {
  // An unknown default selection may cost less than its bound: the service decides.
  if (selection.defaultUnknown || maxCredits === undefined || selection.worstCase <= maxCredits) return;
  const detail =
    `the selected products (${selection.products.map((p) => `${p.id} ${p.credit_units}`).join(', ')}) ` +
    `can cost up to ${plural(selection.worstCase, 'credit')} per lookup, more than --max-credits ${maxCredits}; nothing was sent`;
  throw new Problem({ code: 'max_credits_exceeded', detail, source: 'client' });
}
