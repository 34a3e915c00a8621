// The callers waiting for a turn, first come first served; a caller whose signal aborts leaves
// the line at once, its promise rejected with the signal's reason.

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export interface Waiters {
  readonly length: number;
  /** A place in the line: resolved when let go, rejected when `signal` aborts first. */
  join(signal?: AbortSignal): Promise<void>;
  /** Lets the first in line go. */
  releaseFirst(): void;
  /** Lets everyone go; says how many. */
  releaseAll(): number;
}

export function createWaiters(): Waiters {
  const queue: Waiter[] = [];
  const settle = (waiter: Waiter, reason?: unknown) => {
    waiter.signal?.removeEventListener('abort', waiter.onAbort!);
    if (reason === undefined) waiter.resolve();
    else waiter.reject(reason);
  };
  return {
    get length() {
      return queue.length;
    },
    join(signal) {
      return new Promise<void>((resolve, reject) => {
        const waiter: Waiter = { resolve, reject, signal };
        if (signal) {
          waiter.onAbort = () => {
            const index = queue.indexOf(waiter);
            if (index !== -1) queue.splice(index, 1);
            settle(waiter, signal.reason);
          };
          signal.addEventListener('abort', waiter.onAbort, { once: true });
        }
        queue.push(waiter);
      });
    },
    releaseFirst() {
      settle(queue.shift()!);
    },
    releaseAll() {
      const all = queue.splice(0);
      for (const waiter of all) settle(waiter);
      return all.length;
    },
  };
}
