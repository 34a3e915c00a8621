// What a batch writes, from --output's extension and -o/--format: `out.xlsx` is a workbook,
// `out.json` JSON, and so on, so that a file is what its name says (a CSV named .xlsx is refused
// by the spreadsheet that opens it). docs/batch.md, "Output formats".
import { extname } from 'node:path';
import { Problem, usageError } from '../problem.js';
import type { Context, Format } from '../types.js';
import type { BatchFormat } from './output.js';

const BY_EXTENSION: Record<string, BatchFormat> = {
  '.csv': 'csv',
  '.tsv': 'tsv',
  '.tab': 'tsv',
  '.json': 'json',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
  '.xlsx': 'xlsx',
};

/** Spreadsheet formats a batch does not write: refused rather than written as something else. */
const NOT_WRITTEN = new Set(['.xls', '.xlsm', '.xlsb', '.ods', '.fods', '.numbers']);

/** The -o value each extension's format agrees with (a TSV is CSV with tabs). */
const AS_FORMAT: Record<BatchFormat, Format | undefined> = {
  csv: 'csv',
  tsv: 'csv',
  json: 'json',
  ndjson: 'ndjson',
  xlsx: undefined,
};

/** CSV unless a format was chosen explicitly; a table makes no sense for a file of rows. */
export function batchFormat(ctx: Context): Exclude<Format, 'table'> {
  const { value, source } = ctx.config.format;
  if (source === 'default' || source === 'sandbox') return 'csv';
  if (value === 'table') {
    if (source === 'flag') {
      throw new Problem({
        code: 'usage_error',
        title: 'Usage error',
        detail: 'batch output is csv, json or ndjson (--format table is for single lookups)',
        source: 'client',
      });
    }
    return 'csv';
  }
  return value;
}

/**
 * The format of a batch's output: its file's extension when it has a known one, else -o/--format
 * (csv by default). An -o given on the command line that disagrees with the extension is refused;
 * one from COMPANY_DATA_FORMAT gives way to the extension, as a setting for every command should.
 */
export function outputFormatOf(ctx: Context, output: string | undefined): BatchFormat {
  if (output === undefined || output === '-') return batchFormat(ctx);
  const extension = extname(output).toLowerCase();
  if (NOT_WRITTEN.has(extension))
    throw usageError(
      `--output ${output}: company-data writes workbooks as .xlsx, not ${extension}`,
      'Name the output .xlsx (or .csv, .tsv, .json, .ndjson); spreadsheet programs open .xlsx.',
    );
  const byName = BY_EXTENSION[extension];
  if (byName === undefined) return batchFormat(ctx);
  const { value, source } = ctx.config.format;
  if (source === 'flag' && value !== AS_FORMAT[byName])
    throw usageError(
      `--format ${value} and --output ${output} disagree: the extension says ${byName}`,
      `Leave out --format (the extension decides), or name the output .${value}.`,
    );
  return byName;
}
