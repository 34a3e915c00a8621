// Start-up figures: `--version`, `--help` and a one-request command (`me -o json` against a
// running sandbox at 0 ms latency), each against a bare `node -e 0`. Many runs, interleaved so
// that the machine's load drifts over all alike, compared by median wall time. CPU time (mean,
// as GNU time reports it in 10 ms steps) goes to the details: it is what load changes least.
import { BIN, cliEnv, startSandbox, timeSync } from './proc.mjs';
import { figure, interleaveOrder, mean, median } from './stats.mjs';

const NODE = process.execPath;
const TARGETS = { version: 1.6, help: 2.0, oneRequest: 3.0 };

/** Runs each command `rounds` times in interleaveOrder; the results of each, in run order. */
function interleave(commands, rounds) {
  const results = commands.map(() => []);
  for (const i of interleaveOrder(commands.length, rounds)) results[i].push(commands[i]());
  return results;
}

function startupFigure(id, name, runs, bareRuns, target) {
  const ms = median(runs.map((r) => r.ms));
  const nodeMs = median(bareRuns.map((r) => r.ms));
  return figure({
    id,
    name,
    ratio: ms / nodeMs,
    target: { op: '<=', value: target },
    note: `${ms.toFixed(0)} ms vs ${nodeMs.toFixed(0)} ms`,
    details: {
      medianMs: round1(ms),
      nodeMedianMs: round1(nodeMs),
      minMs: round1(Math.min(...runs.map((r) => r.ms))),
      nodeMinMs: round1(Math.min(...bareRuns.map((r) => r.ms))),
      cpuMeanMs: round1(mean(runs.map((r) => r.cpuMs))),
      nodeCpuMeanMs: round1(mean(bareRuns.map((r) => r.cpuMs))),
      runs: runs.length,
    },
  });
}

export async function startupFigures({ rounds, scratch, log }) {
  const sandbox = await startSandbox({ companies: 1000, scratch });
  try {
    const env = cliEnv(scratch);
    const keyed = cliEnv(scratch, { COMPANY_DATA_API_KEY: sandbox.keys.full });
    const commands = [
      () => timeSync([NODE, '-e', '0'], env, scratch),
      () => timeSync([NODE, BIN, '--version'], env, scratch),
      () => timeSync([NODE, BIN, '--help'], env, scratch),
      () => timeSync([NODE, BIN, '--base-url', sandbox.url, 'me', '-o', 'json'], keyed, scratch),
    ];
    // Warm the page cache for every file involved (and the sandbox's JIT) before timing anything.
    interleave(commands, 3);
    log(`start-up: ${rounds} interleaved runs each of node -e 0, --version, --help, me -o json`);
    const [bare, version, help, me] = interleave(commands, rounds);
    return [
      startupFigure('startup.version', '--version vs node -e 0', version, bare, TARGETS.version),
      startupFigure('startup.help', '--help vs node -e 0', help, bare, TARGETS.help),
      startupFigure(
        'startup.one-request',
        'me -o json (sandbox, 0 ms) vs node -e 0',
        me,
        bare,
        TARGETS.oneRequest,
      ),
    ];
  } finally {
    await sandbox.stop();
  }
}

const round1 = (n) => Math.round(n * 10) / 10;
