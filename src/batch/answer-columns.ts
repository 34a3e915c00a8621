// Result columns taken from the answers, for a products catalog that marks no product as default
// (the spec leaves the default selection "not shown") and a batch without --products or
// --include: which fields a lookup returns is known only once the service has answered.
//
// The header waits for the first found answer in input order that shows a field besides `domain`.
// The columns are then every field of the products that answer's fields belong to, in catalog
// order (what a catalog marking those products as default gives), then any field the catalog
// does not list, in the service's order. The rows before it are held (they are in input order, so
// a resumed run, reading the same answers from the store, decides the same columns). A later
// answer with a value outside the columns stops the run rather than drop what was bought.
import { Problem } from '../problem.js';
import type { Selection } from '../spend/selection.js';
import { type BatchWriter, type BatchWriterOptions, createBatchWriter, type RowResult } from './output.js';

/**
 * Rows held while no answer has shown its fields. Past it the columns are every field of the
 * catalog, so that memory stays bounded on a file of domains that are not found.
 */
export const HOLD_LIMIT = 10_000;

type Catalog = Pick<Selection, 'products'>;

/** Every field of the given products, in catalog order, `domain` first unless a product places it. */
function fieldsOf(products: Catalog['products']): string[] {
  const fields: string[] = [];
  for (const p of products) for (const f of p.fields) if (!fields.includes(f)) fields.push(f);
  if (!fields.includes('domain')) fields.unshift('domain');
  return fields;
}

/**
 * The columns a found record shows: the fields of the products it returned, then fields the
 * catalog does not list, in the record's order. Undefined while it shows nothing but `domain`.
 */
export function columnsOfAnswer(catalog: Catalog, record: Record<string, unknown>): string[] | undefined {
  const names = Object.keys(record).filter((name) => name !== 'domain');
  if (names.length === 0) return undefined;
  const owners = catalog.products.filter((p) => p.fields.some((f) => f !== 'domain' && names.includes(f)));
  const columns = fieldsOf(owners);
  for (const name of names) if (!columns.includes(name)) columns.push(name);
  return columns;
}

/** The columns when no answer showed any: every field the catalog lists. */
export function catalogColumns(catalog: Catalog): string[] {
  return fieldsOf(catalog.products);
}

/** A value the columns have no place for: stop rather than drop what was bought. */
function outsideColumns(catalog: Catalog, field: string, columns: readonly string[]): Problem {
  const owner = catalog.products.find((p) => p.fields.includes(field))?.id;
  return new Problem({
    code: 'unexpected_fields',
    title: 'Unexpected fields',
    detail:
      `an answer carries \`${field}\`${owner ? ` (product ${owner})` : ''}, which is not among the result columns ` +
      `(${columns.join(', ')}) that the first answer showed; the products catalog marks no product as default, ` +
      'and the answers did not keep to one selection; no output was written',
    source: 'server',
  });
}

/**
 * A BatchWriter whose result columns come from the answers (see the top of this file). Throws
 * `unexpected_fields` from add() for an answer with a value outside the columns.
 */
export function createAnswerColumnsWriter(
  options: Omit<BatchWriterOptions, 'resultFields'>,
  catalog: Catalog,
  holdLimit = HOLD_LIMIT,
  create: (options: BatchWriterOptions) => BatchWriter = createBatchWriter,
): BatchWriter {
  let inner: BatchWriter | undefined;
  let known: Set<string> | undefined;
  let held: Array<{ cells: string[]; result: RowResult }> = [];

  const check = (result: RowResult): void => {
    if (result.found !== true || !result.record || !known) return;
    for (const [field, value] of Object.entries(result.record)) {
      if (value !== null && value !== undefined && !known.has(field))
        throw outsideColumns(catalog, field, [...known]);
    }
  };

  /** Fixes the columns and writes the rows held so far. */
  const decide = async (resultFields: string[]): Promise<BatchWriter> => {
    const writer = create({ ...options, resultFields });
    inner = writer;
    known = new Set(resultFields);
    const rows = held;
    held = [];
    for (const row of rows) {
      check(row.result);
      const writing = writer.add(row.cells, row.result);
      if (writing) await writing;
    }
    return writer;
  };

  const add = (cells: string[], result: RowResult): Promise<void> | undefined => {
    if (inner) {
      check(result);
      return inner.add(cells, result);
    }
    const columns =
      result.found === true && result.record ? columnsOfAnswer(catalog, result.record) : undefined;
    held.push({ cells, result });
    if (columns) return decide(columns).then(() => {});
    if (held.length >= holdLimit) return decide(catalogColumns(catalog)).then(() => {});
    return undefined;
  };

  return {
    get columns() {
      return inner?.columns ?? [];
    },
    add,
    async write({ cells, result }) {
      await add(cells, result);
    },
    flush: () => inner?.flush() ?? Promise.resolve(),
    merged: () => inner?.merged() ?? {},
    async end() {
      await (inner ?? (await decide(catalogColumns(catalog)))).end();
    },
  };
}

/**
 * The batch's writer: the selection's columns when they are known, else the answers'. A workbook
 * output loads its library first (src/workbook/exceljs.ts, bundled apart).
 */
export async function writerFor(
  selection: Selection,
  options: Omit<BatchWriterOptions, 'resultFields'>,
): Promise<BatchWriter> {
  let create = createBatchWriter;
  if (options.format === 'xlsx') {
    const { createWorkbookWriter } = await import('./workbook-output.js');
    const library = await import('../workbook/exceljs.js');
    create = (all) => createWorkbookWriter(all, library);
  }
  if (selection.resultFields) return create({ ...options, resultFields: selection.resultFields });
  return createAnswerColumnsWriter(options, selection, HOLD_LIMIT, create);
}
