// The lost wake-up of Purse.reserve(): a caller that found no room looks at the month's usage
// before it waits; an answer settled while it looked must still wake it. Before the fix it
// registered its waiter only after that look, so a settle in between woke nobody and the caller
// waited for ever (a batch's last rows then ended "without a result").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Hold, Purse } from '../../src/spend/purse.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import type { AnswerStore } from '../../src/store/types.js';

let dir: string | undefined;
let store: SqliteStore | undefined;

afterEach(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  store = dir = undefined;
});

/** The reads of the month a waiting caller makes before it waits (whichever the purse uses). */
const MONTH_READS = new Set(['monthUsage', 'monthCount']);

/**
 * The store, with `during` run inside the first read of the month's usage, before that read
 * answers: the moment where a settle used to be lost.
 */
function withSettleDuringRead(opened: AnswerStore, during: () => Promise<void>): AnswerStore {
  return withHook(opened, MONTH_READS, 'before', during);
}

/** The store, with `during` run once inside the first call of one of `names`, before or after it works. */
function withHook(
  opened: AnswerStore,
  names: Set<string>,
  when: 'before' | 'after',
  during: () => Promise<void>,
): AnswerStore {
  let fired = false;
  return new Proxy(opened, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      if (!names.has(String(name))) return value.bind(target);
      return async (...args: unknown[]) => {
        const fire = async () => {
          if (fired) return;
          fired = true;
          await during();
        };
        if (when === 'before') await fire();
        const result = await value.apply(target, args);
        if (when === 'after') await fire();
        return result;
      };
    },
  });
}

/** Lets the event loop turn `n` times: a store of SQLite answers within a few. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe('Purse.reserve under a month cap', () => {
  it('is woken by a hold settled while it read the month (the wake-up is not lost)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'cd-purse-wake-'));
    store = await openSqliteStore(join(dir, 'store.db'));
    let first: Hold | null = null;
    let purse: Purse | undefined;
    const ledger = withSettleDuringRead(store, async () => {
      // The answer of the request in flight comes in, charged nothing: its 6 credits are free.
      await purse!.settle(first!, 0);
    });
    purse = new Purse({
      monthCap: 10,
      ledger,
      baseUrl: 'http://api.example',
      keyId: 'k1',
      command: 'enrich',
      now: () => Date.parse('2026-11-20T10:00:00Z'),
    });
    first = await purse.tryReserve(6);
    expect(first).toMatchObject({ amount: 6 });
    // 6 held + 6 > 10: no room now, one request in flight that may free some.
    const second = purse.reserve(6);
    const outcome = await Promise.race([
      second.then((hold) => ({ hold })),
      turns(200).then(() => 'still waiting' as const),
    ]);
    expect(outcome).toMatchObject({ hold: { amount: 6, settled: false } });
    expect(await store.monthUsage('k1', 0, Number.MAX_SAFE_INTEGER)).toEqual({ spent: 0, held: 6 });
  });

  it('takes the room a settle freed while its own hold was being refused, with nothing left in flight', async () => {
    dir = mkdtempSync(join(tmpdir(), 'cd-purse-wake-'));
    store = await openSqliteStore(join(dir, 'store.db'));
    let first: Hold | null = null;
    let purse: Purse | undefined;
    let refusals = 0;
    // The second hold is refused by the store (6 + 6 > 10); the first settles before that refusal
    // reaches the purse, so nothing is in flight any more when it does.
    const ledger = withHook(store, new Set(['reserve']), 'after', async () => {
      refusals++;
      await purse!.settle(first!, 0);
    });
    purse = new Purse({
      monthCap: 10,
      ledger: store,
      baseUrl: 'http://api.example',
      keyId: 'k1',
      command: 'enrich',
      now: () => Date.parse('2026-11-20T10:00:00Z'),
    });
    first = await purse.tryReserve(6);
    // From now on the purse holds through the hooked store.
    Object.assign(purse, { store: ledger });
    const second = await purse.reserve(6);
    expect(refusals).toBe(1);
    expect(second).toMatchObject({ amount: 6, settled: false });
  });
});
