// The sandbox's layouts: the same service, answering in other shapes where the spec leaves the
// shape open ("not shown": record layout, envelopes, catalog layouts, credit header names,
// maxima of `limit`, number types). Each layout follows every rule the spec does fix (`found`
// at the top level of a domain or lookalike answer, problem+json, the error catalog, the
// charging rules). docs/contract.md, "Sandbox layouts", describes them; the client must read
// them all (test/commands/layouts.test.ts).
//
// A layout rewrites a finished `flat` answer (the engine's own shape) just before it is sent, so
// the engine, the checks and the charging rules stay one piece of code.
import { reshape } from './layout-bodies.js';
import { isLayoutName, LAYOUT_NAMES, type LayoutName } from './layout-names.js';
import type { RouteName } from './routes.js';

export { isLayoutName, LAYOUT_NAMES, type LayoutName } from './layout-names.js';

export interface Layout {
  name: LayoutName;
  /** Names of the two credit headers (lower case). */
  chargedHeader: string;
  remainingHeader: string;
  /** Rows of a search page at most, whatever `limit` asks (the spec shows no maximum). */
  pageCap?: number;
  /** The price of a search with rows, by the number of rows returned (the spec fixes none). */
  searchPrice?: (rows: number) => number;
}

export const LAYOUTS: Record<LayoutName, Layout> = {
  flat: { name: 'flat', chargedHeader: 'x-credits-charged', remainingHeader: 'x-credits-remaining' },
  grouped: {
    name: 'grouped',
    chargedHeader: 'x-credits-used',
    remainingHeader: 'x-credits-balance',
    pageCap: 10,
  },
  enveloped: {
    name: 'enveloped',
    chargedHeader: 'x-credit-cost',
    remainingHeader: 'x-credit-balance',
    pageCap: 100,
  },
  metered: {
    name: 'metered',
    chargedHeader: 'x-usage-cost',
    remainingHeader: 'x-account-balance',
    pageCap: 100,
    // One credit for every 50 rows started: a full page of 100 costs 2.
    searchPrice: (rows) => Math.ceil(rows / 50),
  },
};

/** The layout of a name, or a RangeError naming the ones there are. */
export function layoutOf(name: string | undefined): Layout {
  if (name === undefined) return LAYOUTS.flat;
  if (!isLayoutName(name))
    throw new RangeError(`unknown layout "${name}"; the layouts are ${LAYOUT_NAMES.join(', ')}`);
  return LAYOUTS[name];
}

/** What a layout makes of one 200 answer: the body to send and what it charges. */
export interface LaidOut {
  body: unknown;
  charged: number;
}

/**
 * A 200 JSON answer of `route` in `layout`. `flat` is the engine's own shape, returned as it is.
 * `balance` is the key's balance before this answer: a price the layout sets is still never
 * more than the key holds (the caller answers insufficient_credits when it would be).
 */
export function layOut(
  layout: Layout,
  route: RouteName,
  json: Record<string, unknown>,
  charged: number,
  balanceBefore: number,
): LaidOut {
  if (layout.name === 'flat') return { body: json, charged };
  let price = charged;
  const rows = Array.isArray(json.rows) ? json.rows : undefined;
  if (route === 'search' && rows && layout.pageCap !== undefined && rows.length > layout.pageCap) {
    json = { ...json, rows: rows.slice(0, layout.pageCap) };
  }
  const shown = Array.isArray(json.rows) ? json.rows.length : 0;
  if (route === 'search' && rows && layout.searchPrice) price = shown > 0 ? layout.searchPrice(shown) : 0;
  return { body: reshape(layout, route, json, price, balanceBefore - price), charged: price };
}
