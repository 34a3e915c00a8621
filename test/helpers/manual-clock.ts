// A clock and timers that a test moves by hand (the pacer's tests): exact times, never a timed assertion.

export const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A clock and timers moved by the test. */
export function manualClock(start = 5_000) {
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
