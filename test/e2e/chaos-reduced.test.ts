// The chaos soak (test/soak/chaos.test.ts) at a size that fits `npm test`: the same harness and
// invariants, 400 rows naming 100 domains, two kills and one under --budget. At 150 requests a
// second a whole run sends its lookups within a second of its start-up, so kills planned within
// 1.5 s land in the start-up or mid-run; a kill that misses a run which finished first is planned
// again (test/soak/runs.ts). The seed decides the input, the faults and the kills: a fixed one,
// printed, and COMPANY_DATA_TEST_SEED replays another. The fixed one plans one kill by request
// count (mid-run, answers in flight) and one by delay in the chaos run, and its kill by request
// count in the budgeted one, and its input has rows whose website is no domain (exit 6).
import { describe } from 'vitest';
import { testSeed } from '../helpers/seed.js';
import { chaosSuite } from '../soak/lib.js';

describe('chaos, reduced', () => {
  chaosSuite({
    rows: 400,
    distinct: 100,
    seed: testSeed('chaos-reduced', 20260888),
    kills: 2,
    budgetKills: 1,
    maxDelayMs: 1500,
    rateLimit: 150,
    concurrency: 8,
    timeoutMs: 60_000,
  });
});
