// After each test file, the scratch stores its CLI runs were given (test/helpers/state.ts) go.
import { afterAll } from 'vitest';
import { removeStateRoot } from './state.js';

afterAll(removeStateRoot);
