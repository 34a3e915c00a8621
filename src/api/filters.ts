// Search filters and included fields: built from the command line and checked against the fields
// catalog before any request, so a typo costs nothing and comes with a "did you mean". The server
// stays the authority: a catalog that cannot be read skips these checks rather than block a search.
import { type Problem, usageError } from '../problem.js';
import { didYouMean } from '../suggest.js';
import type { FieldEntry } from './types.js';

/** Filter name -> the exact catalog values wanted (the JSON shape of `filters`). */
export type Filters = Record<string, string[]>;

/** Where a field is requested: search rows and breakdowns, or lookalike candidates. */
export type Capability = 'search' | 'lookalike';

function unionInto(target: Filters, name: string, values: readonly string[]): void {
  const list = target[name] ?? [];
  for (const value of values) if (!list.includes(value)) list.push(value);
  target[name] = list;
}

/** `name=value[,value]` from one --filter flag. */
export function parseFilterFlag(raw: string): Filters {
  const eq = raw.indexOf('=');
  const name = eq < 0 ? '' : raw.slice(0, eq).trim();
  const values =
    eq < 0
      ? []
      : raw
          .slice(eq + 1)
          .split(',')
          .map((v) => v.trim())
          .filter((v) => v !== '');
  if (name === '' || values.length === 0) {
    throw usageError(
      `--filter expects name=value[,value], got "${raw}"`,
      'For example: --filter country=US,GB --filter site_category=fashion',
    );
  }
  const filters: Filters = {};
  unionInto(filters, name, values);
  return filters;
}

/** The JSON object of --filters: each member a string or an array of strings. */
export function parseFiltersJson(raw: string): Filters {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw usageError(`--filters is not valid JSON: ${(error as Error).message}`, FILTERS_JSON_HINT);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw usageError('--filters must be a JSON object mapping filter names to values', FILTERS_JSON_HINT);
  }
  const filters: Filters = {};
  for (const [name, value] of Object.entries(parsed)) {
    const values = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) {
      throw usageError(
        `--filters member "${name}" must be a string or an array of strings`,
        FILTERS_JSON_HINT,
      );
    }
    unionInto(filters, name, values as string[]);
  }
  return filters;
}

const FILTERS_JSON_HINT = `For example: --filters '{"country":["US","GB"],"tech":["shopify"]}'`;

/** Merges filter sets; values of the same name are unioned, first occurrence order kept. */
export function mergeFilters(...parts: readonly Filters[]): Filters {
  const merged: Filters = {};
  for (const part of parts)
    for (const [name, values] of Object.entries(part)) unionInto(merged, name, values);
  return merged;
}

export function countFilterValues(filters: Filters): number {
  return Object.values(filters).reduce((n, values) => n + values.length, 0);
}

function filterableFields(fields: readonly FieldEntry[]): Map<string, FieldEntry> {
  const byName = new Map<string, FieldEntry>();
  for (const field of fields) if (field.filter) byName.set(field.filter.name, field);
  return byName;
}

/**
 * Checks names and enum values against the catalog. Returns the filters with enum values spelled
 * as the catalog spells them ("us" -> "US": the server matches enums exactly), or throws a usage
 * Problem naming the first mistake with a suggestion.
 */
export function validateFilters(filters: Filters, fields: readonly FieldEntry[]): Filters {
  const byName = filterableFields(fields);
  const names = [...byName.keys()];
  const checked: Filters = {};
  for (const [name, values] of Object.entries(filters)) {
    const field = byName.get(name);
    if (!field?.filter) {
      const plainField = fields.some((f) => f.name === name);
      throw usageError(
        plainField
          ? `field \`${name}\` cannot be used as a filter`
          : `unknown filter \`${name}\`${didYouMean(name, names)}`,
        `Filters: ${names.join(', ')} (see \`company-data fields\`).`,
      );
    }
    const allowed = field.filter.value_source === 'enum' ? field.filter.values : undefined;
    if (!allowed) {
      checked[name] = [...values];
      continue;
    }
    checked[name] = values.map((value) => {
      const exact =
        allowed.find((a) => a === value) ?? allowed.find((a) => a.toLowerCase() === value.toLowerCase());
      if (exact) return exact;
      throw usageError(
        `unknown value "${value}" for filter \`${name}\`${didYouMean(value, allowed)}`,
        allowed.length <= 30
          ? `Values of ${name}: ${allowed.join(', ')}.`
          : `See the ${allowed.length} values of ${name} with \`company-data fields\`.`,
      );
    });
  }
  return checked;
}

/** Splits a comma-separated --include into field names. */
export function parseInclude(raw: string): string[] {
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (names.length === 0) throw usageError('--include needs at least one field name');
  return [...new Set(names)];
}

/** Checks --include against the fields a capability may return. */
export function validateInclude(
  include: readonly string[],
  fields: readonly FieldEntry[],
  capability: Capability,
): void {
  const usable = fields.filter((f) => f.capabilities.includes(capability)).map((f) => f.name);
  for (const name of include) {
    if (usable.includes(name)) continue;
    const known = fields.find((f) => f.name === name);
    if (known) {
      throw usageError(
        `field \`${name}\` (product ${known.product}) is enrichment-only: ${capability} cannot return it`,
        `Use \`company-data enrich <domain> --products ${known.product}\` for it. Fields for ${capability}: ${usable.join(', ')}.`,
      );
    }
    throw usageError(
      `unknown field \`${name}\` in --include${didYouMean(name, usable)}`,
      `Fields for ${capability}: ${usable.join(', ')}.`,
    );
  }
}

/** Checks a breakdown field against the catalog's facets. */
export function validateFacet(field: string, fields: readonly FieldEntry[]): string {
  const facets = fields.filter((f) => f.facet).map((f) => f.name);
  if (facets.includes(field)) return field;
  const caseMatch = facets.find((f) => f.toLowerCase() === field.toLowerCase());
  if (caseMatch) return caseMatch;
  const isField = fields.some((f) => f.name === field);
  throw usageError(
    `${isField ? `field \`${field}\` is not a breakdown facet` : `unknown field \`${field}\``}${didYouMean(field, facets)}`,
    `Facets: ${facets.join(', ')}.`,
  );
}

/**
 * A sentence for a server `invalid_filter`: re-checking the filters against the (possibly just
 * refreshed) catalog usually names the culprit and its likely spelling.
 */
export function suggestForInvalidFilter(filters: Filters, fields: readonly FieldEntry[]): string | undefined {
  try {
    validateFilters(filters, fields);
    return undefined;
  } catch (error) {
    return `${(error as Problem).detail}.`;
  }
}
