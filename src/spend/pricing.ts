// What a domain lookup may cost, from the product catalog, and what to do when the service says
// the catalog was wrong: a lookup sent with max_credits = the hold is refused (not charged) when
// the price rose past it; the catalog is then read afresh (never from the cache) and the new worst
// case reserved once. A price still above the new catalog, or above --max-credits, stops there.
import { loadFields, loadProducts, refreshCatalogs } from '../api/catalogs.js';
import { Problem } from '../problem.js';
import type { Context } from '../types.js';
import { credits } from './purse.js';
import { checkMaxCredits, resolveSelection, type Selection, type SelectionInput } from './selection.js';

export { REQUEST_PRICE_ESTIMATE } from './prices.js';

/** The selection of a lookup (products, fields, worst case) from the catalogs in force. */
export async function lookupSelection(ctx: Context, input: SelectionInput): Promise<Selection> {
  const [products, fields] = await Promise.all([loadProducts(ctx), loadFields(ctx)]);
  return resolveSelection({ products, fields }, input);
}

export interface Repriced {
  worstCase: number;
  /** What changed, for a message: "tech now costs 1 credit (the catalog said 0)". */
  change: string;
}

/**
 * After a max_credits_exceeded: the worst case of the same selection in a fresh catalog, or the
 * problem that stops the purchase (the catalog still understates the price, or --max-credits is
 * now below it).
 */
export async function repriceSelection(
  ctx: Context,
  input: SelectionInput,
  before: Selection,
  held: number,
): Promise<Repriced> {
  await refreshCatalogs(ctx);
  const after = await lookupSelection(ctx, input);
  const was = new Map(before.products.map((p) => [p.id, p.credit_units]));
  const changes = after.products
    .filter((p) => was.get(p.id) !== p.credit_units)
    .map(
      (p) => `${p.id} now costs ${credits(p.credit_units)} (the catalog said ${was.get(p.id) ?? 'nothing'})`,
    );
  const change = changes.join(', ');
  if (after.worstCase <= held) {
    throw new Problem({
      code: 'max_credits_exceeded',
      detail: `the service prices a lookup of ${after.products.map((p) => p.id).join(',')} above the ${credits(held)} its product catalog publishes; nothing was charged`,
      source: 'server',
      hint: 'The catalog and the service disagree: try again later, or ask the service about the price.',
    });
  }
  checkMaxCredits(after, input.maxCredits);
  return { worstCase: after.worstCase, change: change ? `; ${change}` : '' };
}
