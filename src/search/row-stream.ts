// The rows of a paging search as they arrive (docs/search.md): NDJSON and CSV are written page by
// page (the CSV header once); -o json is one document streamed as it grows, so stdout is one valid
// JSON document however the run ends; a table waits for the last page, since its column widths
// depend on every row.
import type { Row } from '../api/search.js';
import { csvCell, csvLine, renderCsv } from '../output/csv.js';
import { columnsOf, formatOf, printList } from '../output/format.js';
import type { Context } from '../types.js';
import type { RowSink } from './paging.js';

export interface RowStream extends RowSink {
  /** Rows written so far. */
  readonly written: number;
  /** Ends the output: closes the JSON document with `tail`, prints the table. */
  finish(tail: Record<string, unknown>): void;
}

/** `value` as JSON.stringify(..., null, 2) writes it `depth` levels deep in a document. */
function nested(value: unknown, depth: number): string {
  return JSON.stringify(value, null, 2).replaceAll('\n', `\n${'  '.repeat(depth)}`);
}

/** A member line of a top-level object, as JSON.stringify(document, null, 2) writes it. */
function member(key: string, value: unknown): string {
  return `  ${JSON.stringify(key)}: ${nested(value, 1)}`;
}

/**
 * -o json, streamed: the first page's members, then `"rows": [` and each row as it comes, then
 * the run's own members. The bytes are those of JSON.stringify(whole document, null, 2).
 */
function jsonStream(ctx: Context): RowStream {
  let started = false;
  let written = 0;
  return {
    get written() {
      return written;
    },
    start(head) {
      started = true;
      ctx.io.out(
        `{\n${Object.entries(head)
          .map(([k, v]) => `${member(k, v)},\n`)
          .join('')}  "rows": [`,
      );
    },
    rows(rows) {
      ctx.io.out(rows.map((row, i) => `${written + i === 0 ? '' : ','}\n    ${nested(row, 2)}`).join(''));
      written += rows.length;
    },
    finish(tail) {
      // A run whose first page failed has written nothing: stdout stays empty, as for one search.
      if (!started) return;
      const rest = Object.entries(tail).map(([k, v]) => `,\n${member(k, v)}`);
      ctx.io.out(`${written > 0 ? '\n  ' : ''}]${rest.join('')}\n}\n`);
    },
  };
}

function ndjsonStream(ctx: Context): RowStream {
  let written = 0;
  return {
    get written() {
      return written;
    },
    start() {},
    rows(rows) {
      ctx.io.out(rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
      written += rows.length;
    },
    finish() {},
  };
}

/** CSV: the columns are --include, else those of the first page's rows; the header once. */
function csvStream(ctx: Context, include: string[] | undefined): RowStream {
  const options = { raw: ctx.config.csvRaw };
  let columns = include;
  let started = false;
  let written = 0;
  return {
    get written() {
      return written;
    },
    start() {
      started = true;
    },
    rows(rows) {
      if (columns === undefined) columns = columnsOf(rows);
      const text = renderCsv(columns, rows, options);
      // renderCsv starts with the header line: kept for the first page only.
      ctx.io.out(written === 0 ? text : text.slice(csvLine(columns.map((c) => csvCell(c, options))).length));
      written += rows.length;
    },
    finish() {
      // No rows: the header alone when the columns are known, as one search prints it.
      if (started && written === 0 && columns !== undefined) ctx.io.out(renderCsv(columns, [], options));
    },
  };
}

function tableStream(ctx: Context, include: string[] | undefined): RowStream {
  const all: Row[] = [];
  return {
    get written() {
      return all.length;
    },
    start() {},
    rows(rows) {
      for (const row of rows) all.push(row);
    },
    finish() {
      printList(ctx, all, { columns: include });
    },
  };
}

export function rowStream(ctx: Context, include: readonly string[] | undefined): RowStream {
  const columns = include ? [...include] : undefined;
  switch (formatOf(ctx)) {
    case 'json':
      return jsonStream(ctx);
    case 'ndjson':
      return ndjsonStream(ctx);
    case 'csv':
      return csvStream(ctx, columns);
    default:
      return tableStream(ctx, columns);
  }
}
