// The rule for tests that cannot run on a machine: they say why, and fail under CI=true unless allowed.
import { expect, it } from 'vitest';
import { cannotRunHere } from './helpers/skips.js';

it('says why, and fails under CI=true unless allowed', () => {
  const saved = { ...process.env };
  try {
    delete process.env.CI;
    expect(cannotRunHere('mount', undefined)).toBe(false);
    expect(cannotRunHere('mount', 'mount refused')).toBe(true);
    process.env.CI = 'true';
    expect(() => cannotRunHere('mount', 'mount refused')).toThrow('COMPANY_DATA_TEST_ALLOW_SKIP=mount');
    process.env.COMPANY_DATA_TEST_ALLOW_SKIP = 'devfull, mount';
    expect(cannotRunHere('mount', 'mount refused')).toBe(true);
  } finally {
    process.env = saved;
  }
});
