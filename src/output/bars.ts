// Horizontal bar chart for breakdowns: one line per bucket, "label  count  share  bar", fitted to
// the terminal width. Pure: it returns lines and never writes, so it can be tested exactly.
import { oneLine } from './sanitize.js';

export interface BarBucket {
  label: string;
  count: number;
  /** Fraction of the whole, 0..1; shown as a percentage. */
  share: number;
}

export interface BarOptions {
  /** Maximum visible width of each line (the terminal's columns). */
  width: number;
  /** Block characters with eighth-cell precision when true; `#` cells when false. */
  unicode: boolean;
  /** Wrap the bars in an ANSI colour. */
  color: boolean;
}

// Index n is the glyph covering n eighths of a cell.
const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
const FULL = '█';
const CYAN = '\x1b[36m';
const RESET = '\x1b[0m';
const GAP = '  ';
// Below this many cells a bar says nothing useful, so the label gets the room instead.
const MIN_BAR = 4;

function visibleLength(text: string): number {
  return [...text].length;
}

function padOrTruncate(text: string, width: number, unicode: boolean): string {
  const chars = [...text];
  if (chars.length <= width) return text + ' '.repeat(width - chars.length);
  if (width <= 0) return '';
  const ellipsis = unicode ? '…' : '~';
  return chars.slice(0, width - 1).join('') + ellipsis;
}

export function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

export function formatShare(share: number): string {
  if (!Number.isFinite(share)) return '';
  return `${(share * 100).toFixed(1)}%`;
}

/**
 * The bar for `value` out of `max`, `cells` wide at most. A non-zero value always shows at least
 * the thinnest mark, so a small bucket is never mistaken for an empty one.
 */
export function drawBar(value: number, max: number, cells: number, unicode: boolean): string {
  if (cells <= 0 || max <= 0 || value <= 0) return '';
  const ratio = Math.min(1, value / max);
  if (!unicode) return '#'.repeat(Math.max(1, Math.round(ratio * cells)));
  const eighths = Math.max(1, Math.round(ratio * cells * 8));
  const full = Math.floor(eighths / 8);
  return FULL.repeat(full) + EIGHTHS[eighths % 8];
}

/** One line per bucket; no line is longer than `options.width` visible characters. */
export function renderBars(buckets: readonly BarBucket[], options: BarOptions): string[] {
  if (buckets.length === 0) return [];
  const labels = buckets.map((b) => oneLine(b.label));
  const counts = buckets.map((b) => formatCount(b.count));
  const shares = buckets.map((b) => formatShare(b.share));
  const countWidth = Math.max(...counts.map(visibleLength));
  const shareWidth = Math.max(...shares.map(visibleLength));
  const longestLabel = Math.max(1, ...labels.map(visibleLength));
  const width = Math.max(1, Math.floor(options.width));

  const numbers = countWidth + GAP.length + shareWidth;
  const room = width - numbers - 2 * GAP.length;
  // Labels take what they need up to 40% of the room; the bar gets the rest.
  let labelWidth = Math.min(longestLabel, Math.max(3, Math.floor(room * 0.4)));
  let barWidth = room - labelWidth;
  if (barWidth < MIN_BAR) {
    barWidth = 0;
    labelWidth = Math.max(0, Math.min(longestLabel, width - numbers - GAP.length));
  }
  const maxShare = Math.max(...buckets.map((b) => (Number.isFinite(b.share) ? b.share : 0)));

  return buckets.map((bucket, i) => {
    const head = `${padOrTruncate(labels[i], labelWidth, options.unicode)}${GAP}${counts[i].padStart(countWidth)}${GAP}${shares[i].padStart(shareWidth)}`;
    const bar = barWidth > 0 ? drawBar(bucket.share, maxShare, barWidth, options.unicode) : '';
    const line = bar ? `${head}${GAP}${options.color ? `${CYAN}${bar}${RESET}` : bar}` : head;
    // Extremely narrow terminals: cut rather than wrap, so the picture keeps its rows.
    if (visibleLength(head) > width) return [...head].slice(0, width).join('');
    return line;
  });
}
