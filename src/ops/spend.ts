// The spend ledger as an operation reads it: charged and possibly charged per month, day, command
// or key, since a date. The CLI's `spend` prints it; the mcp server's `spend` tool returns it.
import { usageError } from '../problem.js';
import type { SpendBy, SpendRow, SpendTotal } from '../store/admin.js';
import type { Context } from '../types.js';

export interface SpendOptions {
  since?: Since;
  by: SpendBy;
}

/** `--since`: the first instant counted (UTC), and the date it names. */
export interface Since {
  from: number;
  label: string;
}

/** YYYY-MM-DD or YYYY-MM, a real calendar date, read as the start of that day or month in UTC. */
export function parseSince(raw: string): Since {
  const match = /^(\d{4})-(\d{2})(?:-(\d{2}))?$/.exec(raw.trim());
  if (match) {
    const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3] ?? '1')];
    const from = Date.UTC(year, month - 1, day);
    const date = new Date(from);
    if (date.getUTCMonth() === month - 1 && date.getUTCDate() === day && date.getUTCFullYear() === year) {
      return { from, label: date.toISOString().slice(0, 10) };
    }
  }
  throw usageError(`--since takes a date as YYYY-MM-DD or YYYY-MM (UTC), got "${raw}"`);
}

/** What `spend` shows: the ledger's rows and total, and the message for an empty ledger. */
export interface SpendReport {
  since: string | null;
  by: SpendBy;
  rows: SpendRow[];
  total: SpendTotal;
  emptyMessage: string;
}

/** The ledger of the store as `spend` reads it (also the mcp server's `spend` tool). */
export async function readSpend(ctx: Context, options: SpendOptions): Promise<SpendReport> {
  const admin = await import('../store/admin.js');
  const { path, opened } = await admin.existingStore(ctx.store, 'read the spend ledger of');
  // Holds of processes that are gone (killed while a request was in flight) count as possibly
  // charged, also when the store cannot be written (src/store/admin.ts).
  const rows = opened ? await admin.spendRowsOf(opened, options.by, options.since?.from) : [];
  const total = admin.spendTotal(rows);
  const since = options.since?.label ?? null;
  const emptyMessage = opened
    ? `No charges recorded${since ? ` since ${since}` : ''} in ${path}.`
    : `No charges recorded: there is no store at ${path} yet.`;
  return { since, by: options.by, rows, total, emptyMessage };
}
