// The pacer of --rate (src/pace.ts) on a clock the test moves by hand: exact grant times and
// waits, never a timed assertion.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPacer, MAX_RATE, type Pacer, paceForLimit, parseRate, type RateSource } from '../src/pace.js';

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A clock and timers moved by the test. */
function manualClock(start = 5_000) {
  let t = start;
  let timers: Array<{ at: number; fn: () => void; id: number }> = [];
  let ids = 0;
  const clock = {
    now: () => t,
    setTimer(fn: () => void, ms: number) {
      const id = ++ids;
      timers.push({ at: t + ms, fn, id });
      return id;
    },
    clearTimer(id: unknown) {
      timers = timers.filter((timer) => timer.id !== id);
    },
    /** Moves to `to`, firing the timers due on the way in their order. */
    async advanceTo(to: number) {
      for (;;) {
        const due = timers.filter((timer) => timer.at <= to).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        timers = timers.filter((timer) => timer !== due);
        t = Math.max(t, due.at);
        due.fn();
        await flush();
      }
      t = to;
      await flush();
    },
    advance: (ms: number) => clock.advanceTo(t + ms),
    /** Moves to `to` first, then fires the timers due: a busy event loop runs them late. */
    async lateTo(to: number) {
      t = to;
      const due = timers.filter((timer) => timer.at <= to);
      timers = timers.filter((timer) => timer.at > to);
      for (const timer of due) timer.fn();
      await flush();
    },
    nextTimer: () => Math.min(...timers.map((timer) => timer.at)),
    timers: () => timers.length,
  };
  return clock;
}

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
  it('grants the first turn at once and the next ones 1000/rate ms apart, in order', async () => {
    const clock = manualClock();
    const pacer = pacerOn(clock, 4);
    expect(pacer.take()).toBeUndefined();
    const granted: number[] = [];
    for (let i = 0; i < 3; i++) takeAt(pacer, clock, granted);
    expect(pacer.waiting).toBe(3);
    await expectGrants(clock, granted, [
      [5249, []],
      [5250, [5250]],
      [5499, [5250]],
      [5500, [5250, 5500]],
      [5750, [5250, 5500, 5750]],
    ]);
    expect(pacer.waiting).toBe(0);
    expect(clock.timers()).toBe(0);
  });

  it('makes no promise for a turn that is free, and never makes up time nobody used', async () => {
    const clock = manualClock();
    const pacer = pacerOn(clock, 4);
    const granted: number[] = [];
    takeAt(pacer, clock, granted); // 5000
    await clock.advance(400);
    // 150 ms had been free since 5250: not a credit for a burst now.
    expect(pacer.take()).toBeUndefined();
    granted.push(clock.now()); // 5400
    takeAt(pacer, clock, granted);
    takeAt(pacer, clock, granted);
    await clock.advance(1000);
    expect(granted).toEqual([5000, 5400, 5650, 5900]);
  });

  it('spaces the turns from when they were granted when a timer fires late', async () => {
    const clock = manualClock();
    const pacer = pacerOn(clock, 10);
    const granted: number[] = [];
    for (let i = 0; i < 3; i++) takeAt(pacer, clock, granted);
    expect(clock.nextTimer()).toBe(5100);
    // The event loop was busy: the timer runs at 5130, and the next turn is 100 ms after that.
    await clock.lateTo(5130);
    await expectGrants(clock, granted, [
      [5130, [5000, 5130]],
      [5229, [5000, 5130]],
      [5230, [5000, 5130, 5230]],
    ]);
  });

  it('holds every turn for a pause, then spaces the waiters from its end', async () => {
    const clock = manualClock();
    const pacer = pacerOn(clock, 4);
    const granted: number[] = [];
    takeAt(pacer, clock, granted);
    takeAt(pacer, clock, granted);
    pacer.holdFor(1000);
    takeAt(pacer, clock, granted);
    await expectGrants(clock, granted, [
      [5999, [5000]],
      [6000, [5000, 6000]],
      [6250, [5000, 6000, 6250]],
    ]);
    // A pause shorter than what is already due changes nothing.
    pacer.holdFor(100);
    takeAt(pacer, clock, granted);
    await clock.advanceTo(6500);
    expect(granted).toEqual([5000, 6000, 6250, 6500]);
    // And a pause with nobody waiting holds the next caller.
    await clock.advanceTo(7000);
    pacer.holdFor(300);
    expect(pacer.take()).toBeDefined();
  });

  it('holds any window of one second, wherever it starts, to at most the rate', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(1, 3, 4, 45, 50),
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 120 }),
        async (rate, arrivals) => {
          const clock = manualClock(0);
          const pacer = pacerOn(clock, rate);
          const granted: number[] = [];
          for (const at of [...arrivals].sort((a, b) => a - b)) {
            await clock.advanceTo(Math.max(at, clock.now()));
            takeAt(pacer, clock, granted);
          }
          await clock.advanceTo(clock.now() + ((arrivals.length + 1) * 1000) / rate);
          expect(granted).toHaveLength(arrivals.length);
          for (const start of granted) {
            const inWindow = granted.filter((g) => g >= start && g < start + 1000).length;
            expect(inWindow).toBeLessThanOrEqual(rate);
          }
          // As fast as that allows: a turn waits only for the one before it.
          for (let i = 1; i < granted.length; i++)
            expect(granted[i] - granted[i - 1]).toBeGreaterThanOrEqual(1000 / rate - 1e-9);
        },
      ),
      { numRuns: 60 },
    );
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
    pacer.take();
    const controller = new AbortController();
    const aborted = pacer.take(controller.signal)!;
    const granted: number[] = [];
    takeAt(pacer, clock, granted);
    controller.abort(new Error('stop waiting'));
    await expect(aborted).rejects.toThrow('stop waiting');
    await clock.advanceTo(5250);
    expect(granted).toEqual([5250]);
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
    // Asked at 5000 (a request under the same limit): the first grant is one interval later.
    await clock.advanceTo(6500);
    expect(granted).toEqual([5500, 6000, 6500]);
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
