// GET /api/lookalike/{domain}: the call and the reader of its response. The reader follows
// docs/contract.md (`found`, `seed`, `results` ranked, `evidence` per candidate on request) and
// tolerates another envelope: candidates under another name, no `found`, no rank or score.
import type { ApiResponse, Context, Credits, RequestOptions } from '../types.js';
import { catalogRetryHook } from './catalogs.js';
import { countFilterValues, type Filters } from './filters.js';
import { findRows, isPlainObject, numberMember, type Row } from './search.js';

/** Documented maximum of k (docs/contract.md). */
export const MAX_K = 100;

export interface LookalikeRequest {
  /** Normalised seed domain. */
  seed: string;
  k?: number;
  filters: Filters;
  include?: readonly string[];
  evidence: boolean;
}

export function buildLookalikeCall(req: LookalikeRequest): RequestOptions {
  return {
    method: 'GET',
    path: `/api/lookalike/${encodeURIComponent(req.seed)}`,
    query: {
      k: req.k,
      filters: countFilterValues(req.filters) > 0 ? JSON.stringify(req.filters) : undefined,
      include: req.include?.length ? req.include.join(',') : undefined,
      include_evidence: req.evidence ? true : undefined,
    },
    auth: true,
  };
}

export async function fetchLookalikes(
  ctx: Context,
  req: LookalikeRequest,
  options: Pick<RequestOptions, 'onRetry' | 'spinner'> = {},
): Promise<ApiResponse<unknown>> {
  return ctx.client.request<unknown>({
    ...buildLookalikeCall(req),
    onRetry: options.onRetry ?? catalogRetryHook(ctx),
    ...(options.spinner === false ? { spinner: false as const } : {}),
  });
}

export interface LookalikeResult {
  found: boolean;
  seed?: string;
  code?: string;
  /** Candidates in rank order, each with `rank` and, when the server gave one, `score`. */
  candidates: Row[];
  /** What -o json prints: the response with its candidates under `results`, evidence kept whole. */
  document: Record<string, unknown>;
}

export const CANDIDATE_MEMBERS = [
  'results',
  'candidates',
  'matches',
  'lookalikes',
  'companies',
  'rows',
  'data',
  'items',
];

/** The candidates of a lookalike response, or undefined when the body has no recognisable shape. */
export function adaptLookalikeResponse(body: unknown, headerCredits?: Credits): LookalikeResult | undefined {
  if (!isPlainObject(body) && !Array.isArray(body)) return undefined;
  const members = isPlainObject(body) ? body : {};
  const code = typeof members.code === 'string' ? members.code : undefined;
  const foundRows = findRows(body, CANDIDATE_MEMBERS);
  const notAvailable = members.found === false || code === 'lookalike_not_available';
  if (!foundRows && !notAvailable) return undefined;

  const candidates = (foundRows?.rows ?? []).map((raw, index): Row => {
    const rank = numberMember(raw, ['rank', 'position']) ?? index + 1;
    const score = numberMember(raw, ['score', 'similarity']);
    return score === undefined ? { ...raw, rank } : { ...raw, rank, score };
  });
  candidates.sort((a, b) => (a.rank as number) - (b.rank as number));
  const seed = ['seed', 'domain', 'seed_domain'].map((k) => members[k]).find((v) => typeof v === 'string') as
    | string
    | undefined;

  // The members read, under the contract's names and in its order, then any other member.
  const wrapper =
    foundRows?.key !== undefined && isPlainObject(members[foundRows.key]) ? members[foundRows.key] : {};
  const k = numberMember(members, ['k']) ?? numberMember(wrapper as Row, ['k']);
  const document: Record<string, unknown> = { found: !notAvailable };
  if (seed !== undefined) document.seed = seed;
  if (code !== undefined) document.code = code;
  if (k !== undefined) document.k = k;
  document.results = candidates;
  const credits = isPlainObject(members.credits)
    ? members.credits
    : headerCredits?.charged !== undefined
      ? { charged: headerCredits.charged }
      : undefined;
  if (credits) document.credits = credits;
  for (const [name, value] of Object.entries(members)) {
    if (name === foundRows?.key || name === 'usage' || Object.hasOwn(document, name)) continue;
    if (name === 'domain' || name === 'seed_domain') continue;
    document[name] = value;
  }
  return { found: !notAvailable, seed, code, candidates, document };
}
