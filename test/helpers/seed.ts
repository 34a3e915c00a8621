// The seed of a random test: a fixed one by default, so a run is the same every time; printed, so
// a failure names it; and taken from COMPANY_DATA_TEST_SEED when set, so a failure seen with
// another seed can be replayed (or new schedules tried).

/** The names whose seed this process has said already (a worker may run many files). */
const said = new Set<string>();

/** The seed `name` runs with: COMPANY_DATA_TEST_SEED when set, else `fallback`; said on stderr once. */
export function testSeed(name: string, fallback: number): number {
  const given = process.env.COMPANY_DATA_TEST_SEED;
  const seed = given === undefined || given === '' ? fallback : Number(given);
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new RangeError(`COMPANY_DATA_TEST_SEED must be a whole number >= 0, not ${JSON.stringify(given)}`);
  }
  if (!said.has(name))
    process.stderr.write(`${name}: seed ${seed} (COMPANY_DATA_TEST_SEED=${seed} replays it)\n`);
  said.add(name);
  return seed;
}
