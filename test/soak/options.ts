// The sizes the chaos harness (lib.ts) runs at, one each for the two back ends' files: the soak
// (chaos.test.ts, chaos-postgres.test.ts) with its knobs SOAK_ROWS and SOAK_SEED, and the reduced
// run inside `npm test` (test/e2e/chaos-reduced*.test.ts).
import { testSeed } from '../helpers/seed.js';
import type { ChaosSuiteOptions } from './lib.js';

/** The soak: SOAK_ROWS rows (default 50,000; 60% of them distinct domains), seed SOAK_SEED (7). */
export function soakOptions(): ChaosSuiteOptions {
  const rows = Number(process.env.SOAK_ROWS ?? 50_000);
  const seed = Number(process.env.SOAK_SEED ?? 7);
  if (!Number.isInteger(rows) || rows < 100) throw new RangeError('SOAK_ROWS must be a whole number >= 100');
  if (!Number.isInteger(seed) || seed < 0) throw new RangeError('SOAK_SEED must be a whole number >= 0');
  return {
    rows,
    distinct: Math.floor(rows * 0.6),
    seed,
    kills: 8,
    budgetKills: 4,
    // Kills by delay land anywhere from start-up to well into a run.
    maxDelayMs: 20_000,
    rateLimit: 400,
    concurrency: 16,
    timeoutMs: 30 * 60_000,
  };
}

/**
 * The reduced run: 400 rows naming 100 domains, two kills and one under --budget. At 150 requests
 * a second a whole run sends its lookups within a second of its start-up, so kills planned within
 * 1.5 s land in the start-up or mid-run; a kill that misses a run which finished first is planned
 * again (runs.ts). The seed decides the input, the faults and the kills: a fixed one, printed, and
 * COMPANY_DATA_TEST_SEED replays another. The fixed one plans one kill by request count (mid-run,
 * answers in flight) and one by delay in the chaos run, and its kill by request count in the
 * budgeted one, and its input has rows whose website is no domain (exit 6).
 */
export function reducedOptions(): ChaosSuiteOptions {
  return {
    rows: 400,
    distinct: 100,
    seed: testSeed('chaos-reduced', 20260888),
    kills: 2,
    budgetKills: 1,
    maxDelayMs: 1500,
    rateLimit: 150,
    concurrency: 8,
    timeoutMs: 60_000,
  };
}
