// The reduced chaos run of test/e2e/chaos-reduced.test.ts on a PostgreSQL store: the same sizes and
// seed (test/soak/options.ts), each job with a database of its own on a real server started for
// this file, read between runs from the outside (test/helpers/store-postgres.ts). Where this
// machine has no PostgreSQL, postgresMissing() says so (and fails the run under CI=true).
import { describe } from 'vitest';
import { postgresMissing } from '../helpers/postgres.js';
import { chaosSuite } from '../soak/lib.js';
import { reducedOptions } from '../soak/options.js';

describe.runIf(!postgresMissing())('chaos, reduced, PostgreSQL store', () => {
  chaosSuite({ ...reducedOptions(), store: 'postgres' });
});
