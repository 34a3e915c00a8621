// The chaos soak (test/soak/chaos.test.ts) at a size that fits `npm test`: the same harness and
// invariants, 1,000 rows naming 250 domains, a few kills. At 150 requests a second a whole run
// takes under two seconds, so kills planned within 1.5 s land mid-run; a kill that misses a run
// which finished first is planned again (test/soak/runs.ts). The seed decides the input, the
// faults and the kills: a fixed one, printed, and COMPANY_DATA_TEST_SEED replays another.
import { describe } from 'vitest';
import { testSeed } from '../helpers/seed.js';
import { chaosSuite } from '../soak/lib.js';

describe('chaos, reduced', () => {
  chaosSuite({
    rows: 1000,
    distinct: 250,
    seed: testSeed('chaos-reduced', 20260826),
    kills: 3,
    budgetKills: 2,
    maxDelayMs: 1500,
    rateLimit: 150,
    concurrency: 8,
    timeoutMs: 60_000,
  });
});
