// The chaos soak (`npm run test:soak`): a 50,000-row batch (SOAK_ROWS to change it; 60% of the
// rows name distinct domains) against a sandbox with 5% random faults and a tight rate limit,
// the client SIGKILLed at seeded random moments and re-run with the same command until done.
// Checked against a fault-free run: every row once and in order, the same output bytes, the
// same credits plus exactly the purchases a kill took in flight, the --budget of every
// invocation respected, nothing left behind. SOAK_SEED replays another schedule of kills;
// SOAK_REPORT=<file> appends a summary of each chaos run (runs, kills, faults, repeats).
import { describe } from 'vitest';
import { chaosSuite } from './lib.js';

const rows = Number(process.env.SOAK_ROWS ?? 50_000);
const seed = Number(process.env.SOAK_SEED ?? 7);
if (!Number.isInteger(rows) || rows < 100) throw new RangeError('SOAK_ROWS must be a whole number >= 100');
if (!Number.isInteger(seed) || seed < 0) throw new RangeError('SOAK_SEED must be a whole number >= 0');

describe(`chaos soak, ${rows} rows`, () => {
  chaosSuite({
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
  });
});
