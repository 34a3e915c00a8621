// The pacer of --rate (src/pace.ts) on a clock the test moves by hand: exact grant times and
// waits, never a timed assertion.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPacer, MAX_RATE, type Pacer, paceForLimit, parseRate, type RateSource } from '../src/pace.js';
import { flush, manualClock } from './helpers/manual-clock.js';

function pacerOn(clock: ReturnType<typeof manualClock>, rate: RateSource): Pacer {
  return createPacer(rate, { now: clock.now, setTimer: clock.setTimer, clearTimer: clock.clearTimer });
}

/** Moves the clock to each time in turn and checks the grants made by then. */
async function expectGrants(
  clock: ReturnType<typeof manualClock>,
  granted: number[],
  steps: Array<[number, number[]]>,
): Promise<void> {
  for (const [to, want] of steps) {
    await clock.advanceTo(to);
    expect(granted, `at ${to}`).toEqual(want);
  }
}

/** Takes one turn and notes when it was granted (at once: the time of the call). */
function takeAt(pacer: Pacer, clock: ReturnType<typeof manualClock>, granted: number[]): void {
  const waiting = pacer.take();
  if (waiting === undefined) granted.push(clock.now());
  else waiting.then(() => granted.push(clock.now()));
}

describe('createPacer', () => {
  it('grants one turn every 1000/rate ms, in order, up to 50 ms early, and at most the rate in any 1,025 ms', async () => {
    const clock = manualClock();
    const pacer = pacerOn(clock, 4);
    const granted: number[] = [];
    for (let i = 0; i < 6; i++) takeAt(pacer, clock, granted);
    expect(granted).toEqual([5000]);
    expect(pacer.waiting).toBe(5);
    await expectGrants(clock, granted, [
      [5199, [5000]],
      [5200, [5000, 5200]],
      [5450, [5000, 5200, 5450]],
      [5700, [5000, 5200, 5450, 5700]],
      // The window: 4 in any 1,025 ms, so the fifth waits for the first to leave it, and the
      // sixth for the second.
      [6024, [5000, 5200, 5450, 5700]],
      [6025, [5000, 5200, 5450, 5700, 6025]],
      [6224, [5000, 5200, 5450, 5700, 6025]],
      [6225, [5000, 5200, 5450, 5700, 6025, 6225]],
    ]);
    expect(pacer.waiting).toBe(0);
    expect(clock.timers()).toBe(0);
    expect(pacer.granted).toBe(6);
  });

  it('makes up for a late timer up to its tolerance: the turns it owed go at once', async () => {
    const clock = manualClock(0);
    const pacer = pacerOn(clock, 20);
    const granted: number[] = [];
    for (let i = 0; i < 10; i++) takeAt(pacer, clock, granted);
    // 50 ms of tolerance, one interval: two at once to start.
    expect(granted).toEqual([0, 0]);
    expect(clock.nextTimer()).toBe(50);
    // The event loop was busy: the timer due at 50 runs at 140. The turn it owed and the one
    // due since go at once, the next ones when they are due.
    await clock.lateTo(140);
    expect(granted).toEqual([0, 0, 140, 140]);
    await clock.advanceTo(300);
    expect(granted).toEqual([0, 0, 140, 140, 190, 240, 290]);
  });

  it('owes no burst for time nobody used beyond its tolerance', async () => {
    const clock = manualClock();
    const pacer = pacerOn(clock, 20);
    expect(pacer.take()).toBeUndefined();
    await clock.advance(10_000);
    const granted: number[] = [];
    for (let i = 0; i < 5; i++) takeAt(pacer, clock, granted);
    expect(granted).toEqual([15_000, 15_000]);
    await clock.advance(150);
    expect(granted).toEqual([15_000, 15_000, 15_050, 15_100, 15_150]);
  });

  it('holds every turn for a pause, then spaces the waiters from its end', async () => {
    const clock = manualClock();
    const pacer = pacerOn(clock, 4);
    const granted: number[] = [];
    takeAt(pacer, clock, granted);
    pacer.holdFor(1000);
    for (let i = 0; i < 3; i++) takeAt(pacer, clock, granted);
    await expectGrants(clock, granted, [
      [5999, [5000]],
      [6000, [5000, 6000]],
      [6199, [5000, 6000]],
      [6200, [5000, 6000, 6200]],
      [6450, [5000, 6000, 6200, 6450]],
    ]);
    // A pause with nobody waiting holds the next caller.
    await clock.advanceTo(7000);
    pacer.holdFor(300);
    expect(pacer.take()).toBeDefined();
  });

  // The window guarantee, with callers arriving at random and timers firing late at random.
  const SEED = 31_031;
  it(`holds any window of one second, wherever it starts, to at most the rate (fast-check seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(0.5, 1, 3, 4, 11.7, 45, 50, 400, 1000),
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 400 }),
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 50 }),
        async (rate, arrivals, lateness) => {
          const clock = manualClock(0);
          const pacer = pacerOn(clock, rate);
          const granted: number[] = [];
          let late = 0;
          for (const at of [...arrivals].sort((a, b) => a - b)) {
            if (at > clock.now()) await clock.lateTo(at);
            takeAt(pacer, clock, granted);
          }
          // Timers fire late by the drawn amounts, as a busy event loop runs them.
          while (clock.timers() > 0)
            await clock.lateTo(clock.nextTimer() + lateness[late++ % lateness.length]);
          expect(granted).toHaveLength(arrivals.length);
          let end = 0;
          for (let start = 0; start < granted.length; start++) {
            while (end < granted.length && granted[end] < granted[start] + 1000) end++;
            expect(end - start).toBeLessThanOrEqual(Math.ceil(rate));
          }
        },
      ),
      { numRuns: 80, seed: SEED },
    );
  });

  it('reaches at least 95 % of the rate from 5 to 1,000 a second, timers 0-3 ms late, and with an event loop 40 ms late now and then', async () => {
    for (const rate of [5, 50, 200, 400, 1000]) {
      const clock = manualClock(0);
      const pacer = pacerOn(clock, rate);
      const granted: number[] = [];
      const seconds = 10;
      for (let i = 0; i < rate * seconds * 2; i++) takeAt(pacer, clock, granted);
      let late = 0;
      while (clock.now() < seconds * 1000) {
        late++;
        await clock.lateTo(clock.nextTimer() + (late % 50 === 0 ? 40 : late % 4));
      }
      expect(granted.filter((at) => at < seconds * 1000).length, `at ${rate}/s`).toBeGreaterThanOrEqual(
        0.95 * rate * seconds,
      );
      pacer.stop();
    }
  });

  it('does not pace without a rate, or with 0', () => {
    const clock = manualClock();
    for (const rate of [undefined, 0]) {
      const pacer = pacerOn(clock, rate);
      for (let i = 0; i < 100; i++) expect(pacer.take()).toBeUndefined();
      expect(pacer.rate).toBeUndefined();
    }
  });

  it('releases every waiter on stop, and later turns are free', async () => {
    const clock = manualClock();
    const pacer = pacerOn(clock, 1);
    pacer.take();
    let released = 0;
    for (let i = 0; i < 5; i++) pacer.take()!.then(() => released++);
    pacer.stop();
    await flush();
    expect(released).toBe(5);
    expect(pacer.take()).toBeUndefined();
    expect(clock.timers()).toBe(0);
  });

  it('rejects a waiter whose signal aborts, and gives its turn to the next', async () => {
    const clock = manualClock();
    const pacer = pacerOn(clock, 4);
    expect(pacer.take()).toBeUndefined();
    const controller = new AbortController();
    const aborted = pacer.take(controller.signal)!;
    const granted: number[] = [];
    takeAt(pacer, clock, granted);
    controller.abort(new Error('stop waiting'));
    await expect(aborted).rejects.toThrow('stop waiting');
    await clock.advanceTo(5200);
    expect(granted).toEqual([5200]);
    await expect(pacer.take(controller.signal)!).rejects.toThrow('stop waiting');
  });

  it('asks a deferred rate once, at the first turn, counts the asking as a turn, and paces the turns that waited for it', async () => {
    const clock = manualClock();
    let asked = 0;
    let answer: (rate: number | undefined) => void = () => {};
    const pacer = pacerOn(
      clock,
      () =>
        new Promise((resolve) => {
          asked++;
          answer = resolve;
        }),
    );
    expect(asked).toBe(0);
    const granted: number[] = [];
    for (let i = 0; i < 3; i++) takeAt(pacer, clock, granted);
    await flush();
    expect(asked).toBe(1);
    expect(pacer.rate).toBeUndefined();
    await clock.advanceTo(5040);
    expect(granted).toEqual([]);
    answer(2);
    await flush();
    expect(pacer.rate).toBe(2);
    // Asked at 5000 (a request under the same limit): the first grant is one interval later,
    // and the asking counts in the window (2 in any 1,025 ms).
    await clock.advanceTo(6600);
    expect(granted).toEqual([5500, 6025, 6525]);
    expect(asked).toBe(1);
  });

  it('does not pace when the deferred rate is unknown or cannot be had', async () => {
    for (const source of [
      async () => undefined,
      async () => {
        throw new Error('GET /api/me failed');
      },
      () => {
        throw new Error('not even a promise');
      },
    ] as Array<() => Promise<number | undefined>>) {
      const clock = manualClock();
      const pacer = pacerOn(clock, source);
      const granted: number[] = [];
      for (let i = 0; i < 3; i++) takeAt(pacer, clock, granted);
      await flush();
      expect(granted).toEqual([5000, 5000, 5000]);
      expect(pacer.take()).toBeUndefined();
    }
  });
});

describe('the adaptive rate (AIMD)', () => {
  it('a refusal cuts the rate to 0.7, once for the requests already on their way; answers raise it again up to the rate given', async () => {
    const clock = manualClock(0);
    const pacer = pacerOn(clock, 100);
    expect(pacer.refused(8)).toBe(true);
    expect(pacer.rate).toBeCloseTo(70, 9);
    // Echoes: the 8 requests on their way when it was cut bring the same refusal.
    for (let i = 0; i < 7; i++) takeAt(pacer, clock, []);
    await clock.advance(1000);
    expect(pacer.refused(8)).toBe(false);
    takeAt(pacer, clock, []);
    await clock.advance(100);
    expect(pacer.refused(8)).toBe(true);
    expect(pacer.rate).toBeCloseTo(49, 9);
    expect(pacer.cuts).toBe(2);
    // Additive increase: 5 % of the rate cut (70), 3.5 a second more for each second of answers.
    await clock.advance(2000);
    pacer.succeeded();
    expect(pacer.rate).toBeCloseTo(56, 9);
    await clock.advance(100_000);
    pacer.succeeded();
    expect(pacer.rate).toBe(100);
    expect(pacer.ceiling).toBe(100);
  });

  it('a pacer without a rate starts pacing at the first refusal, at 0.7 of what it was sending, and stops again past 1,000 a second', async () => {
    const clock = manualClock(0);
    const pacer = pacerOn(clock, undefined);
    for (let i = 0; i < 200; i++) {
      expect(pacer.take()).toBeUndefined();
      await clock.advance(5);
    }
    expect(pacer.rate).toBeUndefined();
    expect(pacer.refused(0)).toBe(true);
    // 200 turns over the last second.
    expect(pacer.rate).toBeCloseTo(140, 9);
    expect(pacer.take()).toBeDefined();
    await clock.advance(100_000);
    pacer.succeeded();
    expect(pacer.rate).toBeUndefined();
    expect(pacer.take()).toBeUndefined();
  });

  it('never cuts below one request every 2 s', async () => {
    const clock = manualClock(0);
    const pacer = pacerOn(clock, 1);
    for (let i = 0; i < 10; i++) {
      takeAt(pacer, clock, []);
      await clock.advance(5000);
      expect(pacer.refused(0)).toBe(true);
    }
    expect(pacer.rate).toBe(0.5);
  });
});

describe('overran', () => {
  it('doubles the margin of the window beyond one second, up to 250 ms', async () => {
    const clock = manualClock(0);
    const pacer = pacerOn(clock, 4);
    expect(pacer.windowMs).toBe(1025);
    for (const want of [1050, 1100, 1200, 1250, 1250]) {
      pacer.overran();
      expect(pacer.windowMs).toBe(want);
    }
    const granted: number[] = [];
    for (let i = 0; i < 5; i++) takeAt(pacer, clock, granted);
    await clock.advanceTo(1300);
    // The fifth waits 1,250 ms for the first to leave the window.
    expect(granted).toEqual([0, 200, 450, 700, 1250]);
  });
});

describe("the service's RateLimit headers", () => {
  it('a policy lower than the rate given becomes the ceiling; a pacer without a rate paces by it', () => {
    const clock = manualClock(0);
    const paced = pacerOn(clock, 100);
    paced.observe({ quota: 100, windowSeconds: 10 });
    expect([paced.rate, paced.ceiling]).toEqual([10, 10]);
    paced.observe({ quota: 500, windowSeconds: 1 });
    expect([paced.rate, paced.ceiling]).toEqual([100, 100]);
    const unpaced = pacerOn(clock, undefined);
    unpaced.observe({ quota: 20 });
    expect([unpaced.rate, unpaced.ceiling]).toEqual([20, 20]);
  });

  it('nothing left in the window holds every turn until it resets, unless this pacer used it up itself', async () => {
    const clock = manualClock(0);
    const pacer = pacerOn(clock, 50);
    const granted: number[] = [];
    takeAt(pacer, clock, granted);
    // Someone else uses the key: 1 of our own in the window, none left.
    pacer.observe({ quota: 50, windowSeconds: 1, remaining: 0, resetSeconds: 2 });
    takeAt(pacer, clock, granted);
    await clock.advanceTo(1999);
    expect(granted).toEqual([0]);
    await clock.advanceTo(2000);
    expect(granted).toEqual([0, 2000]);

    const own = manualClock(0);
    const busy = pacerOn(own, 5);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) takeAt(busy, own, times);
    await own.advanceTo(900);
    expect(times).toHaveLength(5);
    busy.observe({ quota: 5, windowSeconds: 1, remaining: 0, resetSeconds: 1 });
    takeAt(busy, own, times);
    // Only the window rule: the sixth goes 1,025 ms after the first.
    await own.advanceTo(1025);
    expect(times).toEqual([0, 150, 350, 550, 750, 1025]);
  });
});

describe('parseRate', () => {
  it('reads whole and decimal numbers up to the maximum, 0 included', () => {
    expect(['45', '0.5', '.5', '0', ' 12 ', '1000', '2.'].map(parseRate)).toEqual([
      45, 0.5, 0.5, 0, 12, 1000, 2,
    ]);
    expect(MAX_RATE).toBe(1000);
  });

  it('refuses what is not a rate', () => {
    expect(['', 'abc', '-1', '1e3', '1001', '4/s', '.', 'Infinity', '0x10'].map(parseRate)).toEqual(
      Array(9).fill(undefined),
    );
  });
});

describe('paceForLimit', () => {
  it("is 90% of the account's limit, none when it reports none or more than the pacer can space", () => {
    expect(paceForLimit(50)).toBe(45);
    expect(paceForLimit('20')).toBe(18);
    expect(paceForLimit(1)).toBe(0.9);
    expect(paceForLimit(13)).toBe(11.7);
    expect(paceForLimit(1111)).toBe(999.9);
    for (const none of [null, undefined, 0, -5, 'fast', '', 1112, Number.NaN, {}])
      expect(paceForLimit(none)).toBeUndefined();
  });
});
