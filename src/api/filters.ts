// Search filters and included fields: built from the command line and checked against the fields
// catalog before any request, so a typo costs nothing and comes with a "did you mean". The server
// stays the authority: a check refuses only what the catalog clearly refuses (a field it marks as
// no filter, a value outside an enum it lists, a field whose capabilities leave out this command),
// and what the catalog does not say is sent for the service to decide. A catalog that cannot be
// read skips these checks rather than block a search.
//
// Names come from the user and the catalog: they are looked up in Maps and null-prototype objects,
// never on a plain object, so `constructor` or `__proto__` is an unknown filter like any other.
import { type Problem, usageError } from '../problem.js';
import { didYouMean } from '../suggest.js';
import type { FieldEntry } from './types.js';

/** Filter name -> the exact catalog values wanted (the JSON shape of `filters`). */
export type Filters = Record<string, string[]>;

/** An empty Filters without a prototype: any name, `__proto__` included, is an own member. */
export function emptyFilters(): Filters {
  return Object.create(null) as Filters;
}

/** Where a field is requested: search rows and breakdowns, or lookalike candidates. */
export type Capability = 'search' | 'lookalike';

function unionInto(target: Filters, name: string, values: readonly string[]): void {
  const list = Object.hasOwn(target, name) ? target[name] : [];
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
  const filters = emptyFilters();
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
  const filters = emptyFilters();
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
  const merged = emptyFilters();
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
 * Problem naming the first mistake with a suggestion. Refused: a name the catalog marks as no
 * filter; a name it does not have, when it names filters at all; a value outside the values it
 * lists. Sent as given: a field whose filter the catalog does not describe, and every name when
 * it describes no filter (a layout not understood is no reason to refuse).
 */
export function validateFilters(filters: Filters, fields: readonly FieldEntry[]): Filters {
  const byName = filterableFields(fields);
  const fieldByName = new Map(fields.map((f) => [f.name, f]));
  const names = [...byName.keys()];
  const checked = emptyFilters();
  for (const [name, values] of Object.entries(filters)) {
    const field = byName.get(name);
    if (!field?.filter) {
      const plainField = fieldByName.get(name);
      const unknown = plainField === undefined && names.length > 0;
      if (plainField?.filter === null || unknown) {
        throw usageError(
          plainField
            ? `field \`${name}\` cannot be used as a filter`
            : `unknown filter \`${name}\`${didYouMean(name, names)}`,
          `Filters: ${names.join(', ')} (see \`company-data fields\`).`,
        );
      }
      checked[name] = [...values];
      continue;
    }
    const allowed = field.filter.value_source === 'enum' ? field.filter.values : undefined;
    if (!allowed || allowed.length === 0) {
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

/** Whether the catalog lets a capability return the field: yes unless its capabilities leave it out. */
function usableIn(field: FieldEntry, capability: Capability): boolean {
  return field.capabilities === undefined || field.capabilities.includes(capability);
}

/**
 * Checks --include against the fields a capability may return: refused, a name the catalog does
 * not have and a field whose capabilities leave out this command; a field whose capabilities the
 * catalog does not give is sent.
 */
export function validateInclude(
  include: readonly string[],
  fields: readonly FieldEntry[],
  capability: Capability,
): void {
  const byName = new Map(fields.map((f) => [f.name, f]));
  const usable = fields.filter((f) => usableIn(f, capability)).map((f) => f.name);
  for (const name of include) {
    const known = byName.get(name);
    if (known && usableIn(known, capability)) continue;
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

/**
 * Checks a breakdown field against the catalog's facets. Refused: a field the catalog marks as no
 * facet, and a name it does not have when it marks facets at all. A field whose facet flag the
 * catalog does not give is sent for the service to decide.
 */
export function validateFacet(field: string, fields: readonly FieldEntry[]): string {
  const facets = fields.filter((f) => f.facet === true).map((f) => f.name);
  if (facets.includes(field)) return field;
  const caseMatch = facets.find((f) => f.toLowerCase() === field.toLowerCase());
  if (caseMatch) return caseMatch;
  const known = fields.find((f) => f.name === field);
  const saysFacets = fields.some((f) => f.facet !== undefined);
  if (known ? known.facet === undefined : !saysFacets) return field;
  throw usageError(
    `${known ? `field \`${field}\` is not a breakdown facet` : `unknown field \`${field}\``}${didYouMean(field, facets)}`,
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
