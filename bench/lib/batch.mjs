// Figures 2-4, batch throughput: `enrich --input` against a sandbox, side by side with what else
// could do the same lookups: a bare undici request loop (the most a client can reach there), and
// `xargs -P16 curl` (what users do without this tool).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Pool } from 'undici';
import { BIN, cliEnv, nodeEnv, runMeasured } from './proc.mjs';

/**
 * Runs `company-data enrich --input` over a CSV and returns rows per second over the process's
 * whole life (start-up included: it is what a cron job waits for), its CPU per row and peak RSS.
 */
export async function enrichRun({ sandbox, input, rows, concurrency, scratch, tag }) {
  const output = join(scratch, `${tag}.out.csv`);
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
    '--journal',
    join(scratch, `${tag}.journal`),
    '--fresh',
    '--concurrency',
    String(concurrency),
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
  };
}

/**
 * The ceiling: an undici Pool with `concurrency` connections, as many workers each sending the
 * next GET /api/domains/{domain} with the key and reading the JSON body. Nothing else: no CSV,
 * no journal, no ordering.
 */
export async function bareLoop({ sandbox, domains, concurrency }) {
  const pool = new Pool(sandbox.url, { connections: concurrency, pipelining: 1 });
  const headers = { authorization: `Bearer ${sandbox.keys.full}` };
  let next = 0;
  let failures = 0;
  async function worker() {
    while (next < domains.length) {
      const domain = domains[next++];
      const res = await pool.request({
        method: 'GET',
        path: `/api/domains/${encodeURIComponent(domain)}`,
        headers,
      });
      await res.body.json();
      if (res.statusCode !== 200) failures++;
    }
  }
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await pool.close();
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  if (failures > 0) throw new Error(`the bare loop got ${failures} answers other than 200`);
  const cpuUsPerRow = (cpu.user + cpu.system) / domains.length;
  return { rows: domains.length, seconds, rowsPerSecond: domains.length / seconds, cpuUsPerRow };
}

/**
 * `xargs -P<parallel> curl` over a list of domains, one request per domain, answers appended to
 * one file: the shell pipeline a user writes today.
 */
export async function xargsCurl({ sandbox, listFile, rows, parallel, scratch }) {
  const out = join(scratch, 'curl.out');
  const sink = createWriteStream(out);
  await once(sink, 'open');
  const started = performance.now();
  const child = spawn(
    'xargs',
    [
      `-P${parallel}`,
      '-I{}',
      'curl',
      '-s',
      '-H',
      `Authorization: Bearer ${sandbox.keys.full}`,
      `${sandbox.url}/api/domains/{}`,
    ],
    { stdio: ['pipe', sink, 'inherit'] },
  );
  child.stdin.end(readFileSync(listFile));
  const [code] = await once(child, 'close');
  const seconds = (performance.now() - started) / 1000;
  sink.close();
  if (code !== 0) throw new Error(`xargs curl exited with ${code}`);
  const answers = readFileSync(out, 'utf8').split('"domain"').length - 1;
  if (answers < rows) throw new Error(`xargs curl wrote ${answers} answers for ${rows} domains`);
  return { rows, seconds, rowsPerSecond: rows / seconds };
}

/**
 * The bare undici loop of bareLoop() in a process of its own, started fresh like the CLI and
 * writing every body to a file like curl: what the same lookups cost at best when start-up, JIT
 * warm-up and exit count too. A reference for figures 3 and 4, not a target.
 *
 * It loads undici as the CLI does: the built dispatchers-only file (dist/vendor/undici.cjs of the
 * copy under test) with the wasm parser kept on V8's baseline compiler (--liftoff-only, set at
 * run time as src/http/transport.ts does). Until the seventh pass it imported undici's full entry
 * from node_modules, whose load (fetch, WebSocket, node's own bundled undici) and the optimising
 * wasm compile it waited for at exit cost ~150 ms the CLI does not pay: a ceiling set too low.
 */
export async function bareLoopProcess({ sandbox, listFile, rows, concurrency, scratch }) {
  const script = join(scratch, 'bare-loop.mjs');
  const undici = join(dirname(dirname(BIN)), 'dist/vendor/undici.cjs');
  writeFileSync(
    script,
    `import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { readFileSync, createWriteStream } from 'node:fs';
setFlagsFromString('--liftoff-only');
const { Pool } = createRequire(import.meta.url)(${JSON.stringify(undici)});
const [url, key, list, out, concurrency] = process.argv.slice(2);
const domains = readFileSync(list, 'utf8').split('\\n').filter(Boolean);
const sink = createWriteStream(out);
const pool = new Pool(url, { connections: Number(concurrency) });
let next = 0;
async function worker() {
  while (next < domains.length) {
    const res = await pool.request({ method: 'GET', path: '/api/domains/' + encodeURIComponent(domains[next++]), headers: { authorization: 'Bearer ' + key } });
    sink.write(await res.body.text() + '\\n');
  }
}
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
await pool.close();
sink.end();
`,
  );
  const out = join(scratch, 'bare-loop.out');
  const argv = [process.execPath, script, sandbox.url, sandbox.keys.full, listFile, out, String(concurrency)];
  const result = await runMeasured(argv, { env: nodeEnv(), scratch });
  if (result.code !== 0)
    throw new Error(`the bare loop process exited with ${result.code}: ${result.stderr}`);
  const answers = readFileSync(out, 'utf8').split('"domain"').length - 1;
  if (answers < rows) throw new Error(`the bare loop process wrote ${answers} answers for ${rows} domains`);
  const seconds = result.ms / 1000;
  return { rows, seconds, rowsPerSecond: rows / seconds, cpuUsPerRow: (result.cpuMs * 1000) / rows };
}
