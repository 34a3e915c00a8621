import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/soak/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most end-to-end files wait on child processes and loopback I/O, not the CPU: a few more
    // workers than the two cores overlap those waits (measured on the 2-core box: 187 s -> 108 s).
    maxWorkers: 3,
  },
});
