// The columns of a batch output and the values of each of its rows, for CSV, JSON and workbook
// outputs alike: every input column, then the result columns (renamed on a clash with an input
// column), with --merge's fields written into the input's own columns instead (merge.ts).
import { type MergeOptions, mergeTargets, replaces } from './merge.js';
import type { RowResult } from './output.js';

const PLAIN_LIST_HEADER = ['domain'];
const RESULT_PREFIX = 'cd_';

/**
 * Result column names that never shadow an input column (case-insensitive): `cd_<name>`, then
 * `cd_2_<name>`, `cd_3_<name>` ... until the name is free.
 */
export function resultColumnNames(inputHeader: string[], resultNames: string[]): string[] {
  const taken = new Set(inputHeader.map((name) => name.toLowerCase()));
  return resultNames.map((name) => {
    let candidate = name;
    for (let n = 1; taken.has(candidate.toLowerCase()); n++) {
      candidate = n === 1 ? `${RESULT_PREFIX}${name}` : `${RESULT_PREFIX}${n}_${name}`;
    }
    taken.add(candidate.toLowerCase());
    return candidate;
  });
}

/** JSON member names for the input columns: a repeated header name gets `_2`, `_3` ... */
function uniqueKeys(header: string[]): string[] {
  const seen = new Set<string>();
  return header.map((name) => {
    let key = name;
    for (let n = 2; seen.has(key); n++) key = `${name}_${n}`;
    seen.add(key);
    return key;
  });
}

function resultValues(result: RowResult, fields: string[]): unknown[] {
  return [
    result.found,
    ...fields.map((field) => result.record?.[field] ?? null),
    result.credits_charged,
    result.bought_at,
    result.error_code,
    result.error_detail,
  ];
}

/** The columns of a batch output and the values of each row: CSV, JSON and workbooks alike. */
export interface RowShape {
  columns: string[];
  /** JSON member names: input columns made unique, then the result columns. */
  jsonKeys: string[];
  inputWidth: number;
  /** The result fields appended after the input columns (those not merged into one). */
  appended: string[];
  /** The input part of a row: its cells, with merged values in place (`replaced` marks them). */
  inputOf(cells: string[], result: RowResult): { values: unknown[]; replaced: boolean[] | undefined };
  /** The appended part of a row. */
  resultOf(result: RowResult): unknown[];
  merged(): Record<string, { filled: number; changed: number }>;
}

export function rowShape(options: {
  inputHeader: string[] | null;
  resultFields: string[];
  merge?: MergeOptions;
  domainColumn?: number;
}): RowShape {
  const inputHeader = options.inputHeader ?? PLAIN_LIST_HEADER;
  const targets = mergeTargets(
    inputHeader,
    options.resultFields,
    options.merge,
    options.domainColumn ?? (options.inputHeader === null ? 0 : -1),
  );
  const appended = options.resultFields.filter((field) => !targets.has(field));
  const resultNames = resultColumnNames(inputHeader, [
    'found',
    ...appended,
    'credits_charged',
    'bought_at',
    'error_code',
    'error_detail',
  ]);
  const counts: Record<string, { filled: number; changed: number }> = {};
  for (const at of targets.values()) counts[inputHeader[at]] = { filled: 0, changed: 0 };
  const mode = options.merge?.mode ?? 'append';
  const width = inputHeader.length;
  return {
    columns: [...inputHeader, ...resultNames],
    jsonKeys: [...uniqueKeys(inputHeader), ...resultNames],
    inputWidth: width,
    appended,
    inputOf(cells, result) {
      const fitted = cells.length === width ? cells : toWidth(cells, width);
      if (targets.size === 0 || result.found !== true || !result.record)
        return { values: fitted, replaced: undefined };
      const values: unknown[] = [...fitted];
      const replaced: boolean[] = [];
      for (const [field, at] of targets) {
        const value = result.record[field];
        if (!replaces(mode, fitted[at], value)) continue;
        const count = counts[inputHeader[at]];
        if (fitted[at].trim() === '') count.filled++;
        else if (String(value) !== fitted[at]) count.changed++;
        values[at] = value;
        replaced[at] = true;
      }
      return { values, replaced };
    },
    resultOf: (result) => resultValues(result, appended),
    merged: () => counts,
  };
}

/** Keeps the output rectangular if a caller passes a row of another width (input.ts never does). */
function toWidth(cells: string[], width: number): string[] {
  if (cells.length > width) return cells.slice(0, width);
  return [...cells, ...Array<string>(width - cells.length).fill('')];
}
