// What `company-data spend` and `store info|prune|clear|export` share above the back ends: the
// store of a command that only inspects or removes, the shape of their output, and the refusals.
// The queries themselves are methods of the store (src/store/types.ts). They read and delete; they
// never buy, claim or reserve anything, and a store that does not exist is reported as empty
// rather than created (existingStore).
import { Problem, usageError } from '../problem.js';
import type { StoreHandle } from './handle.js';
import type {
  AnswerAges,
  AnswerStore,
  ExportedAnswer,
  LedgerEntry,
  SpendBy,
  SpendRow,
  SpendTotal,
  StoreCounts,
} from './types.js';

export { SPEND_GROUPS, type SpendBy, type SpendRow, type SpendTotal } from './types.js';

/**
 * The store of a command that only inspects or removes: undefined when its file does not exist
 * (nothing is created to say it is empty); a usage error with --no-store.
 */
export async function existingStore(
  store: StoreHandle,
  command: string,
): Promise<{ path: string; opened: AnswerStore | undefined }> {
  const path = storeFile(store, command);
  return { path, opened: await store.openIfExists() };
}

/** The store's location; a usage error with --no-store, naming what `command` cannot do. */
export function storeFile(store: StoreHandle, command: string): string {
  if (store.path !== false) return store.path;
  throw usageError(
    `there is no store to ${command}: --no-store is given`,
    'Drop --no-store (the store is $XDG_STATE_HOME/company-data/store.db, or --store <path>).',
  );
}

// ---------------------------------------------------------------------------------------------
// spend

/** The columns of `spend --by <by>`: the group's, then the sums. */
export function spendColumns(by: SpendBy): string[] {
  const group = by === 'key' ? ['base_url', 'key'] : [by];
  return [...group, 'charged', 'possibly_charged', 'calls'];
}

/**
 * `spend`'s rows, the same on every back end: the ledger's groups, with the holds of processes
 * that are gone counted as possibly charged (sweep() turns them into ledger entries; when the
 * store cannot be written they are read as they are), and one row per key (the account is the
 * key: its base URLs, however spelt, are listed together).
 */
export async function spendRowsOf(
  store: AnswerStore,
  by: SpendBy,
  since: number | undefined,
): Promise<SpendRow[]> {
  let lost: LedgerEntry[] = [];
  try {
    await store.sweep();
  } catch {
    lost = await store.lostHolds();
  }
  const rows = await store.spend(by, since);
  const groups = new Map<string, SpendRow & { urls?: Set<string> }>();
  const add = (group: Record<string, string>, urls: string[], sums: SpendTotal) => {
    const id = JSON.stringify(group);
    let row = groups.get(id);
    if (!row) {
      row = { ...group, charged: 0, possibly_charged: 0, calls: 0 };
      if (by === 'key') row.urls = new Set();
      groups.set(id, row);
    }
    for (const url of urls) row.urls?.add(url);
    row.charged += sums.charged;
    row.possibly_charged += sums.possibly_charged;
    row.calls += sums.calls;
  };
  for (const row of rows) {
    const { charged, possibly_charged, calls } = row;
    if (by === 'key')
      add({ key: String(row.key) }, [String(row.base_url)], { charged, possibly_charged, calls });
    else add({ [by]: String(row[by]) }, [], { charged, possibly_charged, calls });
  }
  for (const entry of lost) {
    if (since !== undefined && entry.at < since) continue;
    const iso = new Date(entry.at).toISOString();
    const group =
      by === 'key'
        ? { key: entry.keyId }
        : { [by]: by === 'month' ? iso.slice(0, 7) : by === 'day' ? iso.slice(0, 10) : entry.command };
    add(group, [entry.baseUrl], { charged: 0, possibly_charged: entry.credits, calls: 1 });
  }
  const merged = [...groups.values()].map(({ urls, ...row }) =>
    urls ? { base_url: [...urls].sort().join(' '), ...row } : row,
  );
  const name = by === 'key' ? 'key' : by;
  return merged.sort((a, b) =>
    String(a[name]) < String(b[name]) ? -1 : String(a[name]) > String(b[name]) ? 1 : 0,
  );
}

export function spendTotal(rows: readonly SpendTotal[]): SpendTotal {
  const total: SpendTotal = { charged: 0, possibly_charged: 0, calls: 0 };
  for (const row of rows) {
    total.charged += row.charged;
    total.possibly_charged += row.possibly_charged;
    total.calls += row.calls;
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// store info

export type StoreSummary = { path: string; exists: boolean } & StoreCounts;

const EMPTY: StoreCounts = {
  size_bytes: 0,
  schema_version: null,
  answers: 0,
  found: 0,
  not_found: 0,
  age_under_1_day: 0,
  age_1_to_7_days: 0,
  age_7_to_30_days: 0,
  age_over_30_days: 0,
  expired: 0,
  ledger_entries: 0,
};

/** What the store holds at `now`; zeros (and no schema) for a store that does not exist. */
export async function storeSummary(
  path: string,
  store: AnswerStore | undefined,
  now: number,
  ages: AnswerAges,
): Promise<StoreSummary> {
  return { path, exists: store !== undefined, ...(store ? await store.counts(now, ages) : EMPTY) };
}

// ---------------------------------------------------------------------------------------------
// store export

/** The columns of an export before the record's fields. */
export const EXPORT_COLUMNS = [
  'domain',
  'found',
  'bought_at',
  'credits',
  'base_url',
  'key',
  'products',
  'include',
  'max_credits',
] as const;

/** A stored answer as either back end reads it for `store export`. */
export interface ExportRow {
  domain: string;
  /** 1 or 0 from SQLite, a boolean from PostgreSQL. */
  found: number | boolean;
  /** JSON text from SQLite, parsed already from PostgreSQL. */
  record: string | Record<string, unknown> | null;
  credits: number;
  bought_at: number;
  base_url: string;
  key_id: string;
  selection: string;
}

/** A stored answer as `store export` writes it (both back ends keep the scope's selection as JSON). */
export function exportedOf(row: ExportRow): ExportedAnswer {
  const selection = JSON.parse(row.selection) as {
    products: string[] | null;
    include: string[] | null;
    max_credits: number | null;
  };
  return {
    domain: row.domain,
    found: row.found === 1 || row.found === true,
    bought_at: new Date(row.bought_at).toISOString(),
    credits: row.credits,
    base_url: row.base_url,
    key: row.key_id,
    products: selection.products,
    include: selection.include,
    max_credits: selection.max_credits,
    record: typeof row.record === 'string' ? (JSON.parse(row.record) as Record<string, unknown>) : row.record,
  };
}

/**
 * `store clear` and `prune` remove answers that a batch in progress counts on (it reads back what
 * it bought for the duplicates of a domain): while a live run holds the store, they are refused.
 */
export async function refuseWhileRunsLive(store: AnswerStore, command: string): Promise<void> {
  const owners = await store.liveRuns();
  if (owners.length === 0) return;
  throw new Problem({
    code: 'store_busy',
    title: 'A batch is using the store',
    detail: `${owners.join(', ')} ${owners.length === 1 ? 'is running a batch' : 'are running batches'} on ${store.path}; ${command} would make ${owners.length === 1 ? 'it' : 'them'} pay again for answers already bought`,
    source: 'client',
  });
}

/**
 * A store file that cannot be read (damaged pages, not a store) is moved aside, with its -wal and
 * -shm files, so that the next command starts a new one; nothing is deleted. Returns the new name.
 */
export async function moveAside(path: string, now: number): Promise<string> {
  const { rename } = await import('node:fs/promises');
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const aside = `${path}.damaged-${stamp}`;
  for (const suffix of ['', '-wal', '-shm']) {
    await rename(`${path}${suffix}`, `${aside}${suffix}`).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  return aside;
}
