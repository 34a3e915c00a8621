// Reading an answer by meaning, for every adapter of src/api/: lists of rows under the names the
// layouts of docs/contract.md use ("Open shapes of the answers"), figures sent as numbers or as
// text, and the problem of a list that cannot be found.
import { Problem } from '../problem.js';

export type Row = Record<string, unknown>;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Where a list of rows is looked for, in this order (docs/contract.md, "Open shapes"). */
export const ROW_MEMBERS = ['rows', 'results', 'companies', 'hits', 'items', 'records', 'data', 'matches'];

function asRows(list: unknown[]): Row[] | undefined {
  if (list.every(isPlainObject)) return list as Row[];
  // A bare list of domains is still a list of companies.
  if (list.every((item) => typeof item === 'string')) return list.map((domain) => ({ domain }));
  return undefined;
}

/**
 * Finds the row array of a response: the body itself when it is an array, a known member name
 * (one level of `data`/`result` wrapping allowed), else the first member holding objects, else the
 * one member holding a list (an empty list of rows under a name not known here).
 */
export function findRows(
  body: unknown,
  names: readonly string[] = ROW_MEMBERS,
): { key?: string; rows: Row[] } | undefined {
  if (Array.isArray(body)) {
    const rows = asRows(body);
    return rows ? { rows } : undefined;
  }
  if (!isPlainObject(body)) return undefined;
  for (const name of names) {
    const value = body[name];
    if (Array.isArray(value)) {
      const rows = asRows(value);
      if (rows) return { key: name, rows };
    }
  }
  for (const wrapper of ['data', 'result']) {
    const inner = body[wrapper];
    if (isPlainObject(inner)) {
      const found = findRows(inner, names);
      if (found) return { key: wrapper, rows: found.rows };
    }
  }
  const lists = Object.entries(body).filter(([, value]) => Array.isArray(value)) as [string, unknown[]][];
  for (const [key, value] of lists) {
    if (value.length > 0 && value.every(isPlainObject)) return { key, rows: value as Row[] };
  }
  if (lists.length === 1 && lists[0][1].length === 0) return { key: lists[0][0], rows: [] };
  return undefined;
}

/** A number, or a number sent as text ("30", " 0.25 "); anything else is undefined. */
export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(value)) {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** The first of `names` holding a number (or a number as text). */
export function numberMember(body: Record<string, unknown>, names: readonly string[]): number | undefined {
  for (const name of names) {
    const n = asNumber(body[name]);
    if (n !== undefined) return n;
  }
  return undefined;
}

/** The problem for an answer whose list could not be found: the endpoint and the members looked for. */
export function noListProblem(endpoint: string, what: string, looked: readonly string[]): Problem {
  return new Problem({
    code: 'unexpected_response',
    title: 'Unexpected response',
    detail: `${endpoint}: the answer has no list of ${what} (looked for ${looked.join(', ')}, at the top level or under data or result)`,
    source: 'server',
    retryable: false,
    remedy:
      'company-data does not know this layout of the service: report it with the output of `company-data -v` for the same command (README, "Troubleshooting").',
  });
}

/**
 * The members of `source` with each group's members in its place, one level deep: a record or a
 * row whose fields come grouped (`{ "profile": { "company_name": ... }, "tech": {...} }`) read as
 * a flat one. A member named twice keeps its first value. The result has no prototype: names come
 * from the service, and `__proto__` is a name like any other.
 */
export function flattenGroups(
  source: Row,
  isGroup: (key: string, value: Row) => boolean,
  skip: { top?: (key: string) => boolean; inner?: (key: string) => boolean } = {},
): Row {
  const flat: Row = Object.create(null);
  const put = (key: string, value: unknown) => {
    if (!Object.hasOwn(flat, key)) flat[key] = value;
  };
  for (const [key, value] of Object.entries(source)) {
    if (skip.top?.(key)) continue;
    if (isPlainObject(value) && isGroup(key, value)) {
      for (const [inner, innerValue] of Object.entries(value))
        if (!skip.inner?.(inner)) put(inner, innerValue);
    } else put(key, value);
  }
  return flat;
}
