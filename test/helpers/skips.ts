// A test that cannot run on this machine (no right to mount, no /dev/full) says why, never skips
// silently; under CI=true the skip fails the run unless COMPANY_DATA_TEST_ALLOW_SKIP names its kind
// (a comma-separated list, e.g. `mount,devfull`), so that a green CI never hides a test that did
// not run.

/** True when the tests of `kind` must be skipped here, having said why; throws under CI=true. */
export function cannotRunHere(kind: string, reason: string | undefined): boolean {
  if (reason === undefined) return false;
  const allowed = (process.env.COMPANY_DATA_TEST_ALLOW_SKIP ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (process.env.CI === 'true' && !allowed.includes(kind)) {
    throw new Error(
      `the ${kind} tests cannot run here (${reason}); under CI=true that fails the run: fix the machine, or allow it with COMPANY_DATA_TEST_ALLOW_SKIP=${kind}`,
    );
  }
  process.stderr.write(`skipped, the ${kind} tests: ${reason}\n`);
  return true;
}
