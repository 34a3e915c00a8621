// The chaos soak (`npm run test:soak`), on a SQLite store: a 50,000-row batch (SOAK_ROWS to change
// it; 60% of the rows name distinct domains) against a sandbox with 5% random faults and a tight
// rate limit, the client SIGKILLed at seeded random moments and re-run with the same command until
// done. Checked against a fault-free run: every row once and in order, the same output bytes, the
// same credits plus exactly the purchases a kill took in flight, the --budget of every invocation
// respected, nothing left behind. SOAK_SEED replays another schedule of kills; SOAK_REPORT=<file>
// appends a summary of each chaos run (runs, kills, faults, repeats). chaos-postgres.test.ts runs
// the same on PostgreSQL; SOAK_STORE=sqlite or SOAK_STORE=postgres runs only that back end's file
// (vitest.soak.config.ts), one after the other otherwise.
import { describe } from 'vitest';
import { chaosSuite } from './lib.js';
import { soakOptions } from './options.js';

const options = soakOptions();

describe(`chaos soak, ${options.rows} rows, SQLite store`, () => {
  chaosSuite({ ...options, store: 'sqlite' });
});
