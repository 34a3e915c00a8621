// `company-data products`: the data products, what each costs, and which fields it carries.
import type { Command } from 'commander';
import { productDocument } from '../api/catalog-views.js';
import { loadProducts } from '../api/catalogs.js';
import type { Product } from '../api/types.js';
import type { CommandKit } from '../command-kit.js';
import { isJsonFormat, printList } from '../output/format.js';
import type { Context } from '../types.js';

export function register(program: Command, kit: CommandKit): void {
  program
    .command('products')
    .description('List the data products, their credit units and fields (public: no key needed)')
    .addHelpText(
      'after',
      `
A domain lookup is charged the credit units of each selected product that returns data.
Products marked "default" are selected when --products is not given; add-ons are paid extras.

Examples:
  $ company-data --sandbox products
  $ company-data --sandbox products -o json`,
    )
    .action(kit.withContext(runProducts));
}

/**
 * Whether a product is selected by default, an add-on, or optional; null when the catalog says
 * neither whether it is a default nor whether it is an add-on (nothing is guessed).
 */
export function productKind(product: Product): string | null {
  if (product.default) return 'default';
  if (product.add_on) return 'add-on';
  return product.default === false ? 'optional' : null;
}

export async function runProducts(ctx: Context): Promise<number> {
  const products = await loadProducts(ctx);
  const emptyMessage = 'The service publishes no products.';
  if (isJsonFormat(ctx)) {
    printList(ctx, products.map(productDocument), { emptyMessage });
    return 0;
  }
  const rows = products.map((p) => ({
    id: p.id,
    description: p.description,
    credit_units: p.credit_units,
    kind: productKind(p),
    fields: p.fields,
    bundles: p.bundles,
  }));
  const columns = ['id', 'description', 'credit_units', 'kind', 'fields'];
  // CSV is for spreadsheets: it also gets the bundles, which a terminal has no room for.
  printList(ctx, rows, {
    emptyMessage,
    columns: ctx.config.format.value === 'csv' ? [...columns, 'bundles'] : columns,
  });
  return 0;
}
