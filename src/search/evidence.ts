// One readable line of why a lookalike matched, for the table ("3 shared tech (shopify, klaviyo,
// stripe); same category; same country"). The full evidence stays in the JSON output; the spec
// does not show its structure, so anything unfamiliar is summarised generically, never dropped
// silently and never trusted as terminal text.
import { isPlainObject } from '../api/search.js';
import { oneLine } from '../output/sanitize.js';

/** How many items of a shared list are named before "+N more". */
const NAMED_ITEMS = 4;

const SAME_LABELS: Record<string, string> = {
  site_category: 'category',
  primary_platform: 'platform',
  country: 'country',
  employee_range: 'size',
};

function words(key: string): string {
  return key.replaceAll('_', ' ');
}

function listPart(label: string, items: unknown[]): string | undefined {
  if (items.length === 0) return undefined;
  const shown = items
    .slice(0, NAMED_ITEMS)
    .map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
  const more = items.length > NAMED_ITEMS ? `, +${items.length - NAMED_ITEMS} more` : '';
  return `${items.length} ${label} (${shown.join(', ')}${more})`;
}

function memberPart(key: string, value: unknown): string | undefined {
  const same = /^same_(.+)$/.exec(key);
  if (typeof value === 'boolean') {
    if (!value) return undefined;
    return same ? `same ${SAME_LABELS[same[1]] ?? words(same[1])}` : words(key);
  }
  if (Array.isArray(value)) return listPart(words(key), value);
  if (typeof value === 'number') return `${words(key)} ${Number.isInteger(value) ? value : value.toFixed(2)}`;
  if (typeof value === 'string' && value !== '') return `${words(key)}: ${value}`;
  return undefined;
}

/** A one-line summary of a candidate's evidence; "" when there is nothing to say. */
export function summariseEvidence(evidence: unknown): string {
  let parts: string[];
  if (typeof evidence === 'string') parts = [evidence];
  else if (Array.isArray(evidence))
    parts = evidence.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
  else if (isPlainObject(evidence)) {
    parts = Object.entries(evidence)
      .map(([key, value]) => memberPart(key, value))
      .filter((p): p is string => p !== undefined);
  } else parts = [];
  return oneLine(parts.join('; '));
}
