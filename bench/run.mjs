// `npm run bench [-- --quick] [-- --markdown] [-- --only startup,exclusions,latency,cpu,memory]`
//
// Measures the performance budget side by side on this machine: every figure is a ratio to
// something measured in the same run (bare `node -e 0`, the ideal rate of the sandbox's latency,
// a bare undici request loop) or an absolute ceiling. Prints a table (figure, target, measured,
// met or not) with the machine and date, and writes it as JSON and as markdown for
// docs/performance.md to bench/results/. `--markdown` prints the markdown instead of the table.
// `--quick` is a short smoke run: smaller batches, fewer rounds, one run of each side.
//
// Needs `npm run build` first. Runs only the built CLI (bin/company-data.js, copied with its
// build into a scratch directory) as a process, and starts its own sandboxes with it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bareLoopProcess, enrichRun, warmSandbox } from './lib/batch.mjs';
import { mixedDomains, sandboxDomains, writeDomainFiles } from './lib/data.mjs';
import { exclusionsFigure } from './lib/exclusions.mjs';
import { duplicatedInput, peakRss } from './lib/memory.mjs';
import { DROPPED_NODE_VARIABLES, makeScratch, ROOT, startSandbox } from './lib/proc.mjs';
import { startupFigures } from './lib/startup.mjs';
import { cheapest, fastest, figure, renderMarkdown, renderTable } from './lib/stats.mjs';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    markdown: { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
const QUICK = args.quick;
const SIZES = QUICK
  ? { rounds: 8, latencyRows: 2_000, cpuRows: 5_000, memoryRows: [10_000, 100_000], storeRows: 10_000 }
  : { rounds: 30, latencyRows: 2_000, cpuRows: 20_000, memoryRows: [100_000, 1_000_000], storeRows: 100_000 };
// Runs of each side of the batch figures, interleaved; the best run of each side counts
// (stats.mjs, fastest and cheapest).
const REPEATS = QUICK ? 1 : 2;
const CONCURRENCY = 16;
const GROUPS = ['startup', 'exclusions', 'latency', 'cpu', 'memory', 'store'];
const selected = new Set(args.only ? args.only.split(',') : GROUPS);
for (const name of selected) if (!GROUPS.includes(name)) throw new Error(`unknown figure group ${name}`);

const started = performance.now();
const log = (message) => console.error(`[${((performance.now() - started) / 1000).toFixed(0)}s] ${message}`);
const round = (n) => Math.round(n * 100) / 100;
const summarise = (r) => ({
  rows: r.rows,
  seconds: round(r.seconds),
  rowsPerSecond: Math.round(r.rowsPerSecond),
  cpuUsPerRow: Math.round(r.cpuUsPerRow),
});

const machine = {
  cpu: cpus()[0]?.model,
  cores: cpus().length,
  node: process.version,
  memoryGb: Math.round(totalmem() / 2 ** 30),
  loadAverage: { start: loadavg().map(round), end: [] },
  // Set in the caller's environment and dropped for every Node process of the bench (proc.mjs).
  droppedVariables: DROPPED_NODE_VARIABLES.filter((name) => process.env[name] !== undefined),
};
const scratch = makeScratch();
const figures = [];

/** Domains for a batch figure: three the sandbox knows for each one it does not, all distinct. */
async function batchInput(rows, tag) {
  const domains = mixedDomains(await sandboxDomains(rows, scratch.dir), rows);
  return { domains, ...(await writeDomainFiles(scratch.dir, tag, domains)) };
}

/** Rows per second from process start to exit against the ideal of the sandbox's latency. */
async function latencyFigure(latencyMs, target) {
  const rows = SIZES.latencyRows;
  const { domains, input } = await batchInput(rows, `latency-${latencyMs}`);
  const sandbox = await startSandbox({ companies: rows, latency: latencyMs, scratch: scratch.dir });
  try {
    await warmSandbox(sandbox, domains.slice(0, 4 * CONCURRENCY), CONCURRENCY);
    const runs = [];
    for (let i = 0; i < REPEATS; i++) {
      log(`latency ${latencyMs} ms: enrich ${rows} unique domains, concurrency ${CONCURRENCY}`);
      const tag = `latency-${latencyMs}`;
      runs.push(
        await enrichRun({ sandbox, input, rows, concurrency: CONCURRENCY, scratch: scratch.dir, tag }),
      );
    }
    const best = fastest(runs);
    const ideal = CONCURRENCY / (latencyMs / 1000);
    figures.push(
      figure({
        id: `batch.latency-${latencyMs}`,
        name: `batch, ${rows} domains, latency ${latencyMs} ms: share of ideal ${ideal} rows/s`,
        ratio: best.rowsPerSecond / ideal,
        target: { op: '>=', value: target },
        note: `${Math.round(best.rowsPerSecond)} rows/s`,
        details: {
          best: summarise(best),
          runs: runs.map(summarise),
          idealRowsPerSecond: ideal,
          concurrency: CONCURRENCY,
          counted: 'the fastest run, from process start to exit',
        },
      }),
    );
  } finally {
    await sandbox.stop();
  }
}

/** CPU per row of the client against a bare undici loop over the same domains, 0 ms latency. */
async function cpuFigure() {
  const rows = SIZES.cpuRows;
  const { domains, input, listFile } = await batchInput(rows, 'cpu');
  const sandbox = await startSandbox({ companies: rows, scratch: scratch.dir });
  try {
    await warmSandbox(sandbox, domains.slice(0, 5000));
    const common = { sandbox, rows, concurrency: CONCURRENCY, scratch: scratch.dir };
    // The bare loop before and after each client run: a load spike cannot flatter the client.
    log(`cpu: bare undici loop, ${rows} domains, concurrency ${CONCURRENCY}`);
    const bares = [await bareLoopProcess({ ...common, listFile })];
    const clients = [];
    for (let i = 0; i < REPEATS; i++) {
      log(`cpu: enrich ${rows} domains, concurrency ${CONCURRENCY}`);
      clients.push(await enrichRun({ ...common, input, tag: 'cpu' }));
      log('cpu: bare undici loop again');
      bares.push(await bareLoopProcess({ ...common, listFile }));
    }
    const client = cheapest(clients);
    const bare = cheapest(bares);
    figures.push(
      figure({
        id: 'batch.cpu-per-row',
        name: `batch CPU per row, ${rows / 1000}k domains, 0 ms: client vs bare undici loop`,
        ratio: client.cpuUsPerRow / bare.cpuUsPerRow,
        target: { op: '<=', value: 1.5 },
        note: `${Math.round(client.cpuUsPerRow)} µs vs ${Math.round(bare.cpuUsPerRow)} µs`,
        details: {
          client: summarise(client),
          bare: summarise(bare),
          clientRuns: clients.map(summarise),
          bareRuns: bares.map(summarise),
          counted:
            'user + system CPU of each whole process (start-up and exit included), the least of each side',
        },
      }),
    );
  } finally {
    await sandbox.stop();
  }
}

async function memoryFigures() {
  const [small, large] = SIZES.memoryRows;
  const known = await sandboxDomains(10_000, scratch.dir);
  const sandbox = await startSandbox({ companies: 10_000, scratch: scratch.dir });
  try {
    const results = [];
    for (const rows of [small, large]) {
      const input = await duplicatedInput({ rows, known, scratch: scratch.dir });
      log(
        `memory: enrich ${rows.toLocaleString('en-US')} rows (half duplicates), concurrency ${CONCURRENCY}`,
      );
      results.push(await peakRss({ sandbox, input, rows, concurrency: CONCURRENCY, scratch: scratch.dir }));
    }
    const [s, l] = results;
    // Half the rows repeat a domain: the large run stores rows / 2 answers.
    const answers = l.rows / 2;
    const details = {
      small: { rows: s.rows, peakRssMb: round(s.peakRssMb), seconds: round(s.seconds) },
      large: { rows: l.rows, peakRssMb: round(l.peakRssMb), seconds: round(l.seconds) },
      source: l.source,
      sandboxCompanies: 10_000,
      store: {
        answers,
        bytes: l.storeBytes,
        mbPerMillionAnswers: round(((l.storeBytes / answers) * 1e6) / 1e6),
      },
    };
    figures.push(
      figure({
        id: 'memory.peak',
        name: `peak RSS, ${large.toLocaleString('en-US')} rows (half duplicates)`,
        ratio: l.peakRssMb,
        target: { op: '<=', value: 300, unit: 'MB' },
        details,
      }),
      figure({
        id: 'memory.growth',
        name: `peak RSS, ${large / 1000}k rows vs ${small / 1000}k rows`,
        ratio: l.peakRssMb / s.peakRssMb,
        target: { op: '<=', value: 1.5 },
        note: `${Math.round(l.peakRssMb)} MB vs ${Math.round(s.peakRssMb)} MB`,
        details,
      }),
    );
  } finally {
    await sandbox.stop();
  }
}

/**
 * A nightly re-run: the same file again, every answer from the store, against the first run of
 * it into an empty store, both at 0 ms latency (where the store's share of the time is largest).
 */
async function storeFigure() {
  const rows = SIZES.storeRows;
  const { domains, input } = await batchInput(rows, 'store');
  const sandbox = await startSandbox({ companies: rows, scratch: scratch.dir });
  try {
    await warmSandbox(sandbox, domains.slice(0, 5000));
    const common = { sandbox, input, rows, concurrency: CONCURRENCY, scratch: scratch.dir, tag: 'store' };
    const firsts = [];
    const reruns = [];
    for (let i = 0; i < REPEATS; i++) {
      log(`store: enrich ${rows} domains into an empty store, concurrency ${CONCURRENCY}`);
      firsts.push(await enrichRun(common));
      log(`store: the same ${rows} domains again, every answer from the store`);
      reruns.push(await enrichRun({ ...common, keepStore: true }));
    }
    const first = fastest(firsts);
    const rerun = fastest(reruns);
    figures.push(
      figure({
        id: 'store.rerun',
        name: `batch re-run from the store, ${rows / 1000}k rows: wall time vs the first run at 0 ms`,
        ratio: rerun.seconds / first.seconds,
        target: { op: '<=', value: 0.3 },
        note: `${round(rerun.seconds)} s vs ${round(first.seconds)} s`,
        details: {
          first: summarise(first),
          rerun: summarise(rerun),
          firstRuns: firsts.map(summarise),
          reruns: reruns.map(summarise),
          storeBytes: first.storeBytes,
          counted: 'the fastest run of each side, from process start to exit',
        },
      }),
    );
  } finally {
    await sandbox.stop();
  }
}

try {
  log(`${QUICK ? 'quick' : 'full'} run; machine ${JSON.stringify(machine)}`);
  if (selected.has('startup'))
    figures.push(...(await startupFigures({ rounds: SIZES.rounds, scratch: scratch.dir, log })));
  if (selected.has('exclusions'))
    figures.push(await exclusionsFigure({ rounds: SIZES.rounds / 2, scratch: scratch.dir, log }));
  if (selected.has('latency')) {
    await latencyFigure(100, 0.95);
    await latencyFigure(20, 0.9);
  }
  if (selected.has('cpu')) await cpuFigure();
  if (selected.has('memory')) await memoryFigures();
  if (selected.has('store')) await storeFigure();
} finally {
  scratch.remove();
}

machine.loadAverage.end = loadavg().map(round);
const report = {
  mode: QUICK ? 'quick' : 'full',
  date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  seconds: Math.round((performance.now() - started) / 1000),
  machine,
  figures,
};
const markdown = renderMarkdown(report);
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
writeFileSync(join(ROOT, 'bench/results/latest.json'), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(ROOT, 'bench/results/latest.md'), `${markdown}\n`);
console.log(args.markdown ? markdown : renderTable(report));
console.error('details: bench/results/latest.json; markdown: bench/results/latest.md');
