// --merge and --map: results written into the input's own columns instead of appended beside
// them, for a CRM export that already has `country` or `Employee Range`. A result field meets the
// input column of the same name, ignoring case, spaces and underscores (`employee_range` and
// `Employee Range`), or the column --map names for it. The domain column the run looks up is never
// a target: it is the row's key. A value the answer does not have never erases a cell.
import { InvalidArgumentError } from 'commander';
import { usageError } from '../problem.js';

export const MERGE_MODES = ['append', 'fill-empty', 'overwrite'] as const;
export type MergeMode = (typeof MERGE_MODES)[number];

export interface MergeOptions {
  mode: MergeMode;
  /** --map field=Column, by field. */
  map: Record<string, string>;
}

/** What a column name is compared by. */
export function columnKey(name: string): string {
  return name.toLowerCase().replace(/[\s_]+/g, '');
}

/** --map's parser: repeated or comma-separated `field=Column` pairs. */
export function parseMapOption(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const map = { ...previous };
  for (const pair of value.split(',')) {
    const at = pair.indexOf('=');
    const field = pair.slice(0, at).trim();
    const column = pair.slice(at + 1).trim();
    if (at <= 0 || field === '' || column === '')
      throw new InvalidArgumentError(`--map takes field=Column (as country=Land), got "${pair}"`);
    map[field] = column;
  }
  return map;
}

/**
 * Checks --map against the input's header and the fields the service knows, before anything is
 * bought: a mistyped column or field would otherwise append silently.
 */
export function checkMerge(
  merge: MergeOptions,
  header: string[] | null,
  knownFields: ReadonlySet<string>,
  domainColumn: number,
): void {
  const entries = Object.entries(merge.map);
  if (entries.length > 0 && merge.mode === 'append')
    throw usageError(
      '--map names the columns that --merge fills, and --merge is append',
      'Add --merge fill-empty (or --merge overwrite).',
    );
  if (merge.mode === 'append') return;
  if (header === null)
    throw usageError(
      '--merge needs an input with a header row: a plain list of domains has no columns to fill',
      'Leave out --merge: the results are appended as new columns.',
    );
  for (const [field, column] of entries) {
    if (!knownFields.has(field))
      throw usageError(
        `--map ${field}=${column}: ${field} is not a field of the service`,
        'See `company-data fields`.',
      );
    const at = header.indexOf(column);
    const loose = at === -1 ? header.findIndex((name) => columnKey(name) === columnKey(column)) : at;
    if (loose === -1)
      throw usageError(
        `--map ${field}=${column}: the input has no column ${JSON.stringify(column)}; its columns are ${header.map((name) => JSON.stringify(name)).join(', ')}`,
        'Name one of the columns after the =.',
      );
    if (loose === domainColumn)
      throw usageError(
        `--map ${field}=${column}: ${column} is the domain column the run looks up; it is never filled`,
      );
  }
}

/** The input column each merged field goes into, by field; the fields not in it are appended. */
export function mergeTargets(
  header: string[],
  fields: readonly string[],
  merge: MergeOptions | undefined,
  domainColumn: number,
): Map<string, number> {
  const targets = new Map<string, number>();
  if (!merge || merge.mode === 'append') return targets;
  const taken = new Set<number>([domainColumn]);
  const place = (field: string, at: number) => {
    if (at === -1 || taken.has(at) || targets.has(field)) return;
    targets.set(field, at);
    taken.add(at);
  };
  for (const [field, column] of Object.entries(merge.map)) {
    if (!fields.includes(field)) continue;
    const exact = header.indexOf(column);
    place(field, exact !== -1 ? exact : header.findIndex((name) => columnKey(name) === columnKey(column)));
  }
  for (const field of fields)
    place(
      field,
      header.findIndex((name) => columnKey(name) === columnKey(field)),
    );
  return targets;
}

/** Whether an answer's value goes into a cell holding `cell`. */
export function replaces(mode: MergeMode, cell: string, value: unknown): boolean {
  if (value === null || value === undefined || value === '') return false;
  return mode === 'overwrite' || cell.trim() === '';
}
