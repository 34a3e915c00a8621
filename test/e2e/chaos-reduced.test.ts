// The chaos soak (test/soak/chaos.test.ts) at a size that fits `npm test`: the same harness and
// invariants, 2,000 rows, a few kills.
import { describe } from 'vitest';
import { chaosSuite } from '../soak/lib.js';

describe('chaos, reduced', () => {
  chaosSuite({
    rows: 2000,
    distinct: 450,
    seed: 20260826,
    kills: 3,
    budgetKills: 2,
    maxDelayMs: 3000,
    rateLimit: 150,
    concurrency: 8,
    timeoutMs: 60_000,
  });
});
