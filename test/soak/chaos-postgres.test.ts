// The chaos soak of chaos.test.ts on a PostgreSQL store: the same sizes and knobs (SOAK_ROWS,
// SOAK_SEED, SOAK_REPORT; options.ts), each job with a database of its own on a real server
// started for this file, read between runs from the outside (test/helpers/store-postgres.ts).
// `SOAK_STORE=postgres npm run test:soak` runs this file alone (vitest.soak.config.ts). Where this
// machine has no PostgreSQL, postgresMissing() says so (and fails the run under CI=true).
import { describe } from 'vitest';
import { postgresMissing } from '../helpers/postgres.js';
import { chaosSuite } from './lib.js';
import { soakOptions } from './options.js';

const options = soakOptions();

describe.runIf(!postgresMissing())(`chaos soak, ${options.rows} rows, PostgreSQL store`, () => {
  chaosSuite({ ...options, store: 'postgres' });
});
