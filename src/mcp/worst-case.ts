// What a paid call can cost before it is sent: its worst case (requests × the most one request can
// cost), what it buys in words a person can judge, and, when the worst case is above what is
// left, the largest part of it that fits (the first N domains or seeds).
import { normaliseArguments } from '../ops/enrich.js';
import { learntPrice } from '../spend/prices.js';
import { lookupSelection } from '../spend/pricing.js';
import { credits } from '../spend/purse.js';
import type { Json } from './answers.js';
import type { ArgsOf, PaidTool } from './schemas.js';
import type { Session } from './session.js';

export interface WorstCase {
  /** Requests the call sends at most. */
  requests: number;
  /** The most one of them can cost. */
  unit: number;
  /** requests × unit. */
  credits: number;
  /** The domains or seeds, normalised, for a call that sends one request per item. */
  items?: { name: 'domains' | 'seeds'; values: string[] };
}

export async function worstCaseOf(session: Session, tool: PaidTool, args: Json): Promise<WorstCase> {
  const of = (requests: number, unit: number, items?: WorstCase['items']): WorstCase => ({
    requests,
    unit,
    credits: requests * unit,
    ...(items ? { items } : {}),
  });
  switch (tool) {
    case 'enrich': {
      const { domains, products, include } = args as ArgsOf<'enrich'>;
      const values = normaliseArguments(domains);
      const selection = await lookupSelection(session.ctx, { products, include });
      return of(values.length, selection.worstCase, { name: 'domains', values });
    }
    case 'lookalike': {
      const { seeds, k } = args as ArgsOf<'lookalike'>;
      const values = normaliseArguments(seeds);
      return of(values.length, learntPrice(session.ctx, 'lookalike', k), { name: 'seeds', values });
    }
    case 'search':
      return of(1, learntPrice(session.ctx, 'search', (args as ArgsOf<'search'>).limit));
    default:
      return of(1, learntPrice(session.ctx, 'breakdown', (args as ArgsOf<'breakdown'>).limit));
  }
}

/** A list of names, the first few of them when long: "a.com, b.com and 10 more". */
export function someOf(values: readonly string[], shown = 5): string {
  if (values.length <= shown) return values.join(', ');
  return `${values.slice(0, shown).join(', ')} and ${values.length - shown} more`;
}

/** What the call buys, as a person asked to confirm it reads it. */
export function describeCall(tool: PaidTool, args: Json, worst: WorstCase): string {
  const requests = worst.requests === 1 ? 'one request' : `${worst.requests} requests`;
  const price = `up to ${credits(worst.credits)} (${requests} of up to ${credits(worst.unit)})`;
  switch (tool) {
    case 'enrich': {
      const { products } = args as ArgsOf<'enrich'>;
      const what = products ? `the products ${products.join(', ')}` : 'the default products';
      return `enrich ${worst.requests} domain${worst.requests === 1 ? '' : 's'} (${someOf(worst.items?.values ?? [])}) with ${what}: ${price}`;
    }
    case 'lookalike':
      return `lookalikes of ${someOf(worst.items?.values ?? [])}: ${price}`;
    case 'search': {
      const { query, limit } = args as ArgsOf<'search'>;
      return `a search${query ? ` for "${query}"` : ''} of up to ${limit ?? 25} rows: ${price}`;
    }
    default: {
      const { field, query } = args as ArgsOf<'breakdown'>;
      return `a breakdown by ${field}${query ? ` of "${query}"` : ''}: ${price}`;
    }
  }
}

export interface Fit {
  /** How many of the items fit (0 when not even one request does). */
  count: number;
  /** The call's arguments cut to the items that fit; absent when nothing fits. */
  args?: Json;
  /** What would fit, in a sentence. */
  text: string;
}

/** The largest part of a call that fits in `room` credits (its worst case does not). */
export function whatFits(args: Json, worst: WorstCase, room: number): Fit {
  const count = worst.unit > 0 ? Math.max(0, Math.floor(room / worst.unit)) : worst.requests;
  if (count === 0) {
    return {
      count,
      text: `nothing fits: one request can cost up to ${credits(worst.unit)} and ${credits(Math.max(0, room))} are left`,
    };
  }
  if (!worst.items) return { count, args, text: 'the call fits' };
  const kept = worst.items.values.slice(0, count);
  return {
    count,
    args: { ...args, [worst.items.name]: kept },
    text: `the first ${count} ${worst.items.name} fit (${someOf(kept)}), up to ${credits(count * worst.unit)}`,
  };
}
