// `npm run bench [-- --quick] [-- --markdown] [-- --only startup,exclusions,latency,loop,postgres,stores,cpu,memory,workbook,store,pacing,gateway,fleet,me]`
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
import { fleetRun, overlappingInputs } from './lib/fleet.mjs';
import { duplicatedInput, peakRss } from './lib/memory.mjs';
import { oneRequestFigure } from './lib/one-request.mjs';
import { gatewayRun, pacedRun } from './lib/pacing.mjs';
import { startBenchPostgres } from './lib/postgres.mjs';
import { DROPPED_NODE_VARIABLES, makeScratch, ROOT, startSandbox } from './lib/proc.mjs';
import { startupFigures } from './lib/startup.mjs';
import { cheapest, fastest, figure, renderMarkdown, renderTable } from './lib/stats.mjs';
import { storeFigures } from './lib/stores.mjs';
import { workbookInput, workbookRun } from './lib/workbook.mjs';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    markdown: { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
const QUICK = args.quick;
const SIZES = QUICK
  ? {
      rounds: 8,
      latencyRows: 2_000,
      loopRows: 2_000,
      cpuRows: 5_000,
      memoryRows: [10_000, 100_000],
      workbookRows: 10_000,
      storeRows: 10_000,
      storesRows: 1_000,
      holdRows: 100_000,
    }
  : {
      rounds: 30,
      latencyRows: 2_000,
      loopRows: 4_000,
      cpuRows: 20_000,
      memoryRows: [100_000, 1_000_000],
      workbookRows: 100_000,
      storeRows: 100_000,
      storesRows: 3_000,
      holdRows: 1_000_000,
    };
// Runs of each side of the batch figures, interleaved; the best run of each side counts
// (stats.mjs, fastest and cheapest).
const REPEATS = QUICK ? 1 : 2;
const CONCURRENCY = 16;
const GROUPS = [
  'startup',
  'exclusions',
  'latency',
  'loop',
  'postgres',
  'stores',
  'cpu',
  'memory',
  'workbook',
  'store',
  'pacing',
  'gateway',
  'fleet',
  'me',
];
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

/**
 * The batch against the bare undici loop (bench/lib/batch.mjs) at the same sandbox latency and
 * concurrency, both from process start to exit: the client's rows per second over the loop's (at
 * least 0.95). `backend` 'sqlite': each client run starts with an empty store file of its own;
 * 'postgres': with an empty database of its own, on a PostgreSQL server the bench starts (the
 * tests' helper) and stops after. Without PostgreSQL on this machine the figure says so.
 */
async function loopFigure(latencyMs, backend) {
  const rows = SIZES.loopRows;
  const id = `batch.loop-${latencyMs}-${backend}`;
  const on = backend === 'postgres' ? 'PostgreSQL store' : 'SQLite store';
  const name = `batch, ${rows} domains, ${latencyMs} ms, ${on}: rows/s vs bare undici loop`;
  const target = { op: '>=', value: 0.95 };
  let postgres;
  if (backend === 'postgres') {
    log('postgres: starting a PostgreSQL server (initdb, pg_ctl) for the store');
    const started = await startBenchPostgres(scratch.dir);
    if (started.missing) {
      figures.push(figure({ id, name, ratio: Number.NaN, target, skipped: started.missing }));
      return;
    }
    postgres = started.server;
  }
  try {
    const { domains, input, listFile } = await batchInput(rows, `loop-${backend}`);
    const sandbox = await startSandbox({ companies: rows, latency: latencyMs, scratch: scratch.dir });
    try {
      await warmSandbox(sandbox, domains.slice(0, 4 * CONCURRENCY), CONCURRENCY);
      const common = { sandbox, rows, concurrency: CONCURRENCY, scratch: scratch.dir };
      // The bare loop before and after each client run, as for the CPU figure.
      log(`${backend}: bare undici loop, ${rows} domains, ${latencyMs} ms, concurrency ${CONCURRENCY}`);
      const bares = [await bareLoopProcess({ ...common, listFile })];
      const clients = [];
      for (let i = 0; i < REPEATS; i++) {
        const storeUrl = postgres ? await postgres.createDatabase(`bench_loop_${i}`) : undefined;
        log(`${backend}: enrich ${rows} domains on the ${on}, ${latencyMs} ms`);
        clients.push(await enrichRun({ ...common, input, tag: `loop-${backend}`, storeUrl }));
        log(`${backend}: bare undici loop again`);
        bares.push(await bareLoopProcess({ ...common, listFile }));
      }
      const client = fastest(clients);
      const bare = fastest(bares);
      figures.push(
        figure({
          id,
          name,
          ratio: client.rowsPerSecond / bare.rowsPerSecond,
          target,
          note: `${Math.round(client.rowsPerSecond)} vs ${Math.round(bare.rowsPerSecond)} rows/s`,
          details: {
            client: summarise(client),
            bare: summarise(bare),
            clientRuns: clients.map(summarise),
            bareRuns: bares.map(summarise),
            concurrency: CONCURRENCY,
            counted: 'the fastest run of each side, from process start to exit',
          },
        }),
      );
    } finally {
      await sandbox.stop();
    }
  } finally {
    await postgres?.stop();
  }
}

/**
 * CPU per row of the client against a bare undici loop over the same domains, 0 ms latency: at
 * most 2.0x with the result store (issue 31).
 */
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
        target: { op: '<=', value: 2.0 },
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

/** A workbook in and out against the same rows as CSV in and out: peak RSS and time. */
async function workbookFigures() {
  const rows = SIZES.workbookRows;
  const known = await sandboxDomains(10_000, scratch.dir);
  const sandbox = await startSandbox({ companies: 10_000, scratch: scratch.dir });
  try {
    const csvInput = await duplicatedInput({ rows, known, scratch: scratch.dir });
    const xlsxInput = await workbookInput({ rows, known, scratch: scratch.dir });
    const run = (input, extension) => {
      log(`workbook: enrich ${rows.toLocaleString('en-US')} rows, ${extension} in and out`);
      return workbookRun({
        sandbox,
        input,
        rows,
        concurrency: CONCURRENCY,
        scratch: scratch.dir,
        extension,
        tag: `workbook-${extension}-${rows}`,
      });
    };
    // Each run has a store of its own (enrichRun), so both buy every answer.
    const csv = await run(csvInput, 'csv');
    const xlsx = await run(xlsxInput, 'xlsx');
    const details = {
      xlsx: {
        peakRssMb: round(xlsx.peakRssMb),
        seconds: round(xlsx.seconds),
        cpuUsPerRow: Math.round(xlsx.cpuUsPerRow),
      },
      csv: {
        peakRssMb: round(csv.peakRssMb),
        seconds: round(csv.seconds),
        cpuUsPerRow: Math.round(csv.cpuUsPerRow),
      },
      rows,
      source: xlsx.source,
    };
    figures.push(
      figure({
        id: 'workbook.peak',
        name: `peak RSS, ${rows.toLocaleString('en-US')} rows .xlsx in and out`,
        ratio: xlsx.peakRssMb,
        target: { op: '<=', value: 300, unit: 'MB' },
        note: `CSV in and out: ${Math.round(csv.peakRssMb)} MB`,
        details,
      }),
      figure({
        id: 'workbook.time',
        name: `time, ${rows.toLocaleString('en-US')} rows .xlsx in and out vs CSV in and out`,
        ratio: xlsx.seconds / csv.seconds,
        target: { op: '<=', value: 2 },
        note: `${round(xlsx.seconds)} s vs ${round(csv.seconds)} s`,
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

/**
 * `--rate n` against a sandbox limited to n a second, at 50, 400 and 1,000: the share of n
 * reached (at least 0.95) with no 429 at all; one figure per rate, from one sandbox each. Beside
 * each, the same rows with `--rate 0` against an unlimited sandbox: what the client reaches on
 * this machine right now, unpaced. When that is below n, no pacer can reach n, and the figure is
 * the share of that instead (the note says which).
 */
async function pacingFigures() {
  const seconds = QUICK ? 2 : 4;
  for (const limit of [50, 400, 1000]) {
    const rows = Math.max(200, limit * seconds);
    const domains = mixedDomains(await sandboxDomains(rows, scratch.dir), rows);
    const free = await startSandbox({ companies: rows, scratch: scratch.dir });
    const limited = await startSandbox({ companies: rows, rateLimit: limit, scratch: scratch.dir });
    try {
      log(`pacing: enrich ${rows} domains at --rate 0 against an unlimited sandbox (the reference)`);
      const unpaced = await pacedRun({ sandbox: free, limit: 0, domains, scratch: scratch.dir });
      log(`pacing: enrich ${rows} domains at --rate ${limit} against a limit of ${limit} a second`);
      const r = await pacedRun({ sandbox: limited, limit, domains, scratch: scratch.dir });
      const reachable = Math.min(limit, unpaced.rate);
      figures.push(
        figure({
          id: `pacing.rate-${limit}`,
          name: `--rate ${limit} against a sandbox limited to ${limit}/s: share of the rate (429s must be 0)`,
          ratio: r.refused429 === 0 && r.exit === 0 ? r.rate / reachable : 0,
          target: { op: '>=', value: 0.95 },
          note: `${r.rate.toFixed(1)}/s${reachable < limit ? ` of ${reachable.toFixed(0)}/s reached unpaced` : ''}, ${r.refused429} 429s, busiest second ${r.busiestSecond}`,
          details: {
            ...r,
            rate: round(r.rate),
            unpacedRate: round(unpaced.rate),
            shareOfLimit: round(r.rate / limit),
          },
        }),
      );
    } finally {
      await free.stop();
      await limited.stop();
    }
  }
}

/**
 * A batch with default options behind a gateway allowing 50 lookups a second (burst 10) that
 * refuses the rest with an HTML 503 page and no Retry-After: the rate reaching the service
 * (at least 0.8 of the gateway's) and the share refused (at most 10 %).
 */
async function gatewayFigure() {
  const rows = QUICK ? 300 : 1000;
  const rate = 50;
  const domains = mixedDomains(await sandboxDomains(rows, scratch.dir), rows);
  const sandbox = await startSandbox({ companies: rows, scratch: scratch.dir });
  try {
    log(`gateway: enrich ${rows} domains behind a gateway of ${rate}/s (HTML 503 beyond, no Retry-After)`);
    const r = await gatewayRun({ sandbox, rate, burst: 10, domains, scratch: scratch.dir });
    const details = { ...r, rate: round(r.rate), refusedShare: round(r.refusedShare) };
    figures.push(
      figure({
        id: 'gateway.rate',
        name: `batch behind a gateway of ${rate}/s (503 page, no Retry-After): share of its rate`,
        ratio: r.exit === 0 ? r.rate / rate : 0,
        target: { op: '>=', value: 0.8 },
        note: `${r.rate.toFixed(1)}/s, ${r.passed} passed, ${r.refused} refused, exit ${r.exit}`,
        details,
      }),
      figure({
        id: 'gateway.refused',
        name: `batch behind a gateway of ${rate}/s: requests refused`,
        ratio: r.refusedShare * 100,
        target: { op: '<=', value: 10, unit: '%' },
        note: r.summary.replace(/^.*Enriched: /, ''),
        details,
      }),
    );
  } finally {
    await sandbox.stop();
  }
}

/**
 * Four hosts on one key and one PostgreSQL store (overlapping inputs, each domain in two hosts'
 * inputs) against one host with every distinct domain, on the same key, limit and store kind,
 * side by side against one sandbox limited to `limit`/s with 20 ms answers: the fleet's time over
 * the one host's (at most 1.1: hosts that share a key share its rate, docs/store.md), with the
 * 429s and the busiest second of the sandbox's log beside it. Default options on both sides (90 %
 * of the limit GET /api/me reports, --concurrency 8).
 */
async function fleetFigures() {
  const name = (limit) => `4 hosts on one key vs 1 host, limit ${limit}/s, 20 ms: time over one host's`;
  const target = { op: '<=', value: 1.1 };
  log('fleet: starting a PostgreSQL server (initdb, pg_ctl) for the shared store');
  const started = await startBenchPostgres(scratch.dir);
  if (started.missing) {
    for (const limit of [400, 100])
      figures.push(
        figure({
          id: `fleet.time-${limit}`,
          name: name(limit),
          ratio: Number.NaN,
          target,
          skipped: started.missing,
        }),
      );
    return;
  }
  const postgres = started.server;
  let databases = 0;
  try {
    for (const limit of [400, 100]) {
      // 3,000 and 1,800 domains, all found: 8 and 20 seconds at 90 % of the limit, so that four
      // start-ups at once (3-4 s on a loaded 2-core machine) are not most of the time measured.
      const distinct = QUICK ? Math.round(limit * 0.9 * 3) : limit === 400 ? 3000 : 1800;
      const domains = (await sandboxDomains(distinct, scratch.dir)).slice(0, distinct);
      const sandbox = await startSandbox({
        companies: distinct,
        latency: 20,
        rateLimit: limit,
        scratch: scratch.dir,
      });
      try {
        const sides = { one: [], fleet: [] };
        for (let i = 0; i < REPEATS; i++) {
          for (const [side, inputs] of [
            ['one', [domains]],
            ['fleet', overlappingInputs(domains, 4)],
          ]) {
            const database = `bench_fleet_${++databases}`;
            const storeUrl = await postgres.createDatabase(database);
            log(
              `fleet: ${inputs.length} host(s), ${inputs.map((d) => d.length).join('+')} rows, ${distinct} distinct, limit ${limit}/s`,
            );
            const r = await fleetRun({
              sandbox,
              storeUrl,
              inputs,
              scratch: scratch.dir,
              tag: `fleet-${databases}`,
            });
            // The statements of the shared rate (requests of turns, pauses, cuts), per bought domain:
            // the rows of rate_turns updated (each host's statistics are flushed as it exits).
            // A backend flushes its statistics as it ends, just after its host's exit.
            await new Promise((resolve) => setTimeout(resolve, 500));
            const [updated] = await postgres.admin(
              "SELECT coalesce(sum(n_tup_upd), 0)::int AS n FROM pg_stat_user_tables WHERE relname = 'rate_turns'",
              [],
              database,
            );
            sides[side].push({ ...r, rateStatementsPerDomain: round(updated.n / distinct) });
          }
        }
        const best = (runs) => runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
        const one = best(sides.one);
        const fleet = best(sides.fleet);
        const sound = (r) => r.exits.every((code) => code === 0) && r.distinctBought === distinct;
        const fastestSpan = (runs) => Math.min(...runs.map((r) => r.spanSeconds));
        const [oneSpan, fleetSpan] = [fastestSpan(sides.one), fastestSpan(sides.fleet)];
        figures.push(
          figure({
            id: `fleet.time-${limit}`,
            name: name(limit),
            ratio: sound(one) && sound(fleet) ? fleet.seconds / one.seconds : Number.POSITIVE_INFINITY,
            target,
            note: `${fleet.seconds.toFixed(1)} s vs ${one.seconds.toFixed(1)} s; fleet: ${fleet.refused429} 429s, busiest second ${fleet.busiestSecond}, ${fleet.boughtTwice} bought twice, ${fleet.rateStatementsPerDomain} rate statements a domain`,
            details: {
              one: { ...one, seconds: round(one.seconds) },
              fleet: { ...fleet, seconds: round(fleet.seconds) },
              runs: {
                one: sides.one.map((r) => round(r.seconds)),
                fleet: sides.fleet.map((r) => round(r.seconds)),
              },
              counted: 'the fastest run of each side, from the first start to the last exit',
            },
          }),
          // The same runs from the first request's arrival to the last's: the rate shared, without
          // the start-ups (four processes starting at once on a small machine) and the endings.
          figure({
            id: `fleet.span-${limit}`,
            name: `4 hosts on one key vs 1 host, limit ${limit}/s: first to last request, over one host's`,
            ratio: sound(one) && sound(fleet) ? fleetSpan / oneSpan : Number.POSITIVE_INFINITY,
            target,
            note: `${fleetSpan.toFixed(1)} s vs ${oneSpan.toFixed(1)} s`,
            details: {
              one: sides.one.map((r) => round(r.spanSeconds)),
              fleet: sides.fleet.map((r) => round(r.spanSeconds)),
              counted: 'the shortest span of each side',
            },
          }),
        );
      } finally {
        await sandbox.stop();
      }
    }
  } finally {
    await postgres.stop();
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
  if (selected.has('loop')) await loopFigure(20, 'sqlite');
  if (selected.has('postgres')) await loopFigure(20, 'postgres');
  if (selected.has('stores'))
    await storeFigures({
      figures,
      scratch: scratch.dir,
      log,
      rows: SIZES.storesRows,
      repeats: REPEATS,
      concurrency: CONCURRENCY,
      batchInput,
      holdRows: SIZES.holdRows,
    });
  if (selected.has('cpu')) await cpuFigure();
  if (selected.has('memory')) await memoryFigures();
  if (selected.has('workbook')) await workbookFigures();
  if (selected.has('store')) await storeFigure();
  if (selected.has('pacing')) await pacingFigures();
  if (selected.has('gateway')) await gatewayFigure();
  if (selected.has('fleet')) await fleetFigures();
  if (selected.has('me'))
    figures.push(await oneRequestFigure({ rounds: SIZES.rounds, scratch: scratch.dir, log }));
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
