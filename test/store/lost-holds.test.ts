// `spend` counts every hold of a process that is gone, also while the store cannot be written: the
// holds are then read as they are (lostHolds) rather than turned into ledger entries (sweep).
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spendRowsOf } from '../../src/store/admin.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import type { AnswerStore } from '../../src/store/types.js';

let dir: string | undefined;
let store: SqliteStore | undefined;

afterEach(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  store = dir = undefined;
});

/** A process id no process has (above Linux's largest): its owner is gone. */
const GONE = `${hostname()}\t4194999\tdeadbeef`;
const AT = Date.parse('2026-11-20T10:00:00Z');

async function storeWithLostHolds(): Promise<SqliteStore> {
  dir = mkdtempSync(join(tmpdir(), 'cd-lost-holds-'));
  store = await openSqliteStore(join(dir, 'store.db'));
  const put = store.db.prepare(
    'INSERT INTO reservations (base_url, key_id, owner, amount, expires_at, command, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  put.run('http://a.example', 'key1', GONE, 3, Date.now() + 60_000, 'enrich', AT);
  put.run('http://b.example', 'key1', GONE, 5, Date.now() + 60_000, 'search', AT);
  store.db
    .prepare('INSERT INTO ledger (at, base_url, key_id, command, credits, outcome) VALUES (?, ?, ?, ?, ?, ?)')
    .run(AT, 'http://a.example', 'key1', 'enrich', 2, 'charged');
  return store;
}

/** The store as `spend` meets it on a full disk: every write refused. */
function unwritable(opened: SqliteStore): AnswerStore {
  return Object.create(opened, {
    sweep: { value: () => Promise.reject(new Error('database or disk is full')) },
  }) as AnswerStore;
}

describe('spend and the holds of processes that are gone', () => {
  it('reads them as possibly charged when the store cannot be written', async () => {
    const opened = await storeWithLostHolds();
    expect(await spendRowsOf(unwritable(opened), 'key', undefined)).toEqual([
      {
        base_url: 'http://a.example http://b.example',
        key: 'key1',
        charged: 2,
        possibly_charged: 8,
        calls: 3,
      },
    ]);
    expect(await spendRowsOf(unwritable(opened), 'command', undefined)).toEqual([
      { command: 'enrich', charged: 2, possibly_charged: 3, calls: 2 },
      { command: 'search', charged: 0, possibly_charged: 5, calls: 1 },
    ]);
    // Nothing was written: the holds are still there for a store that can be written.
    expect((opened.db.prepare('SELECT COUNT(*) AS n FROM reservations').get() as { n: number }).n).toBe(2);
  });

  it('turns them into ledger entries when it can, with the same totals', async () => {
    const opened = await storeWithLostHolds();
    expect(await spendRowsOf(opened, 'month', undefined)).toEqual([
      { month: '2026-11', charged: 2, possibly_charged: 8, calls: 3 },
    ]);
    expect((opened.db.prepare('SELECT COUNT(*) AS n FROM reservations').get() as { n: number }).n).toBe(0);
  });
});
