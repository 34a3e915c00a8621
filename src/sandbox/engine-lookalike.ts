// GET /api/lookalike/{domain} (docs/contract.md): weighted similarity of every company to the
// seed, the top k by score, optional evidence. Technologies are bit sets built once per dataset.

import type { Company, Dataset } from './dataset.js';
import {
  type Caller,
  type EngineOutcome,
  fail,
  isFailure,
  normaliseDomainParam,
  parseBoundedInt,
  parseFilters,
  parseRowInclude,
  passesFilters,
  planFailure,
  quote,
  rowOf,
} from './engine-common.js';

export const WEIGHTS = { tech: 0.5, site_category: 0.25, primary_platform: 0.15, country: 0.1 } as const;

interface TechBits {
  /** words per company in `bits` */
  width: number;
  bits: Uint32Array;
  counts: Uint16Array;
  ids: Map<string, number>;
  /** Company indices by popularity rank (1 first). */
  order: Int32Array;
}

const cache = new WeakMap<Dataset, TechBits>();

/** Technology bit sets and popularity order of a dataset, built once and cached. */
export function lookalikeIndex(ds: Dataset): TechBits {
  const cached = cache.get(ds);
  if (cached) return cached;
  const ids = new Map<string, number>();
  for (const c of ds.companies) for (const t of c.tech) if (!ids.has(t)) ids.set(t, ids.size);
  const width = Math.max(1, Math.ceil(ids.size / 32));
  const bits = new Uint32Array(ds.companies.length * width);
  const counts = new Uint16Array(ds.companies.length);
  ds.companies.forEach((c, i) => {
    for (const t of c.tech) {
      const id = ids.get(t) ?? 0;
      const word = i * width + (id >>> 5);
      const bit = 1 << (id & 31);
      // A repeated technology counts once.
      if ((bits[word] & bit) === 0) counts[i]++;
      bits[word] |= bit;
    }
  });
  const order = Int32Array.from(ds.companies.keys()).sort(
    (a, b) => ds.companies[a].popularity - ds.companies[b].popularity,
  );
  const built = { width, bits, counts, ids, order };
  cache.set(ds, built);
  return built;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

const same = (a: string | null, b: string | null) => a !== null && a === b;
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

interface Scored {
  company: Company;
  score: number;
}

export function runLookalike(
  ds: Dataset,
  seedParam: string,
  query: Record<string, string | undefined>,
  caller: Caller,
): EngineOutcome {
  const seed = normaliseDomainParam(seedParam);
  if (!seed) return fail('invalid_request', `${quote(seedParam)} is not a valid domain`);
  const k = parseBoundedInt(query.k, 'k', 10, 1, 100);
  if (isFailure(k)) return k;
  const filters = parseFilters(query.filters, 'GET');
  if (isFailure(filters)) return filters;
  const include = parseRowInclude(query.include, 'lookalike');
  if (isFailure(include)) return include;
  const evidenceParam = query.include_evidence ?? 'false';
  if (evidenceParam !== 'true' && evidenceParam !== 'false')
    return fail('invalid_request', 'include_evidence must be "true" or "false"');
  const evidence = evidenceParam === 'true';
  const denied =
    planFailure(caller, include, 'include of') ??
    planFailure(caller, filters.filters.keys(), 'filter on') ??
    // Evidence names the shared technologies, which are data of the tech product.
    (evidence ? planFailure(caller, ['tech'], 'evidence with') : null);
  if (denied) return denied;

  const seedCompany = ds.byDomain.get(seed);
  const seedIndex = seedCompany ? ds.companies.indexOf(seedCompany) : -1;
  const notAvailable: EngineOutcome = {
    ok: true,
    body: { found: false, seed, code: 'lookalike_not_available', results: [] },
    charged: 0,
  };
  if (
    !seedCompany ||
    seedIndex === -1 ||
    (seedCompany.tech.length === 0 && seedCompany.site_category === null)
  )
    return notAvailable;

  const top = nearest(
    ds,
    seedIndex,
    k,
    (c) => filters.filters.size === 0 || passesFilters(c, filters.filters),
  );
  if (top.length === 0) return notAvailable;
  if (caller.balance < 1)
    return fail('insufficient_credits', `a lookalike costs 1 credit; the balance is ${caller.balance}`);
  const results = top.map(({ company, score }, i) => {
    const row: Record<string, unknown> = { rank: i + 1, score: round4(score), ...rowOf(company, include) };
    if (evidence) {
      row.evidence = {
        shared_tech: seedCompany.tech.filter((t) => company.tech.includes(t)),
        same_site_category: same(seedCompany.site_category, company.site_category),
        same_primary_platform: same(seedCompany.primary_platform, company.primary_platform),
        same_country: same(seedCompany.country, company.country),
      };
    }
    return row;
  });
  return { ok: true, body: { found: true, seed, k, results }, charged: 1 };
}

/** The k most similar companies, best first; equal scores keep the more popular company first. */
function nearest(ds: Dataset, seedIndex: number, k: number, accept: (c: Company) => boolean): Scored[] {
  const { width, bits, counts, order } = lookalikeIndex(ds);
  const seed = ds.companies[seedIndex];
  const seedBase = seedIndex * width;
  const top: Scored[] = [];
  // Visit in popularity order so that a strict comparison keeps ties in popularity order.
  for (const i of order) {
    if (i === seedIndex) continue;
    const c = ds.companies[i];
    let shared = 0;
    for (let w = 0; w < width; w++) shared += popcount(bits[seedBase + w] & bits[i * width + w]);
    const union = counts[seedIndex] + counts[i] - shared;
    let score = union > 0 ? (WEIGHTS.tech * shared) / union : 0;
    if (same(seed.site_category, c.site_category)) score += WEIGHTS.site_category;
    if (same(seed.primary_platform, c.primary_platform)) score += WEIGHTS.primary_platform;
    if (same(seed.country, c.country)) score += WEIGHTS.country;
    if (score <= 0 || (top.length === k && score <= top[k - 1].score) || !accept(c)) continue;
    let at = top.length;
    while (at > 0 && top[at - 1].score < score) at--;
    top.splice(at, 0, { company: c, score });
    if (top.length > k) top.pop();
  }
  return top;
}
