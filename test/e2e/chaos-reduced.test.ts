// The chaos soak (test/soak/chaos.test.ts) at a size that fits `npm test`, on a SQLite store: the
// same harness and invariants at 400 rows naming 100 domains, two kills and one under --budget
// (test/soak/options.ts, reducedOptions, says why these sizes and how the seed is replayed).
// test/e2e/chaos-reduced-postgres.test.ts runs the same on PostgreSQL.
import { describe } from 'vitest';
import { chaosSuite } from '../soak/lib.js';
import { reducedOptions } from '../soak/options.js';

describe('chaos, reduced, SQLite store', () => {
  chaosSuite({ ...reducedOptions(), store: 'sqlite' });
});
