// Tables for people: cli-table3, fitted to the terminal width. Cells arrive as sanitised text
// (see cell.ts); this file only decides widths, borders and colour.
import Table from 'cli-table3';

export interface TableStyle {
  /** Terminal width to fit into. */
  columns: number;
  unicode: boolean;
  color: boolean;
}

/** A cell's text, or null for "no value" (drawn as a dimmed placeholder). */
export type TableCell = string | null;

const BOLD_CYAN = '\x1b[1;36m';
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';
// One padding space on each side of every cell (cli-table3's default).
const PADDING = 2;
// Narrowest a shrunk column gets: room for two characters and an ellipsis.
const MIN_CONTENT = 3;
// Columns this wide or narrower (padding included) are left whole while longer ones can shrink.
const SHORT_COLUMN = 12;

const ASCII_CHARS = {
  top: '-',
  'top-mid': '+',
  'top-left': '+',
  'top-right': '+',
  bottom: '-',
  'bottom-mid': '+',
  'bottom-left': '+',
  'bottom-right': '+',
  left: '|',
  'left-mid': '+',
  mid: '-',
  'mid-mid': '+',
  right: '|',
  'right-mid': '+',
  middle: '|',
};

/** Display width, close enough for ASCII and most Latin text (escape codes do not count). */
export function textWidth(text: string): number {
  return [...text.replace(/\x1b\[[0-9;]*m/g, '')].length;
}

/**
 * Column widths (padding included) that fit `available` terminal columns. Short columns (flags,
 * counts, ids) keep their width while long ones give way; long columns are capped at one common
 * level, so a single long description does not squeeze every other column. The first column
 * names the row, so it is shrunk only when shrinking all the others is not enough.
 */
export function fitWidths(natural: number[], available: number): number[] {
  const budget = available - (natural.length + 1); // one border character per column, plus one
  const sum = (widths: number[]) => widths.reduce((s, w) => s + w, 0);
  if (sum(natural) <= budget) return natural;
  const floor = MIN_CONTENT + PADDING;
  if (natural.length === 1) return [Math.max(floor, budget)];
  const [first, ...rest] = natural;
  const keepShort = capAtLevel(
    rest,
    budget - first,
    rest.map((w) => (w <= SHORT_COLUMN ? w : floor)),
  );
  if (first + sum(keepShort) <= budget) return [first, ...keepShort];
  const shrunk = capAtLevel(
    rest,
    budget - first,
    rest.map((w) => Math.min(w, floor)),
  );
  // Past the others' minimum, the first column takes what is left (and the table may overflow).
  return [Math.min(first, Math.max(floor, budget - sum(shrunk))), ...shrunk];
}

/** Widths capped at the largest common level whose total fits the budget, never below the floors. */
function capAtLevel(natural: number[], budget: number, floors: number[]): number[] {
  const widthAt = (level: number) => natural.map((w, i) => Math.max(floors[i], Math.min(w, level)));
  let low = 0;
  let high = Math.max(0, ...natural);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (widthAt(mid).reduce((s, w) => s + w, 0) <= budget) low = mid;
    else high = mid - 1;
  }
  return widthAt(low);
}

export function renderTable(head: string[], rows: TableCell[][], style: TableStyle): string {
  const placeholder = style.unicode ? '—' : '-';
  const natural = head.map((h, i) => {
    let width = textWidth(h);
    for (const row of rows) width = Math.max(width, textWidth(row[i] ?? placeholder));
    return width + PADDING;
  });
  const widths = fitWidths(natural, style.columns);
  const table = new Table({
    head: head.map((h) => (style.color ? `${BOLD_CYAN}${h}${RESET}` : h)),
    colWidths: widths,
    wordWrap: false,
    truncate: style.unicode ? '…' : '...',
    chars: style.unicode ? {} : ASCII_CHARS,
    // Colour is applied above by us, so it follows io.color rather than cli-table3's own detection.
    style: { head: [], border: [], compact: true },
  });
  for (const row of rows) {
    table.push(
      head.map((_, i) => {
        const cell = row[i];
        if (cell === null || cell === undefined)
          return style.color ? `${DIM}${placeholder}${RESET}` : placeholder;
        return cell;
      }),
    );
  }
  return `${table.toString()}\n`;
}
