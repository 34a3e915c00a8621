// The breakdown of a search (`breakdown=<field>`): reading its answer in the layouts of
// docs/contract.md ("Open shapes of the answers"): buckets as a list or a map, shares as ratios or
// percentages, figures as numbers or text, the members under other names.
import { asNumber, findRows, isPlainObject, numberMember, type Row } from './read.js';

export interface BreakdownBucket {
  value: string | null;
  count: number;
  /** count / companies with a value (docs/contract.md). */
  share: number;
}

export interface BreakdownResult {
  field?: string;
  population?: string;
  segment: { description?: string; size?: number };
  coverage: { with_value?: number; missing?: number; ratio?: number };
  buckets: BreakdownBucket[];
  other?: { buckets?: number; count: number };
  /** What -o json prints: the breakdown object with the members above normalised. */
  document: Record<string, unknown>;
}

export const BUCKET_MEMBERS = ['buckets', 'values', 'rows', 'items', 'results', 'counts'];

function stringOrNull(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : String(value);
}

/** A share as a ratio: `share`/`ratio` as given, or a percentage over 100 (to 4 decimals, as shares are). */
function shareOf(raw: Row): number | undefined {
  const share = numberMember(raw, ['share', 'ratio', 'fraction']);
  if (share !== undefined) return share;
  const percent = numberMember(raw, ['percent', 'percentage', 'pct']);
  return percent === undefined ? undefined : Math.round(percent * 100) / 10_000;
}

const COUNT = ['count', 'doc_count', 'n', 'size', 'companies'];

function readBucket(raw: Row): { value: string | null; count: number; share?: number } | undefined {
  const count = numberMember(raw, COUNT);
  if (count === undefined) return undefined;
  const valueKey = ['value', 'key', 'name', 'label'].find((k) => k in raw);
  return { value: stringOrNull(valueKey ? raw[valueKey] : null), count, share: shareOf(raw) };
}

/**
 * Buckets as a list of objects, or as a map from value to a count or to the bucket's figures
 * (`{ "US": 301 }`, `{ "US": { "count": 301, "percent": 40.68 } }`).
 */
function findBuckets(inner: Row): { key?: string; rows: Row[] } | undefined {
  for (const name of BUCKET_MEMBERS) {
    const map = inner[name];
    if (!isPlainObject(map)) continue;
    const rows: Row[] = [];
    for (const [value, figures] of Object.entries(map)) {
      if (isPlainObject(figures)) rows.push({ ...figures, value });
      else if (asNumber(figures) !== undefined) rows.push({ value, count: figures });
      else return undefined;
    }
    return { key: name, rows };
  }
  return findRows(inner, BUCKET_MEMBERS);
}

/** The object holding a breakdown: the body, or `breakdown`/`result`/`data` inside it (twice at most). */
function breakdownOf(body: Row): Row {
  let inner = body;
  for (let depth = 0; depth < 2; depth++) {
    const next = [inner.breakdown, inner.result, inner.data].find(isPlainObject);
    if (!next) break;
    inner = next;
  }
  return inner;
}

/** The breakdown of a response, or undefined when no bucket list can be found. */
export function adaptBreakdownResponse(body: unknown): BreakdownResult | undefined {
  if (!isPlainObject(body)) return undefined;
  const inner = breakdownOf(body);
  const found = findBuckets(inner);
  if (!found) return undefined;
  const read = found.rows.map(readBucket);
  if (read.some((b) => b === undefined)) return undefined;
  const buckets = read as { value: string | null; count: number; share?: number }[];

  const segmentRaw = isPlainObject(inner.segment) ? inner.segment : {};
  const coverageRaw = isPlainObject(inner.coverage) ? inner.coverage : {};
  const otherRaw = isPlainObject(inner.other) ? inner.other : undefined;
  const otherCount = otherRaw ? numberMember(otherRaw, ['count', 'companies', 'doc_count']) : undefined;
  const other =
    otherRaw && otherCount !== undefined && otherCount > 0
      ? { buckets: numberMember(otherRaw, ['buckets', 'values', 'keys']), count: otherCount }
      : undefined;

  const sum = buckets.reduce((n, b) => n + b.count, 0) + (other?.count ?? 0);
  const missing = numberMember(coverageRaw, ['missing']) ?? numberMember(inner, ['missing']);
  const size =
    numberMember(segmentRaw, ['size', 'total', 'count', 'companies']) ??
    numberMember(inner, ['size', 'total']) ??
    (missing !== undefined ? sum + missing : undefined);
  const withValue =
    numberMember(coverageRaw, ['with_value', 'withValue', 'present']) ??
    (size !== undefined && missing !== undefined ? size - missing : sum);
  const ratio = numberMember(coverageRaw, ['ratio']) ?? (size ? withValue / size : undefined);
  const description =
    typeof segmentRaw.description === 'string'
      ? segmentRaw.description
      : typeof inner.description === 'string'
        ? inner.description
        : undefined;
  const field = [inner.field, inner.facet, inner.breakdown].find((v) => typeof v === 'string') as
    | string
    | undefined;

  const result: BreakdownResult = {
    field,
    population: typeof inner.population === 'string' ? inner.population : undefined,
    segment: { description, size },
    coverage: { with_value: withValue, missing, ratio },
    buckets: buckets.map((b) => ({
      value: b.value,
      count: b.count,
      share: b.share ?? (withValue ? b.count / withValue : 0),
    })),
    other,
    document: {},
  };
  // The members read, under the contract's names (docs/contract.md), whatever the layout.
  result.document = {
    field: result.field,
    population: result.population,
    segment: result.segment,
    coverage: result.coverage,
    buckets: result.buckets,
    other: other ?? null,
  };
  return result;
}
