// Figure 1, start-up: the CLI's wall time against a bare `node -e 0`, many runs interleaved so
// that the machine's load drifts over both alike, compared by median. CPU time (mean, as GNU time
// reports it in 10 ms steps) is given beside it: it is what the load of the machine changes least.
import { join } from 'node:path';
import { BIN, cliEnv, startSandbox, timeSync } from './proc.mjs';
import { figure, mean, median } from './stats.mjs';

const NODE = process.execPath;

/**
 * Runs each command `rounds` times, interleaved, alternating which goes first in a round so that
 * neither always follows the other. Returns the results of each command in run order.
 */
export function interleave(commands, rounds) {
  const results = commands.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const order = commands.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) results[i].push(commands[i]());
  }
  return results;
}

function summary(runs, baseRuns) {
  const wall = runs.map((r) => r.ms);
  const baseWall = baseRuns.map((r) => r.ms);
  const cpu = mean(runs.map((r) => r.cpuMs));
  const baseCpu = mean(baseRuns.map((r) => r.cpuMs));
  return {
    medianMs: round1(median(wall)),
    ratio: median(wall) / median(baseWall),
    details: {
      medianMs: round1(median(wall)),
      nodeMedianMs: round1(median(baseWall)),
      minMs: round1(Math.min(...wall)),
      nodeMinMs: round1(Math.min(...baseWall)),
      cpuMeanMs: round1(cpu),
      nodeCpuMeanMs: round1(baseCpu),
      cpuRatio: round2(cpu / baseCpu),
      runs: wall.length,
    },
  };
}

export async function startupFigures({ rounds, scratch, log }) {
  const env = cliEnv(scratch);
  const bare = () => timeSync([NODE, '-e', '0'], env, scratch);
  const version = () => timeSync([NODE, BIN, '--version'], env, scratch);

  // Warm the page cache for every file involved before timing anything.
  for (let i = 0; i < 3; i++) {
    bare();
    version();
  }
  log(`start-up: ${rounds} interleaved runs each of node -e 0 and company-data --version`);
  const [bareRuns, versionRuns] = interleave([bare, version], rounds);

  const sandbox = await startSandbox({ companies: 1000, scratch });
  let runs;
  try {
    const args = [NODE, BIN, '--base-url', sandbox.url, 'errors', '-o', 'json'];
    let coldRun = 0;
    // Cold: an empty cache directory per run, so every run sends GET /api/errors and loads the
    // HTTP client. Warm: the catalog cached on disk by an earlier run, what a repeated call costs.
    const cold = () =>
      timeSync(args, cliEnv(scratch, { XDG_CACHE_HOME: join(scratch, `cold-${coldRun++}`) }), scratch);
    const warm = () => timeSync(args, env, scratch);
    for (let i = 0; i < 3; i++) {
      cold();
      warm();
    }
    log(`start-up: ${rounds} interleaved runs each of node -e 0, errors -o json (request sent, cached)`);
    runs = interleave([bare, cold, warm], rounds);
  } finally {
    await sandbox.stop();
  }
  const versionSummary = summary(versionRuns, bareRuns);
  const cold = summary(runs[1], runs[0]);
  const warm = summary(runs[2], runs[0]);
  return [
    figure({
      id: 'startup.version',
      name: 'start-up: --version vs node -e 0',
      value: versionSummary.medianMs,
      unit: 'ms',
      ratio: versionSummary.ratio,
      target: { op: '<=', value: 1.3 },
      details: versionSummary.details,
    }),
    figure({
      id: 'startup.errors',
      name: 'start-up: errors -o json vs node -e 0',
      value: cold.medianMs,
      unit: 'ms',
      ratio: cold.ratio,
      target: { op: '<=', value: 1.8 },
      details: { ...cold.details, cachedMedianMs: warm.medianMs, cachedRatio: round2(warm.ratio) },
    }),
  ];
}

const round1 = (n) => Math.round(n * 10) / 10;
const round2 = (n) => Math.round(n * 100) / 100;
