import { describe, expect, it } from 'vitest';
import { createScheduler, type Slot } from '../../src/batch/scheduler.js';

/** A clock the test moves by hand, so pauses are checked without waiting or timing. */
function manualClock() {
  let t = 1_000_000;
  const timers: Array<{ at: number; fn: () => void }> = [];
  return {
    now: () => t,
    setTimer(fn: () => void, ms: number) {
      timers.push({ at: t + ms, fn });
      return {};
    },
    advance(ms: number) {
      t += ms;
      for (const timer of timers.splice(0)) {
        if (timer.at <= t) timer.fn();
        else timers.push(timer);
      }
    },
    pendingTimers: () => timers.length,
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('createScheduler', () => {
  it('never has more than the limit in flight and serves waiters in order', async () => {
    const s = createScheduler({ concurrency: 2 });
    const got: number[] = [];
    const slots: Slot[] = [];
    for (let i = 0; i < 5; i++)
      s.acquire().then((slot) => {
        got.push(i);
        slots.push(slot!);
      });
    await flush();
    expect(got).toEqual([0, 1]);
    expect(s.inFlight).toBe(2);
    expect(s.waiting).toBe(3);
    s.release(slots[0], 'success');
    await flush();
    expect(got).toEqual([0, 1, 2]);
    expect(s.inFlight).toBe(2);
  });

  it('ignores a second release of the same slot', async () => {
    const s = createScheduler({ concurrency: 1 });
    const a = (await s.acquire())!;
    s.release(a, 'success');
    s.release(a, 'success');
    expect(s.inFlight).toBe(0);
  });

  it('halves the limit on a 429, pauses everyone for Retry-After, then lets work resume', async () => {
    const clock = manualClock();
    const s = createScheduler({ concurrency: 8, now: clock.now, setTimer: clock.setTimer });
    const held = await Promise.all(Array.from({ length: 8 }, () => s.acquire()));
    s.rateLimited(2);
    expect(s.limit).toBe(4);
    expect(s.pausedUntil).toBe(clock.now() + 2000);
    for (const slot of held) s.release(slot!, 'failure');
    let started = 0;
    for (let i = 0; i < 6; i++) s.acquire().then(() => started++);
    await flush();
    expect(started).toBe(0); // paused, although slots are free
    clock.advance(1999);
    await flush();
    expect(started).toBe(0);
    clock.advance(1);
    await flush();
    expect(started).toBe(4); // the new, lower limit
  });

  it('cuts once per pause however many workers report the same 429 window', () => {
    const clock = manualClock();
    const s = createScheduler({ concurrency: 16, now: clock.now, setTimer: clock.setTimer });
    for (let i = 0; i < 10; i++) s.rateLimited(1);
    expect(s.limit).toBe(8);
    expect(s.rateLimitCuts).toBe(1);
    clock.advance(1000);
    s.rateLimited(1);
    expect(s.limit).toBe(4);
  });

  it('never cuts below one and treats a missing Retry-After as one second', () => {
    const clock = manualClock();
    const s = createScheduler({ concurrency: 2, now: clock.now, setTimer: clock.setTimer });
    for (let i = 0; i < 5; i++) {
      s.rateLimited(undefined);
      expect(s.pausedUntil).toBe(clock.now() + 1000);
      clock.advance(1000);
    }
    expect(s.limit).toBe(1);
  });

  it('grows back by one after every run of consecutive successes, up to the configured concurrency', async () => {
    const clock = manualClock();
    const s = createScheduler({ concurrency: 4, growAfter: 3, now: clock.now, setTimer: clock.setTimer });
    s.rateLimited(1);
    s.rateLimited(1);
    expect(s.limit).toBe(2);
    clock.advance(1000);
    const succeed = async (n: number) => {
      for (let i = 0; i < n; i++) s.release((await s.acquire())!, 'success');
    };
    await succeed(2);
    expect(s.limit).toBe(2);
    s.release((await s.acquire())!, 'failure'); // breaks the run
    await succeed(2);
    expect(s.limit).toBe(2);
    await succeed(1);
    expect(s.limit).toBe(3);
    await succeed(30);
    expect(s.limit).toBe(4);
  });

  it('counts consecutive failures and resets on a success', async () => {
    const s = createScheduler({ concurrency: 1 });
    for (let i = 0; i < 3; i++) s.release((await s.acquire())!, 'failure');
    expect(s.consecutiveFailures).toBe(3);
    s.release((await s.acquire())!, 'success');
    expect(s.consecutiveFailures).toBe(0);
  });

  it('after stop, waiters and new acquirers get null while in-flight work drains', async () => {
    const s = createScheduler({ concurrency: 1 });
    const first = (await s.acquire())!;
    const waiter = s.acquire();
    s.stop();
    expect(await waiter).toBeNull();
    expect(await s.acquire()).toBeNull();
    let idle = false;
    s.idle().then(() => {
      idle = true;
    });
    await flush();
    expect(idle).toBe(false);
    s.release(first, 'success');
    await flush();
    expect(idle).toBe(true);
  });
});
