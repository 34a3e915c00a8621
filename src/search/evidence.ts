// One readable line of why a lookalike matched, for the table ("same category, country; 3 shared
// tech (shopify, klaviyo, stripe)"). The full evidence stays in the JSON output; the spec
// does not show its structure, so anything unfamiliar is summarised generically, never dropped
// silently and never trusted as terminal text.
import { isPlainObject } from '../api/search.js';
import { oneLine } from '../output/sanitize.js';

/** How many items of a shared list are named before "+N more". */
const NAMED_ITEMS = 3;

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
  const more = items.length > NAMED_ITEMS ? `, +${items.length - NAMED_ITEMS}` : '';
  return `${items.length} ${label} (${shown.join(', ')}${more})`;
}

function memberPart(key: string, value: unknown): string | undefined {
  if (typeof value === 'boolean') return value ? words(key) : undefined;
  if (Array.isArray(value)) return listPart(words(key), value);
  if (typeof value === 'number') return `${words(key)} ${Number.isInteger(value) ? value : value.toFixed(2)}`;
  if (typeof value === 'string' && value !== '') return `${words(key)}: ${value}`;
  return undefined;
}

/**
 * A one-line summary of a candidate's evidence; "" when there is nothing to say. The `same_*`
 * flags come first and merged ("same category, platform, country"), so a narrow table cuts the
 * tail of a technology list rather than them.
 */
export function summariseEvidence(evidence: unknown): string {
  let parts: string[];
  if (typeof evidence === 'string') parts = [evidence];
  else if (Array.isArray(evidence))
    parts = evidence.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
  else if (isPlainObject(evidence)) {
    const same: string[] = [];
    const rest: string[] = [];
    for (const [key, value] of Object.entries(evidence)) {
      const match = /^same_(.+)$/.exec(key);
      if (match && typeof value === 'boolean') {
        if (value) same.push(SAME_LABELS[match[1]] ?? words(match[1]));
      } else {
        const part = memberPart(key, value);
        if (part !== undefined) rest.push(part);
      }
    }
    parts = same.length > 0 ? [`same ${same.join(', ')}`, ...rest] : rest;
  } else parts = [];
  return oneLine(parts.join('; '));
}
