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
// Narrowest a shrunk list or prose column gets (its header too): a word and an ellipsis.
const MIN_SHRUNK = 7;
// A value longer than this is prose (a description): its column may shrink, like a list's.
const PROSE = 40;

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
 * Column widths (padding included) that fit `available` terminal columns, or undefined when the
 * records cannot sit side by side readably (renderTable then prints one block per record).
 *
 * `natural` is each column's width with its header on one line; `wrapped` with its header broken at
 * spaces; `least` the narrowest it may get: its widest value, or for a shrinkable column (lists
 * such as `tech`, prose) a few characters and an ellipsis. Values a person scans (names, numbers, years, ranges)
 * are never shrinkable, so they are never cut. Past the natural widths, the widest columns are
 * capped first, at one common level, so one long list does not squeeze every other column.
 */
export function fitWidths(
  natural: number[],
  available: number,
  least: number[] = natural,
  wrapped: number[] = natural,
): number[] | undefined {
  const budget = available - (natural.length + 1); // one border character per column, plus one
  const sum = (widths: number[]) => widths.reduce((s, w) => s + w, 0);
  if (sum(natural) <= budget) return natural;
  if (sum(least) > budget) return undefined;
  if (sum(wrapped) > budget) return capAtLevel(wrapped, budget, least);
  // Headers wrap before any value is shortened; what room is left unwraps them again, in order.
  let room = budget - sum(wrapped);
  return wrapped.map((w, i) => {
    if (natural[i] - w > room) return w;
    room -= natural[i] - w;
    return natural[i];
  });
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

export interface TableOptions {
  /**
   * Per column, whether its values may be shortened with an ellipsis (lists, prose). Default: a
   * column holding a value longer than 40 characters. Every other column keeps its values whole;
   * when they cannot all fit, the table becomes one block per record.
   */
  shrinkable?: boolean[];
}

export function renderTable(
  head: string[],
  rows: TableCell[][],
  style: TableStyle,
  options: TableOptions = {},
): string {
  const placeholder = style.unicode ? '—' : '-';
  const valueWidths = head.map((_, i) => {
    let width = 0;
    for (const row of rows) width = Math.max(width, textWidth(row[i] ?? placeholder));
    return width;
  });
  const shrinkable = options.shrinkable ?? valueWidths.map((w) => w > PROSE);
  const natural = head.map((h, i) => Math.max(textWidth(h), valueWidths[i]) + PADDING);
  const words = head.map((h) => Math.max(...h.split(' ').map(textWidth)));
  const wrapped = head.map((_, i) => Math.max(words[i], valueWidths[i]) + PADDING);
  // A shrinkable column may lose the end of its header too; any other keeps its longest word.
  const least = head.map((_, i) =>
    shrinkable[i]
      ? Math.min(Math.max(words[i], valueWidths[i]), MIN_SHRUNK) + PADDING
      : Math.max(words[i], valueWidths[i]) + PADDING,
  );
  const widths = fitWidths(natural, style.columns, least, wrapped);
  if (!widths) return renderExpanded(head, rows, style);
  const table = new Table({
    head: head.map((h, i) => {
      const text = wrapWords(h, widths[i] - PADDING);
      return style.color
        ? text
            .split('\n')
            .map((line) => `${BOLD_CYAN}${line}${RESET}`)
            .join('\n')
        : text;
    }),
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

/** A header broken at spaces into lines of at most `width` (a word longer than that stays whole). */
function wrapWords(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line === '') line = word;
    else if (textWidth(line) + 1 + textWidth(word) <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  lines.push(line);
  return lines.join('\n');
}

/**
 * One block per record, as psql's expanded mode prints them: a rule naming the record, then one
 * line per column, "name | value". A value wider than the terminal continues on the next lines
 * (cut at the terminal's edge, never shortened), so nothing is lost on a narrow terminal.
 */
export function renderExpanded(head: string[], rows: TableCell[][], style: TableStyle): string {
  const placeholder = style.unicode ? '—' : '-';
  const rule = style.unicode ? '─' : '-';
  const bar = style.unicode ? '│' : '|';
  const label = Math.max(...head.map(textWidth));
  const room = Math.max(10, style.columns - label - 3);
  const widest = Math.max(1, ...rows.flatMap((row) => row.map((cell) => textWidth(cell ?? placeholder))));
  const ruleWidth = label + 3 + Math.min(room, widest);
  const out: string[] = [];
  rows.forEach((row, r) => {
    const title = `${rule}[ RECORD ${r + 1} ]`;
    out.push(title + rule.repeat(Math.max(0, ruleWidth - textWidth(title))));
    head.forEach((h, i) => {
      const name = h + ' '.repeat(label - textWidth(h));
      const shownName = style.color ? `${BOLD_CYAN}${name}${RESET}` : name;
      const cell = row[i];
      if (cell === null || cell === undefined) {
        out.push(`${shownName} ${bar} ${style.color ? `${DIM}${placeholder}${RESET}` : placeholder}`);
        return;
      }
      wrapAt(cell, room).forEach((part, n) => {
        out.push(`${n === 0 ? shownName : ' '.repeat(label)} ${bar} ${part}`);
      });
    });
  });
  return `${out.join('\n')}\n`;
}

/** Lines of at most `width` characters, broken after a space where there is one (never lost). */
function wrapAt(text: string, width: number): string[] {
  const chars = [...text];
  const lines: string[] = [];
  let at = 0;
  while (chars.length - at > width) {
    let end = at + width;
    const space = chars.lastIndexOf(' ', end - 1);
    if (space > at) end = space + 1;
    lines.push(chars.slice(at, end).join('').trimEnd());
    at = end;
  }
  lines.push(chars.slice(at).join(''));
  return lines;
}
