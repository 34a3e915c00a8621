import { defineConfig } from 'vitest/config';

// The soak's files, one per back end of the store; SOAK_STORE names one to run it alone.
const files = { sqlite: 'test/soak/chaos.test.ts', postgres: 'test/soak/chaos-postgres.test.ts' };
const chosen = process.env.SOAK_STORE ?? '';
if (chosen !== '' && !(chosen in files)) {
  throw new Error(`SOAK_STORE must be sqlite or postgres (or unset for both), not ${JSON.stringify(chosen)}`);
}

export default defineConfig({
  test: {
    include: chosen === '' ? Object.values(files) : [files[chosen as keyof typeof files]],
    testTimeout: 600_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One soak at a time: two at once on a small machine would share its cores and lengthen both,
    // and each is bound by its sandbox's rate limit anyway.
    fileParallelism: false,
  },
});
