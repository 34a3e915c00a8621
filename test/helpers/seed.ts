// The seed of a random test: a fixed one by default, so a run is the same every time; printed, so
// a failure names it; and taken from COMPANY_DATA_TEST_SEED when set, so a failure seen with
// another seed can be replayed (or new schedules tried).

/** The seed `name` runs with: COMPANY_DATA_TEST_SEED when set, else `fallback`; said on stderr. */
export function testSeed(name: string, fallback: number): number {
  const given = process.env.COMPANY_DATA_TEST_SEED;
  const seed = given === undefined || given === '' ? fallback : Number(given);
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new RangeError(`COMPANY_DATA_TEST_SEED must be a whole number >= 0, not ${JSON.stringify(given)}`);
  }
  process.stderr.write(`${name}: seed ${seed} (COMPANY_DATA_TEST_SEED=${seed} replays it)\n`);
  return seed;
}
