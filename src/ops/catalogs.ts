// The catalogs as operations read them: the fields narrowed to facets, filters or one product.
// The catalogs themselves (cached, free) are src/api/catalogs.ts.
import type { FieldEntry } from '../api/types.js';

export interface FieldsOptions {
  facets?: boolean;
  filters?: boolean;
  product?: string;
}

export function selectFields(fields: FieldEntry[], options: FieldsOptions): FieldEntry[] {
  return fields.filter(
    (f) =>
      (!options.facets || f.facet === true) &&
      (!options.filters || Boolean(f.filter)) &&
      (!options.product || f.product === options.product),
  );
}
