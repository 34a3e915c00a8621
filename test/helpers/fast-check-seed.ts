// Every property test (fast-check) runs from one fixed seed, printed, so a failure replays exactly;
// COMPANY_DATA_TEST_SEED tries another (fast-check names the seed and path of a failure too).
import fc from 'fast-check';
import { testSeed } from './seed.js';

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: testSeed('fast-check', 20261126) });
