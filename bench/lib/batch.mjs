// Batch runs: `company-data enrich --input` against a sandbox, and a bare undici request loop
// doing the same lookups with nothing else, as a fresh process measured the same way.
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Pool } from 'undici';
import { BIN, cliEnv, nodeEnv, runMeasured } from './proc.mjs';

/**
 * Runs `company-data enrich --input` over a CSV and returns rows per second over the process's
 * whole life (start-up included: it is what a cron job waits for), its CPU per row and peak RSS.
 * The run starts with an empty result store of its own unless `keepStore` (a re-run, answered from
 * what the run before it stored); `storeBytes` is the store's size afterwards, its WAL included.
 * `storeUrl` gives a store instead (a PostgreSQL database, empty or not as the caller made it;
 * `storeBytes` is then 0). `extraArgs` go after the command's own (a --budget-month).
 */
export async function enrichRun({
  sandbox,
  input,
  rows,
  concurrency,
  scratch,
  tag,
  keepStore = false,
  storeUrl,
  outputExtension = 'csv',
  extraArgs = [],
}) {
  const output = join(scratch, `${tag}.out.${outputExtension}`);
  const store = storeUrl ?? join(scratch, `${tag}.db`);
  if (!keepStore && !storeUrl)
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${store}${suffix}`, { force: true });
  const argv = [
    process.execPath,
    BIN,
    '--quiet',
    '--base-url',
    sandbox.url,
    'enrich',
    '--input',
    input,
    '--output',
    output,
    '--store',
    store,
    '--concurrency',
    String(concurrency),
    ...extraArgs,
  ];
  const env = cliEnv(scratch, { COMPANY_DATA_API_KEY: sandbox.keys.full });
  const result = await runMeasured(argv, { env, scratch });
  if (result.code !== 0) throw new Error(`enrich (${tag}) exited with ${result.code}: ${result.stderr}`);
  const seconds = result.ms / 1000;
  const cpuUsPerRow = (result.cpuMs * 1000) / rows;
  return {
    rows,
    seconds,
    rowsPerSecond: rows / seconds,
    cpuUsPerRow,
    peakRssMb: result.peakRssMb,
    source: result.source,
    storeBytes: storeUrl
      ? 0
      : ['', '-wal'].reduce(
          (sum, suffix) => sum + (statSync(`${store}${suffix}`, { throwIfNoEntry: false })?.size ?? 0),
          0,
        ),
  };
}

/** Sends `domains` lookups from this process: warms a sandbox (JIT, indexes) before a figure. */
export async function warmSandbox(sandbox, domains, concurrency = 8) {
  const pool = new Pool(sandbox.url, { connections: concurrency });
  const headers = { authorization: `Bearer ${sandbox.keys.full}` };
  let next = 0;
  async function worker() {
    while (next < domains.length) {
      const path = `/api/domains/${encodeURIComponent(domains[next++])}`;
      const res = await pool.request({ method: 'GET', path, headers });
      await res.body.text();
    }
  }
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await pool.close();
  }
}

// The bare loop: undici from this checkout's node_modules (the client's own dependency), a Pool of
// `concurrency` connections, as many workers each sending the next GET /api/domains/{domain} with
// the key and parsing the JSON answer. No CSV, no store, no ordering, no output.
const BARE_LOOP = `
const { Pool } = require(process.env.BENCH_UNDICI);
const { readFileSync } = require('node:fs');
const [url, key, list, concurrency] = process.argv.slice(2);
const domains = readFileSync(list, 'utf8').split('\\n').filter(Boolean);
const pool = new Pool(url, { connections: Number(concurrency) });
const headers = { authorization: 'Bearer ' + key };
let next = 0;
let failures = 0;
async function worker() {
  while (next < domains.length) {
    const path = '/api/domains/' + encodeURIComponent(domains[next++]);
    const res = await pool.request({ method: 'GET', path, headers });
    await res.body.json();
    if (res.statusCode !== 200) failures++;
  }
}
Promise.all(Array.from({ length: Number(concurrency) }, worker))
  .then(() => pool.close())
  .then(() => { if (failures > 0) { console.error(failures + ' answers other than 200'); process.exitCode = 1; } });
`;

/**
 * The bare loop as a process of its own, started and measured like the CLI (start-up and exit
 * included): rows per second and CPU per row.
 */
export async function bareLoopProcess({ sandbox, listFile, rows, concurrency, scratch }) {
  const script = join(scratch, 'bare-loop.cjs');
  writeFileSync(script, BARE_LOOP);
  const undici = createRequire(import.meta.url).resolve('undici');
  const argv = [process.execPath, script, sandbox.url, sandbox.keys.full, listFile, String(concurrency)];
  const result = await runMeasured(argv, { env: { ...nodeEnv(), BENCH_UNDICI: undici }, scratch });
  if (result.code !== 0) throw new Error(`the bare loop exited with ${result.code}: ${result.stderr}`);
  const seconds = result.ms / 1000;
  return { rows, seconds, rowsPerSecond: rows / seconds, cpuUsPerRow: (result.cpuMs * 1000) / rows };
}
