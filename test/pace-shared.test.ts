// The pacer with the fleet's turns (src/pace/shared.ts) on a clock the test moves by hand: a grant
// waits for a turn the store handed out, turns are asked for a few at a time, old turns are
// dropped, pauses and cuts go to the fleet and the fleet's pause comes back. The store here is a
// stand-in the test answers by hand, or a model of the PostgreSQL row's arithmetic (the row itself
// is test/store/postgres-rate.test.ts's).
import { describe, expect, it } from 'vitest';
import type { Reserved } from '../src/pace/shared.js';
import { createPacer, type Pacer, type SharedRate } from '../src/pace.js';
import { flush, manualClock } from './helpers/manual-clock.js';

type Clock = ReturnType<typeof manualClock>;

/** A store answered by the test: each request of turns waits for `answer` or `fail`. */
function handStore() {
  const asks: Array<{ count: number; rate: number; answer(r: Reserved): void; fail(e: Error): void }> = [];
  const pauses: number[] = [];
  const cuts: Array<[number, number]> = [];
  const source: SharedRate = {
    where: 'postgres://db.example/company',
    reserve: (count, rate) =>
      new Promise((answer, fail) => {
        asks.push({ count, rate, answer, fail });
      }),
    pause: async (ms) => {
      pauses.push(ms);
    },
    cut: async (rate, growth) => {
      cuts.push([rate, growth]);
    },
  };
  return { source, asks, pauses, cuts };
}

function pacerOn(clock: Clock, rate: number, shared: SharedRate, notes: string[] = []): Pacer {
  return createPacer(rate, {
    now: clock.now,
    setTimer: clock.setTimer,
    clearTimer: clock.clearTimer,
    shared,
    note: (line) => notes.push(line),
  });
}

/** `n` callers take a turn now; each notes when it was granted. */
function takeMany(pacer: Pacer, clock: Clock, granted: number[], n: number): void {
  for (let i = 0; i < n; i++) {
    const waiting = pacer.take();
    if (waiting === undefined) granted.push(clock.now());
    else waiting.then(() => granted.push(clock.now()));
  }
}

describe('the pacer on the fleet’s turns', () => {
  it('grants only when a turn the store handed out is due, asking a few at a time for the callers waiting', async () => {
    const clock = manualClock();
    const store = handStore();
    const notes: string[] = [];
    const pacer = pacerOn(clock, 100, store.source, notes);
    const granted: number[] = [];
    takeMany(pacer, clock, granted, 8);
    await flush();
    // Eight callers, 50 ms of the rate at most: five turns asked for, nothing granted meanwhile.
    // The rate asked for is the rate held over the pacer's window (100 in any 1,025 ms).
    expect(store.asks.map((a) => [a.count, a.rate])).toEqual([[5, 100_000 / 1025]]);
    await clock.advanceTo(5030);
    expect(granted).toEqual([]);
    // The turns start 20 ms after the answer (another host holds the ones before), 10 ms apart.
    store.asks[0].answer({ startIn: 20, spacing: 10, pausedFor: 0 });
    await flush();
    await clock.advanceTo(5050);
    expect(granted).toEqual([5050]);
    // The three still without a turn are asked for.
    expect(store.asks.map((a) => a.count)).toEqual([5, 3]);
    store.asks[1].answer({ startIn: 45, spacing: 10, pausedFor: 0 });
    await flush();
    await clock.advanceTo(5200);
    expect(granted).toEqual([5050, 5060, 5070, 5080, 5090, 5095, 5105, 5115]);
    // Nobody waits any more; one turn is asked for ahead: what this host, at its recent pace, uses
    // while a request of turns is on its way.
    expect(store.asks.map((a) => a.count)).toEqual([5, 3, 1]);
    expect(notes).toEqual([
      'pacing: shared with every host of the store postgres://db.example/company on this key',
    ]);
  });

  it('drops turns due more than 50 ms ago (a busy event loop) instead of sending them at once', async () => {
    const clock = manualClock();
    const store = handStore();
    const pacer = pacerOn(clock, 100, store.source);
    const granted: number[] = [];
    takeMany(pacer, clock, granted, 5);
    await flush();
    store.asks[0].answer({ startIn: 0, spacing: 10, pausedFor: 0 });
    await flush();
    expect(granted).toEqual([5000]);
    // One turn asked for ahead (the one this host will use while a request is on its way).
    expect(store.asks.map((a) => a.count)).toEqual([5, 1]);
    store.asks[1].answer({ startIn: 50, spacing: 10, pausedFor: 0 });
    await flush();
    // The timer for 5010 fires at 5200: the turns of 5010-5050 are gone; new ones are asked for.
    await clock.lateTo(5200);
    expect(granted).toEqual([5000]);
    expect(store.asks.map((a) => a.count)).toEqual([5, 1, 5]);
    store.asks[2].answer({ startIn: 0, spacing: 10, pausedFor: 0 });
    await flush();
    await clock.advanceTo(5300);
    expect(granted).toEqual([5000, 5200, 5210, 5220, 5230]);
  });

  it('tells the fleet of a pause once per burst of refusals, and holds the fleet’s pause without telling it back', async () => {
    const clock = manualClock();
    const store = handStore();
    const pacer = pacerOn(clock, 100, store.source);
    const granted: number[] = [];
    // The scheduler's Retry-After: 1, from three requests of one burst.
    pacer.hold.holdFor(1000);
    await clock.advance(10);
    pacer.hold.holdFor(1000);
    pacer.hold.holdFor(1000);
    await flush();
    expect(store.pauses).toEqual([1000]);
    // A later refusal that extends the pause by more than 100 ms is told too.
    await clock.advance(300);
    pacer.hold.holdFor(1000);
    expect(store.pauses).toEqual([1000, 1000]);
    // No turns are asked for during a pause: they would be stale at its end.
    takeMany(pacer, clock, granted, 2);
    await flush();
    expect(store.asks).toHaveLength(0);
    await clock.advanceTo(6310);
    expect(store.asks).toHaveLength(1);
    // Another host paused the fleet meanwhile: its pause is held here, and not told again.
    store.asks[0].answer({ startIn: 500, spacing: 10, pausedFor: 500 });
    await flush();
    expect(pacer.hold.until).toBe(6810);
    expect(store.pauses).toEqual([1000, 1000]);
    await clock.advanceTo(7000);
    expect(granted).toEqual([6810, 6820]);
  });

  it('tells the fleet of a cut: the rate it was cut to, and how fast it grows back', async () => {
    const clock = manualClock();
    const store = handStore();
    const pacer = pacerOn(clock, 100, store.source);
    expect(pacer.refused()).toBe(true);
    await flush();
    expect(store.cuts).toEqual([[70, 5]]);
  });

  it('paces alone for a second when the store cannot hand out turns, and says so once', async () => {
    const clock = manualClock();
    const store = handStore();
    const notes: string[] = [];
    const pacer = pacerOn(clock, 20, store.source, notes);
    const granted: number[] = [];
    takeMany(pacer, clock, granted, 3);
    await flush();
    store.asks[0].fail(new Error('Connection terminated'));
    await flush();
    await clock.advanceTo(5200);
    // The local rules alone: 20 a second, 50 ms apart, a turn up to 50 ms early (GCRA's burst).
    expect(granted).toEqual([5000, 5000, 5050]);
    expect(notes).toEqual([
      "pacing: alone for now; the store's shared rate could not be used (Connection terminated)",
    ]);
    // A second later the fleet is asked again.
    await clock.advanceTo(6100);
    takeMany(pacer, clock, granted, 1);
    await flush();
    expect(store.asks).toHaveLength(2);
  });
});

describe('a fleet of pacers on one row of turns', () => {
  /** The PostgreSQL row's arithmetic (src/store/postgres/rate.ts) on the test's clock. */
  function rowOn(clock: Clock): SharedRate {
    let next = 0;
    return {
      where: 'model',
      reserve: async (count, rate) => {
        const start = Math.max(next, clock.now());
        next = start + (count * 1000) / rate;
        return { startIn: start - clock.now(), spacing: 1000 / rate, pausedFor: 0 };
      },
      pause: async () => {},
      cut: async () => {},
    };
  }

  it('one host sending steadily asks for its turns a few at a time, not one statement a turn', async () => {
    const clock = manualClock(0);
    const row = rowOn(clock);
    let asks = 0;
    const counted: SharedRate = {
      ...row,
      reserve: (count, rate) => {
        asks++;
        return row.reserve(count, rate);
      },
    };
    const pacer = pacerOn(clock, 300, counted);
    let granted = 0;
    // One caller at a time (a lookup answered at once takes the next turn).
    const caller = () => {
      const again = () => {
        granted++;
        if (clock.now() < 2000) caller();
      };
      const waiting = pacer.take();
      if (waiting === undefined) again();
      else waiting.then(again);
    };
    caller();
    for (let t = 0; t <= 2000; t += 1) await clock.advanceTo(t);
    pacer.stop();
    // 300 in any 1,025 ms: about 585 turns in 2 s.
    expect(granted).toBeGreaterThanOrEqual(575);
    expect(asks).toBeLessThanOrEqual(granted / 2);
  });

  it('four hosts, each with eight callers always waiting, share 90 a second: no second holds more than 88', async () => {
    const clock = manualClock(0);
    const row = rowOn(clock);
    const granted: number[] = [];
    const pacers = Array.from({ length: 4 }, () => pacerOn(clock, 90, row));
    // Each caller takes its next turn as soon as it was granted (a lookup answered at once).
    const caller = (pacer: Pacer) => {
      const again = () => {
        granted.push(clock.now());
        if (clock.now() < 3000) caller(pacer);
      };
      const waiting = pacer.take();
      if (waiting === undefined) again();
      else waiting.then(again);
    };
    for (const pacer of pacers) for (let i = 0; i < 8; i++) caller(pacer);
    for (let t = 0; t <= 3000; t += 5) await clock.advanceTo(t);
    for (const pacer of pacers) pacer.stop();
    const inFirst3s = granted.filter((at) => at < 3000);
    // 90 in any 1,025 ms: turns 11.4 ms apart, 263 in 3 s (four hosts alone would each take 90 a second).
    expect(inFirst3s.length).toBeGreaterThanOrEqual(258);
    expect(inFirst3s.length).toBeLessThanOrEqual(264);
    for (let from = 0; from <= 2000; from += 5) {
      expect(
        granted.filter((at) => at >= from && at < from + 1000).length,
        `from ${from}`,
      ).toBeLessThanOrEqual(88);
    }
  });
});
