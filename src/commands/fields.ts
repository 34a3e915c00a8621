// `company-data fields`: every field, its product, whether and how it can filter a search,
// whether it is a breakdown facet, what it costs, and where and on which plans it is available.
import type { Command } from 'commander';
import { fieldDocument } from '../api/catalog-views.js';
import { loadFields } from '../api/catalogs.js';
import type { FieldEntry } from '../api/types.js';
import type { CommandKit } from '../command-kit.js';
import { type FieldsOptions, selectFields } from '../ops/catalogs.js';
import { isJsonFormat, printList } from '../output/format.js';
import type { Context } from '../types.js';

export function register(program: Command, kit: CommandKit): void {
  program
    .command('fields')
    .description('List fields, search filters and breakdown facets (public: no key needed)')
    .option('--facets', 'only the fields accepted by `breakdown`')
    .option('--filters', 'only the fields usable as search filters')
    .option('--product <id>', 'only the fields of this product')
    .addHelpText(
      'after',
      `
"filter" says what a search filter on the field accepts: "enum (N)" is one of N exact catalog
values (-o json and -o csv list them), "free" any text; "—" means the field cannot filter, or
that the catalog does not say (the service then decides). "facet" marks the fields that
\`company-data breakdown\` accepts.

Examples:
  $ company-data --sandbox fields
  $ company-data --sandbox fields --facets
  $ company-data --sandbox fields --filters -o json`,
    )
    .action(kit.withContext(runFields));
}

/** "enum (12)" (the number of values), "free", or null when the field cannot filter. */
export function valueSource(field: FieldEntry): string | null {
  if (!field.filter) return null;
  if (field.filter.value_source === 'enum') return `enum (${field.filter.values?.length ?? 0})`;
  return field.filter.value_source;
}

/**
 * The filter column of the table: the value source, prefixed with the filter's name only when
 * it differs from the field's, so an 80-column terminal keeps room for the other columns.
 */
export function filterSummary(field: FieldEntry): string | null {
  const source = valueSource(field);
  if (!field.filter || source === null) return null;
  return field.filter.name === field.name ? source : `${field.filter.name}: ${source}`;
}

export async function runFields(ctx: Context, options: FieldsOptions): Promise<number> {
  const fields = selectFields(await loadFields(ctx), options);
  const emptyMessage = 'No fields match.';
  if (isJsonFormat(ctx)) {
    printList(ctx, fields.map(fieldDocument), { emptyMessage });
    return 0;
  }
  if (ctx.config.format.value === 'csv') {
    const rows = fields.map((f) => ({
      name: f.name,
      product: f.product,
      type: f.type,
      filter: f.filter?.name ?? null,
      value_source: f.filter?.value_source ?? null,
      values: f.filter?.values ?? null,
      facet: f.facet,
      credit_units: f.billing.credit_units,
      capabilities: f.capabilities,
      plans: f.plans,
      description: f.description,
    }));
    printList(ctx, rows, { emptyMessage });
    return 0;
  }
  const rows = fields.map((f) => ({
    name: f.name,
    product: f.product,
    filter: filterSummary(f),
    facet: f.facet,
    credits: f.billing.credit_units,
    capabilities: f.capabilities,
    plans: f.plans,
  }));
  printList(ctx, rows, { emptyMessage });
  return 0;
}
