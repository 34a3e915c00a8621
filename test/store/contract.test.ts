// The rules every back end of the result store follows (src/store/rules.ts), as identical cases run
// against SQLite and a real PostgreSQL server (test/helpers/store-backends.ts): claims between
// owners and their takeover, freshness, runs resumed or abandoned, the month cap, settle once,
// zero entries skipped, lost holds possibly charged, the spend groups, the `store info` buckets,
// export, prune and clear. Two stores on one place stand for two processes, or two hosts. What is
// a back end's own (file permissions, WAL, the writes of one turn, advisory locks, a server that
// goes away) stays in sqlite*.test.ts and postgres.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/problem.js';
import { BACKENDS, type Place } from '../helpers/store-backends.js';
import { answer, charge, FEB_END, fresh, hold, JAN_END, scope } from '../helpers/store-values.js';

const DAY = 86_400_000;
const me = `process ${process.pid}`;
const LEDGER = 'SELECT credits, outcome, command, at FROM $S.ledger ORDER BY id';
const COUNT = (table: string) => `SELECT CAST(COUNT(*) AS INTEGER) AS n FROM $S.${table}`;

for (const backend of BACKENDS) {
  describe.skipIf(backend.missing())(`the store contract on ${backend.name}`, () => {
    beforeAll(() => backend.start());
    afterAll(() => backend.stop());

    /** A new place, and `n` stores on it (the first one opened it). */
    async function place(n: number): Promise<[Place, ...Awaited<ReturnType<Place['open']>>[]]> {
      const p = await backend.place();
      const stores = [];
      for (let i = 0; i < n; i++) stores.push(await p.open());
      return [p, ...stores];
    }

    describe('claims', () => {
      it('a live owner’s claim makes another wait; an answer ends the wait; a release frees it', async () => {
        const [, mine, theirs] = await place(2);
        const a = await mine.scopeId(scope);
        expect(await theirs.scopeId(scope)).toBe(a);
        expect(await mine.claim(a, 'x.com', fresh)).toEqual({ kind: 'claimed' });
        expect(await theirs.claim(a, 'x.com', fresh)).toEqual({ kind: 'busy' });
        await mine.save(a, 'x.com', answer(5));
        expect(await theirs.claim(a, 'x.com', fresh)).toEqual({ kind: 'answered', answer: answer(5) });
        expect(await theirs.find(a, 'x.com', fresh)).toEqual(answer(5));
        expect(await mine.claim(a, 'y.com', fresh)).toEqual({ kind: 'claimed' });
        await mine.release(a, 'y.com');
        expect(await theirs.claim(a, 'y.com', fresh)).toEqual({ kind: 'claimed' });
      });

      it('are taken over from an owner that closed, one whose lease ran out, and at once from one killed', async () => {
        const [p, other, closing, stalled, killed] = await place(4);
        const a = await other.scopeId(scope);
        expect(await closing.claim(a, 'closed.com', fresh)).toEqual({ kind: 'claimed' });
        expect(await other.claim(a, 'closed.com', fresh)).toEqual({ kind: 'busy' });
        await closing.close();
        expect(await other.claim(a, 'closed.com', fresh)).toEqual({ kind: 'claimed' });

        expect(await stalled.claim(a, 'stalled.com', fresh)).toEqual({ kind: 'claimed' });
        await p.sql("UPDATE $S.claims SET expires_at = 0 WHERE domain = 'stalled.com'");
        expect(await other.claim(a, 'stalled.com', fresh)).toEqual({ kind: 'claimed' });

        expect(await killed.claim(a, 'killed.com', fresh)).toEqual({ kind: 'claimed' });
        expect(await other.claim(a, 'killed.com', fresh)).toEqual({ kind: 'busy' });
        await p.kill(killed);
        // Its lease still runs; its owner is gone.
        expect(
          await p.sql("SELECT expires_at > 0 AS leased FROM $S.claims WHERE domain = 'killed.com'"),
        ).toEqual([{ leased: backend.name === 'sqlite' ? 1 : true }]);
        expect(await other.claim(a, 'killed.com', fresh)).toEqual({ kind: 'claimed' });
      });
    });

    describe('freshness', () => {
      it('found and not-found answers by their own instant, a bound included; a run’s own whatever their age', async () => {
        const [, store] = await place(1);
        const a = await store.scopeId(scope);
        await store.save(a, 'found.com', answer(100));
        await store.save(a, 'none.com', answer(100, false));
        await store.save(a, 'mine.com', answer(1, true, 42));
        const since = (foundSince: number, notFoundSince: number, run?: number) => ({
          foundSince,
          notFoundSince,
          run,
        });
        expect(await store.find(a, 'found.com', since(100, 101))).toEqual(answer(100));
        expect(await store.find(a, 'found.com', since(101, 100))).toBeUndefined();
        expect(await store.find(a, 'none.com', since(101, 100))).toEqual(answer(100, false));
        expect(await store.find(a, 'none.com', since(100, 101))).toBeUndefined();
        expect(await store.find(a, 'mine.com', since(10, 10))).toBeUndefined();
        expect(await store.find(a, 'mine.com', since(10, 10, 42))).toEqual(answer(1, true, 42));
        // A stale answer is bought again: the claim is ours.
        expect(await store.claim(a, 'found.com', since(101, 101))).toEqual({ kind: 'claimed' });
        expect(await store.find(a, 'nowhere.com', fresh)).toBeUndefined();
      });
    });

    describe('runs', () => {
      it('busy while a live owner has it, resumed with the same detail, abandoned for another', async () => {
        const [p, one, two, three] = await place(3);
        const run = await one.beginRun('output:/x', 'd', 100);
        expect(run).toMatchObject({ startedAt: 100, resumed: false });
        if ('busy' in run) throw new Error('busy');
        expect(await two.beginRun('output:/x', 'd', 200)).toEqual({ busy: me });
        expect(await two.liveRuns()).toEqual([me]);
        expect(await one.liveRuns()).toEqual([]);
        await one.endRun(run, false);
        expect(await two.liveRuns()).toEqual([]);
        expect(await two.beginRun('output:/x', 'd', 200)).toEqual({
          id: run.id,
          startedAt: 100,
          resumed: true,
        });
        await two.close();
        const again = await three.beginRun('output:/x', 'other', 300);
        expect(again).toMatchObject({ startedAt: 300, resumed: false });
        if ('busy' in again) throw new Error('busy');
        await three.endRun(again, true);
        expect(await p.sql('SELECT state, owner FROM $S.runs ORDER BY id')).toEqual([
          { state: 'abandoned', owner: null },
          { state: 'done', owner: null },
        ]);
      });

      it('the run of a killed owner is resumed at once, with its start', async () => {
        const [p, killed, next] = await place(2);
        const run = await killed.beginRun('output:/k', 'd', 7);
        await p.kill(killed);
        expect(await next.liveRuns()).toEqual([]);
        expect(await next.beginRun('output:/k', 'd', 100)).toEqual({
          id: (run as { id: number }).id,
          startedAt: 7,
          resumed: true,
        });
      });
    });

    describe('the month cap', () => {
      it('a hold fits up to the cap exactly; the account is the key, whatever its base URL; other months do not count', async () => {
        const [, store] = await place(1);
        await store.settle({ entry: charge(2) });
        await store.settle({ entry: { ...charge(1), baseUrl: 'https://API.example.com/' } });
        await store.settle({ entry: charge(5, JAN_END + 20_000) });
        await store.settle({ entry: { ...charge(5), keyId: 'k2' } });
        expect(await store.monthUsage('k1', 0, 10_000)).toEqual({ spent: 3, held: 0 });
        expect(await store.monthCount('k1', 0)).toEqual({ spent: 3, held: 0 });
        expect(await store.reserve({ ...hold, amount: 4 })).toMatchObject({ amount: 4 });
        expect(await store.reserve({ ...hold, amount: 4 })).toBeNull();
        expect(await store.reserve({ ...hold, amount: 3, baseUrl: 'http://other.example' })).toMatchObject({
          amount: 3,
        });
        expect(await store.reserve({ ...hold, amount: 1 })).toBeNull();
        // A hold sent in another month counts there, not here; one without a cap is always taken.
        expect(await store.reserve({ ...hold, at: JAN_END + 20_000, amount: 4 })).toMatchObject({
          amount: 4,
          at: JAN_END + 20_000,
        });
        expect(await store.reserve({ ...hold, cap: undefined, amount: 50 })).toMatchObject({ amount: 50 });
        expect(await store.monthUsage('k1', 0, 10_000)).toEqual({ spent: 3, held: 57 });
        expect(await store.monthUsage('k1', JAN_END, FEB_END)).toEqual({ spent: 5, held: 4 });
        expect(await store.monthCount('k1', JAN_END - 1)).toEqual({ spent: 3, held: 57 });
        expect(await store.monthCount('k1', JAN_END)).toEqual({ spent: 5, held: 4 });
      });

      it('a claim with a hold takes both at once; without room the claim is still ours', async () => {
        const [, store, other] = await place(2);
        const a = await store.scopeId(scope);
        expect(await store.claim(a, 'h1.com', fresh, { ...hold, amount: 6 })).toMatchObject({
          kind: 'claimed',
          reservation: { amount: 6 },
        });
        expect(await store.claim(a, 'h2.com', fresh, { ...hold, amount: 6 })).toEqual({
          kind: 'claimed',
          reservation: null,
        });
        expect(await other.claim(a, 'h2.com', fresh)).toEqual({ kind: 'busy' });
        expect(await store.monthUsage(hold.keyId, 0, 10_000)).toEqual({ spent: 0, held: 6 });
      });
    });

    describe('the month’s counter', () => {
      const COUNTERS =
        'SELECT key_id, month_from, spent, held FROM $S.month_usage ORDER BY key_id, month_from';

      it('follows every hold, settle, lost hold, refusal and clear of the ledger, and equals the month’s sum', async () => {
        const [p, store, gone, next] = await place(3);
        const month = async () => {
          const counted = await next.monthCount('k1', hold.at);
          expect(await next.monthUsage('k1', 0, JAN_END)).toEqual(counted);
          return counted;
        };
        const first = (await store.reserve(hold))!;
        expect(await month()).toEqual({ spent: 0, held: 3 });
        await store.settle({ reservation: first, entry: charge(2) });
        expect(await month()).toEqual({ spent: 2, held: 0 });
        await store.reserve({ ...hold, cap: undefined, amount: 4 });
        await gone.reserve({ ...hold, cap: undefined, amount: 5 });
        expect(await p.sql(COUNTERS)).toEqual([{ key_id: 'k1', month_from: 0, spent: 2, held: 9 }]);
        await p.kill(gone);
        // The lost hold becomes a possibly-charged entry: held moves to spent.
        expect(await month()).toEqual({ spent: 7, held: 4 });
        // 7 + 4 + 2 > 12: refused, and nothing moves.
        expect(await store.reserve({ ...hold, cap: 12, amount: 2 })).toBeNull();
        expect(await store.reserve({ ...hold, cap: 13, amount: 2 })).toMatchObject({ amount: 2 });
        expect(await month()).toEqual({ spent: 7, held: 6 });
        await store.clear(true);
        expect(await month()).toEqual({ spent: 0, held: 6 });
        await store.close();
        expect(await month()).toEqual({ spent: 6, held: 0 });
        expect(await p.sql(COUNTERS)).toEqual([{ key_id: 'k1', month_from: 0, spent: 6, held: 0 }]);
      });

      it('of an older store is built from its ledger and holds when it is opened', async () => {
        const [p, store] = await place(1);
        await store.settle({ entry: charge(2) });
        await store.settle({ entry: charge(4, JAN_END + 5) });
        await store.settle({ entry: { ...charge(3), keyId: 'k2', outcome: 'unknown' } });
        // Closing with it held makes it possibly charged.
        await store.reserve({ ...hold, cap: undefined, amount: 7, at: JAN_END + 6 });
        await store.close();
        await p.downgrade();
        // Written by the older release: an entry of its own, and a hold without its time (at 0).
        await p.sql(
          "INSERT INTO $S.ledger (at, base_url, key_id, command, credits, outcome) VALUES (9, 'b', 'k1', 'api', 1, 'charged')",
        );
        await p.sql(
          "INSERT INTO $S.reservations (base_url, key_id, owner, amount, expires_at, command, at) VALUES ('b', 'k3', 'h\t1\tt', 8, 0, '', 0)",
        );
        const upgraded = await p.open();
        const [{ at }] = (await p.sql("SELECT at FROM $S.reservations WHERE key_id = 'k3'")) as [
          { at: number },
        ];
        expect(at).toBeGreaterThan(0);
        const now = new Date(at);
        expect(await p.sql(COUNTERS)).toEqual([
          { key_id: 'k1', month_from: 0, spent: 3, held: 0 },
          { key_id: 'k1', month_from: JAN_END, spent: 11, held: 0 },
          { key_id: 'k2', month_from: 0, spent: 3, held: 0 },
          {
            key_id: 'k3',
            month_from: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1),
            spent: 0,
            held: 8,
          },
        ]);
        expect((await upgraded.counts(0, { maxAgeMs: 0, notFoundMaxAgeMs: 0 })).schema_version).toBe(
          backend.name === 'sqlite' ? 3 : 2,
        );
        // A cap now reads the counter: 11 + 2 > 12.
        expect(await upgraded.reserve({ ...hold, cap: 12, amount: 2, at: JAN_END })).toBeNull();
        expect(await upgraded.reserve({ ...hold, cap: 13, amount: 2, at: JAN_END })).toMatchObject({
          amount: 2,
        });
      });
    });

    describe('settling and lost holds', () => {
      it('settle drops the hold and records the charge once; an entry of no credits is not recorded', async () => {
        const [p, store] = await place(1);
        const a = await store.scopeId(scope);
        const held = (await store.reserve(hold))!;
        await store.settle({ reservation: held, entry: charge(1, 1_000, 'search') });
        await store.settle({ reservation: held, entry: charge(1, 1_000, 'search') });
        expect(await p.sql(LEDGER)).toEqual([
          { credits: 1, outcome: 'charged', command: 'search', at: 1_000 },
        ]);
        expect(await store.monthUsage(hold.keyId, 0, 10_000)).toEqual({ spent: 1, held: 0 });
        const claim = await store.claim(a, 's.com', fresh, hold);
        if (claim.kind !== 'claimed' || !claim.reservation) throw new Error(JSON.stringify(claim));
        await store.save(a, 's.com', answer(9), { reservation: claim.reservation, entry: charge(2) });
        expect(await store.find(a, 's.com', fresh)).toEqual(answer(9));
        await store.settle({ entry: charge(0) });
        const zero = (await store.reserve(hold))!;
        await store.settle({ reservation: zero, entry: charge(0) });
        expect(await p.sql(LEDGER)).toEqual([
          { credits: 1, outcome: 'charged', command: 'search', at: 1_000 },
          { credits: 2, outcome: 'charged', command: 'enrich', at: 1_000 },
        ]);
        expect(await p.sql(COUNT('reservations'))).toEqual([{ n: 0 }]);
        expect(await p.sql(COUNT('claims'))).toEqual([{ n: 0 }]);
      });

      it('a hold whose owner is gone counts as possibly charged, read first without writing; its late settle adds nothing', async () => {
        const [p, gone, next] = await place(2);
        const held = await gone.reserve(hold);
        expect(held).toMatchObject({ amount: 3 });
        await p.kill(gone);
        const lost = {
          at: 1_000,
          baseUrl: hold.baseUrl,
          keyId: 'k1',
          command: 'enrich',
          credits: 3,
          outcome: 'unknown',
        };
        expect(await next.lostHolds()).toEqual([lost]);
        expect(await p.sql(COUNT('ledger'))).toEqual([{ n: 0 }]);
        // 3 still count against the month: 3 + 8 > 10.
        expect(await next.reserve({ ...hold, amount: 8 })).toBeNull();
        expect(await p.sql(LEDGER)).toEqual([
          { credits: 3, outcome: 'unknown', command: 'enrich', at: 1_000 },
        ]);
        expect(await next.lostHolds()).toEqual([]);
        expect(await next.reserve({ ...hold, amount: 7 })).toMatchObject({ amount: 7 });
        await gone.settle({ reservation: held!, entry: charge(2) });
        expect(await p.sql(LEDGER)).toHaveLength(1);
        expect(await next.monthUsage(hold.keyId, 0, 10_000)).toEqual({ spent: 3, held: 7 });
      });

      it('a hold held when its store closes is recorded as possibly charged; sweep takes one whose lease ran out', async () => {
        const [p, closing, stalled, sweeper] = await place(3);
        await closing.reserve({ ...hold, cap: undefined });
        await closing.close();
        await stalled.reserve({ ...hold, cap: undefined, amount: 4, command: 'search', at: 2_000 });
        await sweeper.reserve({ ...hold, cap: undefined, amount: 5 });
        await p.sql('UPDATE $S.reservations SET expires_at = 0');
        await sweeper.sweep();
        expect(await p.sql(LEDGER)).toEqual([
          { credits: 3, outcome: 'unknown', command: 'enrich', at: 1_000 },
          { credits: 4, outcome: 'unknown', command: 'search', at: 2_000 },
        ]);
        // Its own hold is never another's to sweep.
        expect(await p.sql('SELECT amount FROM $S.reservations')).toEqual([{ amount: 5 }]);
      });
    });

    describe('spend, info, prune, clear, export', () => {
      const FEB = Date.UTC(2026, 1, 1);
      const now = FEB + 40 * DAY;
      const ages = { maxAgeMs: 30 * DAY, notFoundMaxAgeMs: 7 * DAY };

      async function filled() {
        const [p, store] = await place(1);
        const a = await store.scopeId(scope);
        const b = await store.scopeId({ ...scope, products: ['tech', 'profile'], maxCredits: 3 });
        await store.save(a, 'old.com', { ...answer(now - 31 * DAY), record: { domain: 'old.com', a: 1 } });
        await store.save(a, 'new.com', { ...answer(now - 1000), record: { domain: 'new.com', b: 2 } });
        await store.save(b, 'new.com', { ...answer(now - DAY), record: { domain: 'new.com', c: 3 } });
        await store.save(a, 'none.com', answer(now - 7 * DAY - 1, false));
        await store.save(a, 'edge.com', answer(now - 7 * DAY, false));
        await store.settle({ entry: charge(2, FEB - 1, 'enrich') });
        await store.settle({ entry: charge(3, FEB, 'search') });
        await store.settle({ entry: { ...charge(4, FEB + DAY, 'enrich'), outcome: 'unknown', keyId: 'k2' } });
        return { p, store, a };
      }

      it('spend by month, day, command and key, in UTC, in order', async () => {
        const { store } = await filled();
        expect(await store.spend('month', undefined)).toEqual([
          { month: '2026-01', charged: 2, possibly_charged: 0, calls: 1 },
          { month: '2026-02', charged: 3, possibly_charged: 4, calls: 2 },
        ]);
        expect(await store.spend('day', FEB)).toEqual([
          { day: '2026-02-01', charged: 3, possibly_charged: 0, calls: 1 },
          { day: '2026-02-02', charged: 0, possibly_charged: 4, calls: 1 },
        ]);
        expect(await store.spend('command', undefined)).toEqual([
          { command: 'enrich', charged: 2, possibly_charged: 4, calls: 2 },
          { command: 'search', charged: 3, possibly_charged: 0, calls: 1 },
        ]);
        expect(await store.spend('key', undefined)).toEqual([
          { base_url: hold.baseUrl, key: 'k1', charged: 5, possibly_charged: 0, calls: 2 },
          { base_url: hold.baseUrl, key: 'k2', charged: 0, possibly_charged: 4, calls: 1 },
        ]);
      });

      it('store info buckets the answers by age, a bound in the older bucket, and counts what prune removes', async () => {
        const { store } = await filled();
        const counts = await store.counts(now, ages);
        expect(counts.size_bytes).toBeGreaterThan(0);
        expect(counts.schema_version).toBeGreaterThan(0);
        expect({ ...counts, size_bytes: 0, schema_version: 0 }).toEqual({
          size_bytes: 0,
          schema_version: 0,
          answers: 5,
          found: 3,
          not_found: 2,
          age_under_1_day: 1,
          age_1_to_7_days: 1,
          age_7_to_30_days: 2,
          age_over_30_days: 1,
          expired: 2,
          ledger_entries: 3,
        });
      });

      it('export by domain then scope, and the record fields in the order first met', async () => {
        const { store } = await filled();
        const exported = [];
        for await (const row of store.exportAnswers()) exported.push(row);
        expect(exported.map((row) => [row.domain, row.products, row.max_credits])).toEqual([
          ['edge.com', null, null],
          ['new.com', null, null],
          ['new.com', ['profile', 'tech'], 3],
          ['none.com', null, null],
          ['old.com', null, null],
        ]);
        expect(exported[1]).toEqual({
          domain: 'new.com',
          found: true,
          bought_at: new Date(now - 1000).toISOString(),
          credits: 1,
          base_url: 'b',
          key: 'k',
          products: null,
          include: null,
          max_credits: null,
          record: { domain: 'new.com', b: 2 },
        });
        expect(await store.recordFields()).toEqual(['domain', 'b', 'c', 'a']);
      });

      it('prune removes what a lookup at the same instant would buy again, keeps the ledger and lost holds', async () => {
        const { p, store, a } = await filled();
        const stalled = await p.open();
        await stalled.claim(a, 'lapsed.com', fresh, { ...hold, cap: undefined, at: FEB });
        await p.sql('UPDATE $S.claims SET expires_at = 0');
        await p.sql('UPDATE $S.reservations SET expires_at = 0');
        await store.claim(a, 'live.com', fresh);
        expect(await store.prune(now, ages)).toEqual({ found: 1, not_found: 1 });
        expect((await store.counts(now, ages)).answers).toBe(3);
        expect(await p.sql('SELECT domain FROM $S.claims')).toEqual([{ domain: 'live.com' }]);
        expect(await store.spend('month', FEB)).toEqual([
          { month: '2026-02', charged: 3, possibly_charged: 7, calls: 3 },
        ]);
      });

      // Drifted before src/store/rules.ts: SQLite dropped lapsed claims by their expiry alone.
      it('prune drops the claims of a killed owner at once, as a takeover would, and keeps a live one’s', async () => {
        const { p, store, a } = await filled();
        const killed = await p.open();
        const live = await p.open();
        await killed.claim(a, 'killed.com', fresh);
        await live.claim(a, 'live.com', fresh);
        await p.kill(killed);
        await store.prune(now, ages);
        expect(await p.sql('SELECT domain FROM $S.claims ORDER BY domain')).toEqual([{ domain: 'live.com' }]);
      });

      // Drifted before: SQLite turned lost holds into entries in a transaction of its own, first.
      it('prune is one transaction: when it fails, the lost holds are still holds', async () => {
        const { p, store } = await filled();
        const gone = await p.open();
        await gone.reserve({ ...hold, cap: undefined, at: FEB });
        await p.kill(gone);
        await p.sql('DROP TABLE $S.answers');
        const failed = await store.prune(now, ages).then(
          () => undefined,
          (error: Problem) => error,
        );
        expect(failed?.code).toBe('store_unavailable');
        expect(await p.sql(COUNT('reservations'))).toEqual([{ n: 1 }]);
        expect(await p.sql(COUNT('ledger'))).toEqual([{ n: 3 }]);
        expect((await store.lostHolds()).map((e) => e.credits)).toEqual([3]);
      });

      // Drifted before: PostgreSQL turned lost holds into entries after clearing the ledger, so they stayed.
      it('clear keeps the ledger unless asked; with the ledger, lost holds become entries first and go with it', async () => {
        const { p, store } = await filled();
        const gone = await p.open();
        await gone.reserve({ ...hold, cap: undefined, at: FEB });
        await p.kill(gone);
        expect(await store.clear(false)).toEqual({ answers: 5, ledger_entries: 0 });
        expect(await p.sql(COUNT('ledger'))).toEqual([{ n: 4 }]);
        await gone.close();
        const again = await p.open();
        await again.reserve({ ...hold, cap: undefined, at: FEB, amount: 6 });
        await p.kill(again);
        expect(await store.clear(true)).toEqual({ answers: 0, ledger_entries: 5 });
        expect(await store.spend('month', undefined)).toEqual([]);
        expect(await p.sql(COUNT('reservations'))).toEqual([{ n: 0 }]);
      });
    });
  });
}
