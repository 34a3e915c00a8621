// When a delayed reply may leave: the sandbox's --latency and `delay` faults, to about a tenth of
// a millisecond, and never early.
//
// Node's timers count whole milliseconds from the event loop's cached clock, so a 20 ms timer
// fires anywhere from ~19 to ~22 ms after the request arrived; topped up so that it was never
// early, the sandbox's "20 ms" took 20.9 ms on average (measured at 800 replies/s), and every
// client measured against it, the bench's ideal of 16 / 0.020 s included, paid for that. Here one
// worker thread sleeps until the earliest deadline with Atomics.wait (sub-millisecond timeouts,
// no spinning) and posts the ids that are due; the main thread resolves their waits. A sandbox
// with --latency starts the worker with the server (it takes tens of milliseconds, which the
// first replies would otherwise wait for); one without starts it for its first delay fault.
import { MessageChannel, Worker } from 'node:worker_threads';

/** Milliseconds on the monotonic clock both threads read. */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

// The worker: deadlines arrive on a port as [id, ms]; it waits on the shared counter, which the
// main thread bumps after each post, until the earliest deadline or a new post; due ids go back.
const WORKER_SOURCE = `
const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
const signal = new Int32Array(workerData.shared);
const port = workerData.port;
const now = () => Number(process.hrtime.bigint()) / 1e6;
const ids = [];
const deadlines = [];
for (;;) {
  const seen = Atomics.load(signal, 0);
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    if (m.message === null) process.exit(0);
    const [id, at] = m.message;
    let i = deadlines.length;
    while (i > 0 && deadlines[i - 1] > at) i--;
    ids.splice(i, 0, id);
    deadlines.splice(i, 0, at);
  }
  const t = now();
  let due = 0;
  while (due < deadlines.length && deadlines[due] <= t) due++;
  if (due > 0) {
    parentPort.postMessage(ids.splice(0, due));
    deadlines.splice(0, due);
  }
  // Never an unbounded wait: a thread blocked in Atomics.wait cannot be terminated, and the
  // process would hang at exit if close() was never called.
  if (deadlines.length === 0) Atomics.wait(signal, 0, seen, 1000);
  else Atomics.wait(signal, 0, seen, Math.min(1000, Math.max(0, deadlines[0] - now())));
}
`;

export interface ReplyClock {
  /** Starts the worker now (a thread takes tens of milliseconds to start) instead of on first use. */
  warm(): void;
  /** Resolves once the monotonic clock reads at least `deadline` (monotonicMs()). */
  at(deadline: number): Promise<void>;
  /** Rejects every wait still pending with `reason` and stops the worker. */
  close(reason: unknown): void;
}

export function createReplyClock(): ReplyClock {
  let worker: Worker | undefined;
  let post: ((id: number, deadline: number) => void) | undefined;
  let stop: (() => void) | undefined;
  const pending = new Map<
    number,
    { deadline: number; resolve: () => void; reject: (reason: unknown) => void }
  >();
  let nextId = 0;
  let closed: { reason: unknown } | undefined;

  const start = () => {
    const shared = new SharedArrayBuffer(4);
    const signal = new Int32Array(shared);
    const { port1, port2 } = new MessageChannel();
    worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { shared, port: port2 },
      transferList: [port2],
    });
    worker.unref();
    worker.on('message', (due: number[]) => {
      const now = monotonicMs();
      for (const id of due) {
        const waiter = pending.get(id);
        if (!waiter) continue;
        // Checked here too, so "never early" does not rest on the worker's arithmetic alone.
        if (now < waiter.deadline) {
          post!(id, waiter.deadline);
          continue;
        }
        pending.delete(id);
        waiter.resolve();
      }
    });
    const wake = () => {
      Atomics.add(signal, 0, 1);
      Atomics.notify(signal, 0);
    };
    post = (id, deadline) => {
      port1.postMessage([id, deadline]);
      wake();
    };
    stop = () => {
      port1.postMessage(null);
      wake();
      port1.close();
    };
  };

  return {
    warm() {
      if (!worker && !closed) start();
    },
    at(deadline) {
      if (closed) return Promise.reject(closed.reason);
      if (monotonicMs() >= deadline) return Promise.resolve();
      if (!worker) start();
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        pending.set(id, { deadline, resolve, reject });
        post!(id, deadline);
      });
    },
    close(reason) {
      closed ??= { reason };
      for (const waiter of pending.values()) waiter.reject(reason);
      pending.clear();
      stop?.();
    },
  };
}
