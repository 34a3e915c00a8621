// The sandbox's reply clock: a delayed reply never leaves before its deadline, waits resolve in
// deadline order whatever order they were asked in, and closing fails what is still waiting.
// Lower bounds and order only: nothing here depends on how fast the machine is.
import { describe, expect, it } from 'vitest';
import { createReplyClock, monotonicMs } from '../../src/sandbox/reply-clock.js';

describe('createReplyClock', () => {
  it('resolves each wait at or after its deadline, in deadline order', async () => {
    const clock = createReplyClock();
    try {
      // The worker starts with the first wait; these deadlines must all lie ahead of it.
      await clock.at(monotonicMs() + 1);
      // All eight waits are asked for before the first deadline: 200 ms ahead leaves room for a
      // loaded machine to pause this thread mid-loop (with 0.3 ms ahead, a pause of a few ms had
      // let the 5-7.5 ms waits resolve before the 0.3 ms one was even asked for).
      const start = monotonicMs() + 200;
      const offsets = [30, 5, 20, 5.5, 7.5, 12, 0.3, 14];
      const order: number[] = [];
      const late = await Promise.all(
        offsets.map(async (offset) => {
          const deadline = start + offset;
          await clock.at(deadline);
          order.push(offset);
          return monotonicMs() - deadline;
        }),
      );
      for (const l of late) expect(l).toBeGreaterThanOrEqual(0);
      expect(order).toEqual([...offsets].sort((a, b) => a - b));
    } finally {
      clock.close(new Error('done'));
    }
  });

  it('resolves a deadline already past at once, and one ahead after warm()', async () => {
    const clock = createReplyClock();
    try {
      await expect(clock.at(monotonicMs() - 1)).resolves.toBeUndefined();
      clock.warm();
      const deadline = monotonicMs() + 5;
      await clock.at(deadline);
      expect(monotonicMs()).toBeGreaterThanOrEqual(deadline);
    } finally {
      clock.close(new Error('done'));
    }
  });

  it('close() rejects the waits still pending, and every later one', async () => {
    const clock = createReplyClock();
    const early = clock.at(monotonicMs() + 1);
    const pending = clock.at(monotonicMs() + 60_000);
    await early;
    const reason = new Error('closing');
    clock.close(reason);
    await expect(pending).rejects.toBe(reason);
    await expect(clock.at(monotonicMs() + 10)).rejects.toBe(reason);
  });
});
