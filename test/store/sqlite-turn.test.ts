// The SQLite store groups the row writes asked for in one turn of the event loop (claim, save,
// settle, release) into one transaction: each caller is answered after its commit, another
// connection sees all of them together, and a failure rejects every caller of that transaction
// and commits none of its writes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cd-sqlite-turn-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const scope = { baseUrl: 'b', keyId: 'k', products: undefined, include: undefined, maxCredits: undefined };
const fresh = { foundSince: 0, notFoundSince: 0 };
const answer = (n: number) => ({ found: true, record: { n }, credits: 1, boughtAt: Date.now(), run: null });

describe('the writes of one turn', () => {
  it('commit together, each caller answered once they are committed', async () => {
    const path = join(dir, 'turn.db');
    const store = await openSqliteStore(path);
    const id = await store.scopeId(scope);
    const other = new Database(path, { readonly: true });
    const count = (table: string) =>
      (other.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    try {
      const claims = ['a.com', 'b.com', 'c.com'].map((domain) => store.claim(id, domain, fresh));
      // Nothing is committed within the turn that asked.
      expect(count('claims')).toBe(0);
      expect((await Promise.all(claims)).map((c) => c.kind)).toEqual(['claimed', 'claimed', 'claimed']);
      expect(count('claims')).toBe(3);

      let saved = 0;
      const saves = ['a.com', 'b.com'].map((domain, n) =>
        store.save(id, domain, answer(n)).then(() => {
          saved++;
          // Answered after the commit: another connection already sees the answer.
          expect(other.prepare('SELECT domain FROM answers WHERE domain = ?').get(domain)).toBeDefined();
        }),
      );
      const released = store.release(id, 'c.com');
      expect(saved).toBe(0);
      await Promise.all([...saves, released]);
      expect([count('answers'), count('claims')]).toEqual([2, 0]);
    } finally {
      other.close();
      await store.close();
    }
  });

  it('fail together: every caller of the transaction is rejected, and none of its writes is kept', async () => {
    const path = join(dir, 'failing.db');
    const store = await openSqliteStore(path);
    const id = await store.scopeId(scope);
    try {
      await store.claim(id, 'kept.com', fresh);
      // A table the save needs is gone: the save fails, and with it the release of the same turn,
      // which alone would have succeeded.
      store.db.exec('DROP TABLE answers');
      const outcomes = await Promise.allSettled([
        store.release(id, 'kept.com'),
        store.save(id, 'other.com', answer(1)),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
      expect((outcomes[0] as PromiseRejectedResult).reason.code).toBe('store_unavailable');
      const claims = store.db.prepare('SELECT domain FROM claims ORDER BY domain').all();
      expect(claims).toEqual([{ domain: 'kept.com' }]);
    } finally {
      await store.close();
    }
  });
});
