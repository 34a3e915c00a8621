// The queries of `spend` and `store ...` (src/store/admin.ts) against a real store file: the
// file's permissions, months and days in UTC, what prune removes agreeing with what a lookup
// would still reuse, lapsed claims and reservations, and clear giving the space back.
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeSummary } from '../../src/store/admin.js';
import { DEFAULT_MAX_AGE_MS, DEFAULT_NOT_FOUND_MAX_AGE_MS, freshnessAt } from '../../src/store/location.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import { FIXED_NOW } from '../helpers/in-process.js';
import { fillExample, SCOPE_PROFILE } from '../helpers/store-cases.js';

const AGES = { maxAgeMs: DEFAULT_MAX_AGE_MS, notFoundMaxAgeMs: DEFAULT_NOT_FOUND_MAX_AGE_MS };

let dir: string;
let path: string;
let store: SqliteStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cd-store-admin-'));
  path = join(dir, 'state', 'store.db');
  store = await openSqliteStore(path);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the store file', () => {
  it('is 0600 in a 0700 directory, whatever the umask', async () => {
    await store.close();
    rmSync(join(dir, 'state'), { recursive: true });
    const umask = process.umask(0);
    try {
      store = await openSqliteStore(path);
    } finally {
      process.umask(umask);
    }
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'state')).mode & 0o777).toBe(0o700);
  });

  it('an existing store readable by others becomes 0600 when opened', async () => {
    await store.close();
    chmodSync(path, 0o644);
    store = await openSqliteStore(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});

describe('spend', () => {
  const entry = (at: string, credits: number, outcome: 'charged' | 'unknown' = 'charged') =>
    store.settle({
      entry: { at: Date.parse(at), baseUrl: 'b', keyId: 'k', command: 'enrich', credits, outcome },
    });

  it('puts an instant in its UTC month and day, and --since counts from its first millisecond', async () => {
    await entry('2026-10-31T23:59:59.999Z', 1);
    await entry('2026-11-01T00:00:00.000Z', 2);
    await entry('2026-11-01T23:30:00.000Z', 4, 'unknown');
    expect(await store.spend('month', undefined)).toEqual([
      { month: '2026-10', charged: 1, possibly_charged: 0, calls: 1 },
      { month: '2026-11', charged: 2, possibly_charged: 4, calls: 2 },
    ]);
    expect(await store.spend('day', Date.parse('2026-11-01T00:00:00Z'))).toEqual([
      { day: '2026-11-01', charged: 2, possibly_charged: 4, calls: 2 },
    ]);
  });
});

describe('prune', () => {
  it('removes exactly what a lookup would no longer reuse at the same instant', async () => {
    const scope = await store.scopeId(SCOPE_PROFILE);
    const ages = [
      0,
      1,
      DEFAULT_NOT_FOUND_MAX_AGE_MS,
      DEFAULT_NOT_FOUND_MAX_AGE_MS + 1,
      DEFAULT_MAX_AGE_MS,
      DEFAULT_MAX_AGE_MS + 1,
    ];
    for (const found of [true, false]) {
      for (const age of ages) {
        await store.save(scope, `${found ? 'f' : 'n'}${age}.example`, {
          found,
          record: found ? { age } : null,
          credits: found ? 1 : 0,
          boughtAt: FIXED_NOW - age,
          run: null,
        });
      }
    }
    const fresh = freshnessAt(FIXED_NOW, {});
    const all = store.db.prepare('SELECT domain FROM answers ORDER BY domain').pluck().all() as string[];
    const reusable = all.filter((domain) => store.find(scope, domain, fresh) !== undefined);

    expect(await store.prune(FIXED_NOW, AGES)).toEqual({ found: 1, not_found: 3 });
    expect(store.db.prepare('SELECT domain FROM answers ORDER BY domain').pluck().all()).toEqual(reusable);
  });

  it('drops the claims whose lease ran out, turns lapsed month holds into possibly-charged entries, and keeps the live ones', async () => {
    const now = Date.now();
    const claim = store.db.prepare(
      'INSERT INTO claims (scope, domain, owner, expires_at) VALUES (1, ?, ?, ?)',
    );
    claim.run('lapsed.example', 'elsewhere\t1\tabc', now - 1000);
    claim.run('live.example', 'elsewhere\t2\tdef', now + 60_000);
    const reserve = store.db.prepare(
      "INSERT INTO reservations (base_url, key_id, owner, amount, expires_at) VALUES ('b', 'k', 'o', ?, ?)",
    );
    reserve.run(10, now - 1000);
    reserve.run(20, now + 60_000);

    await store.prune(FIXED_NOW, AGES);

    expect(store.db.prepare('SELECT domain FROM claims').pluck().all()).toEqual(['live.example']);
    expect(store.db.prepare('SELECT amount FROM reservations').pluck().all()).toEqual([20]);
    // The lapsed hold is not dropped: its owner is gone, so it may have been charged.
    expect(store.db.prepare('SELECT credits, outcome FROM ledger').all()).toEqual([
      { credits: 10, outcome: 'unknown' },
    ]);
  });
});

describe('clear', () => {
  it('keeps the ledger unless asked, and gives the space back', async () => {
    await fillExample(store);
    const scope = await store.scopeId(SCOPE_PROFILE);
    const padding = 'x'.repeat(2000);
    for (let i = 0; i < 500; i++) {
      await store.save(scope, `filler-${i}.example`, {
        found: true,
        record: { padding },
        credits: 1,
        boughtAt: FIXED_NOW,
        run: null,
      });
    }
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    const before = await storeSummary(path, store, FIXED_NOW, AGES);
    expect(before.answers).toBe(505);

    expect(await store.clear(false)).toEqual({ answers: 505, ledger_entries: 0 });
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    const after = await storeSummary(path, store, FIXED_NOW, AGES);
    expect(after).toMatchObject({ answers: 0, ledger_entries: 5 });
    expect(after.size_bytes).toBeLessThan(before.size_bytes / 10);

    expect(await store.clear(true)).toEqual({ answers: 0, ledger_entries: 5 });
    expect((await storeSummary(path, store, FIXED_NOW, AGES)).ledger_entries).toBe(0);
  });
});

describe('storeSummary', () => {
  it('of a file that is not there: zeros, no schema, nothing created', async () => {
    const missing = join(dir, 'missing.db');
    expect(await storeSummary(missing, undefined, FIXED_NOW, AGES)).toMatchObject({
      exists: false,
      size_bytes: 0,
      schema_version: null,
      answers: 0,
    });
    expect(existsSync(missing)).toBe(false);
  });
});
