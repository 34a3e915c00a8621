// SIGINT / SIGTERM during a batch: the first stops sending and lets the run drain and flush; a
// second one ends the process at once (every answer so far is already in the result store).
import type { IO } from '../types.js';

export interface SignalWatch {
  readonly interrupted: boolean;
  dispose(): void;
}

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export function watchSignals(io: IO, onFirst: () => void): SignalWatch {
  let interrupted = false;
  const handler = (signal: NodeJS.Signals) => {
    if (interrupted) {
      dispose();
      // Re-raised with the default action, so the shell sees death by that signal (exit 130 for
      // SIGINT) without waiting for anything.
      process.kill(process.pid, signal);
      // Another listener (a spinner library's cursor restorer) can swallow the default action.
      setTimeout(() => process.exit(130), 250);
      return;
    }
    interrupted = true;
    io.warn(`${signal}: no new requests; finishing those in flight (signal again to quit at once)`);
    onFirst();
  };
  const dispose = () => {
    for (const signal of SIGNALS) process.off(signal, handler);
  };
  for (const signal of SIGNALS) process.on(signal, handler);
  return {
    get interrupted() {
      return interrupted;
    },
    dispose,
  };
}
