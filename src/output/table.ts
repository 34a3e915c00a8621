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
// A value longer than this is prose (a description): its column may wrap, like a list's.
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
 * such as `tech`, prose) its longest word, its values wrapping over several lines (never cut,
 * issue 46). Values a person scans (names, numbers, years, ranges) are never shrinkable. Past the natural widths, the widest columns are
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
   * Per column, whether its values may wrap over several lines (lists, prose). Default: a column
   * holding a value longer than 40 characters. Every other column keeps its values on one line;
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
  // A wrapping column gets as narrow as its longest word (header included): no word is broken.
  const least = head.map((_, i) =>
    shrinkable[i]
      ? Math.max(words[i], ...rows.map((row) => longestWord(row[i] ?? placeholder))) + PADDING
      : Math.max(words[i], valueWidths[i]) + PADDING,
  );
  const widths = fitWidths(natural, style.columns, least, wrapped);
  if (!widths) return renderExpanded(head, rows, style);
  const wrapping = widths.some((w, i) => w < natural[i] && w - PADDING < valueWidths[i]);
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
    // Rows of several lines (a wrapped value) are ruled apart, so that each record reads as one.
    style: { head: [], border: [], compact: !wrapping },
  });
  for (const row of rows) {
    table.push(
      head.map((_, i) => {
        const cell = row[i];
        if (cell === null || cell === undefined)
          return style.color ? `${DIM}${placeholder}${RESET}` : placeholder;
        return wrapValue(cell, widths[i] - PADDING).join('\n');
      }),
    );
  }
  return `${table.toString()}\n`;
}

/**
 * A record (field, value) as a table of two columns: a value too long for the terminal wraps at
 * word boundaries under itself (a path after a `/`), never cut (issue 46). Where even the longest
 * word has no room beside the names, one block of `name │ value` lines.
 */
export function renderRecordTable(
  head: [string, string],
  rows: Array<[string, TableCell]>,
  style: TableStyle,
): string {
  const label = Math.max(textWidth(head[0]), ...rows.map(([name]) => textWidth(name)));
  const room = style.columns - label - 3 * PADDING - 1;
  const longest = Math.max(textWidth(head[1]), ...rows.map(([, value]) => longestWord(value ?? '')));
  if (room < longest) {
    // One block: the record's own fields, a line each (the table's head names nothing here).
    return renderExpanded(
      rows.map(([name]) => name),
      [rows.map(([, value]) => value)],
      style,
      { rule: false },
    );
  }
  return renderTable(head, rows, style, { shrinkable: [false, true] });
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
 * (broken at a word boundary, never shortened), so nothing is lost on a narrow terminal.
 */
export function renderExpanded(
  head: string[],
  rows: TableCell[][],
  style: TableStyle,
  options: { rule?: boolean } = {},
): string {
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
    if (options.rule !== false) out.push(title + rule.repeat(Math.max(0, ruleWidth - textWidth(title))));
    head.forEach((h, i) => {
      const name = h + ' '.repeat(label - textWidth(h));
      const shownName = style.color ? `${BOLD_CYAN}${name}${RESET}` : name;
      const cell = row[i];
      if (cell === null || cell === undefined) {
        out.push(`${shownName} ${bar} ${style.color ? `${DIM}${placeholder}${RESET}` : placeholder}`);
        return;
      }
      wrapValue(cell, room).forEach((part, n) => {
        out.push(`${n === 0 ? shownName : ' '.repeat(label)} ${bar} ${part}`);
      });
    });
  });
  return `${out.join('\n')}\n`;
}

/** The widest unbreakable piece of a value (see wrapValue). */
function longestWord(text: string): number {
  return Math.max(0, ...text.split(BREAK_AFTER).map((word) => textWidth(word.trimEnd())));
}

// Where a value may continue on the next line: after a space, after the `/` of a path (not inside
// `//`), the `,` of a list written without spaces, or the `&` of a URL's query. Never inside a word.
const BREAK_AFTER = /(?<=[ ,&])|(?<=\/)(?!\/)/;

/**
 * Lines of at most `width` characters, broken where BREAK_AFTER allows: nothing is lost or cut.
 * A piece longer than the width (no place to break it) stays whole on a line of its own.
 */
export function wrapValue(text: string, width: number): string[] {
  const out: string[] = [];
  for (const paragraph of text.split('\n')) {
    if (textWidth(paragraph) <= width) {
      out.push(paragraph);
      continue;
    }
    let line = '';
    for (const piece of paragraph.split(BREAK_AFTER)) {
      if (line !== '' && textWidth((line + piece).trimEnd()) > width) {
        out.push(line.trimEnd());
        line = piece.trimStart();
      } else line += piece;
    }
    out.push(line.trimEnd());
  }
  return out;
}
