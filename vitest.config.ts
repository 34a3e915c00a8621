import { defineConfig } from 'vitest/config';

const common = { testTimeout: 30_000, hookTimeout: 30_000, pool: 'forks' } as const;

export default defineConfig({
  test: {
    ...common,
    // Most end-to-end files wait on child processes and loopback I/O, not the CPU: a few more
    // workers than the two cores overlap those waits (measured on the 2-core box: 187 s -> 108 s).
    maxWorkers: 3,
    projects: [
      {
        test: {
          ...common,
          name: 'in-process',
          include: ['test/**/*.test.ts'],
          exclude: ['test/soak/**', 'test/e2e/**'],
          // These files run main() and the sandbox in the worker itself and leave nothing behind (no
          // globals; the environment and working directory restored), so a worker keeps the modules
          // it loaded instead of importing src/ again for every file (measured on the 2-core box:
          // test/commands alone 108 s -> 54 s).
          isolate: false,
          // Property tests from a fixed seed, printed, replayable (test/helpers/seed.ts).
          setupFiles: ['test/helpers/fast-check-seed.ts', 'test/helpers/state-cleanup.ts'],
        },
      },
      // The files that start the built binary as a process. They too leave no globals behind (what
      // they start, they stop; a working directory they change, they restore), so a worker keeps
      // the helpers and src/ modules it loaded from one file to the next: measured side by side on
      // the 2-core box, the whole run took about 20 CPU-seconds less (docs/performance.md).
      {
        test: {
          ...common,
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          isolate: false,
          setupFiles: ['test/helpers/state-cleanup.ts'],
        },
      },
    ],
  },
});
