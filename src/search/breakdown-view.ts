// How a breakdown is shown: the terminal picture (segment, coverage, one bar per bucket) and the
// flat rows of CSV / NDJSON. Pure, so both can be tested exactly.
//
// Decision for CSV / NDJSON: one row per bucket with columns value, count, share, kind. kind is
// `value` for a returned bucket, `other` for the values beyond --limit taken together (value
// empty) and `missing` for companies without a value (value empty, share empty: shares are of
// the companies with a value). The counts of all rows add up to the segment size, and a real
// value named "other" can never be confused with the remainder.
import type { BreakdownResult, Row } from '../api/search.js';
import { formatCount, formatShare, renderBars } from '../output/bars.js';
import { oneLine } from '../output/sanitize.js';

export const BREAKDOWN_COLUMNS = ['value', 'count', 'share', 'kind'];

export interface PictureOptions {
  width: number;
  unicode: boolean;
  color: boolean;
}

const BOLD = '\x1b[1m';
const RESET = '\x1b[0m';

function clip(text: string, width: number, unicode: boolean): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  return `${chars.slice(0, Math.max(0, width - 1)).join('')}${unicode ? '…' : '~'}`;
}

function otherShare(result: BreakdownResult, count: number): number {
  const withValue = result.coverage.with_value;
  return withValue ? count / withValue : Number.NaN;
}

/** The lines of the picture, none longer than `options.width` visible characters. */
export function renderBreakdown(result: BreakdownResult, options: PictureOptions): string[] {
  const { width, unicode, color } = options;
  const field = oneLine(result.field ?? 'value');
  const size = result.segment.size;
  const description = oneLine(result.segment.description ?? 'matching companies');
  const title = clip(
    size !== undefined
      ? `${description}: ${formatCount(size)} ${size === 1 ? 'company' : 'companies'}`
      : description,
    width,
    unicode,
  );
  const { with_value: withValue, missing, ratio } = result.coverage;
  const coverageParts = [
    withValue !== undefined ? `${formatCount(withValue)} with a value` : undefined,
    missing !== undefined ? `${formatCount(missing)} missing` : undefined,
  ].filter((p) => p !== undefined);
  const coverage = `${field} coverage: ${formatShare(ratio ?? Number.NaN) || 'unknown'}${coverageParts.length ? ` (${coverageParts.join(', ')})` : ''}`;

  const buckets = result.buckets.map((b) => ({
    label: b.value ?? (unicode ? '—' : '(none)'),
    count: b.count,
    share: b.share,
  }));
  if (result.other) {
    const values = result.other.buckets;
    buckets.push({
      label:
        values !== undefined ? `other (${formatCount(values)} value${values === 1 ? '' : 's'})` : 'other',
      count: result.other.count,
      share: otherShare(result, result.other.count),
    });
  }
  const lines = [color ? `${BOLD}${title}${RESET}` : title, clip(coverage, width, unicode)];
  if (buckets.length === 0) return lines;
  return [...lines, '', ...renderBars(buckets, { width, unicode, color })];
}

/** The rows of CSV and NDJSON (see the decision at the top of this file). */
export function breakdownRows(result: BreakdownResult): Row[] {
  const rows: Row[] = result.buckets.map((b) => ({
    value: b.value,
    count: b.count,
    share: b.share,
    kind: 'value',
  }));
  if (result.other) {
    const share = otherShare(result, result.other.count);
    // Four decimals, as the service rounds the shares of its buckets.
    const rounded = Number.isFinite(share) ? Math.round(share * 10_000) / 10_000 : null;
    rows.push({ value: null, count: result.other.count, share: rounded, kind: 'other' });
  }
  if (result.coverage.missing !== undefined && result.coverage.missing > 0) {
    rows.push({ value: null, count: result.coverage.missing, share: null, kind: 'missing' });
  }
  return rows;
}
