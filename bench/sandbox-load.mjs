// Sandbox load benchmark (issue targets: >= 5,000 lookups/s; search under 20 ms).
// Starts the built binary as `company-data sandbox --port 0`, reads its JSON handshake line, then
//   1. drives GET /api/domains/{domain} over an undici keep-alive Pool at a fixed concurrency for a
//      few seconds, mixing existing and missing domains, and reports lookups per second;
//   2. times sequential searches (varied queries and filters) and reports the median and p95.
// Usage: npm run build && node bench/sandbox-load.mjs [--companies 10000] [--seconds 5]
//        [--concurrency 32] [--searches 200] [--json]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { nodeEnv } from './lib/proc.mjs';

const { values: args } = parseArgs({
  options: {
    companies: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '32' },
    searches: { type: 'string', default: '200' },
    json: { type: 'boolean', default: false },
    baseline: { type: 'boolean', default: false },
  },
});
const companies = Number(args.companies);
const seconds = Number(args.seconds);
const concurrency = Number(args.concurrency);
const searchCount = Number(args.searches);

const BIN = fileURLToPath(new URL('../bin/company-data.js', import.meta.url));

// The least any node:http server can do per request: the ceiling this client reaches on this
// machine, to read the sandbox's figure against.
const BARE_SERVER = `
const body = JSON.stringify({ found: true, domain: 'acme-shoes.com', company_name: 'Acme Shoes', country: 'US', credits: { charged: 1 } });
const server = require('node:http').createServer({ keepAlive: true }, (req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-credits-charged': '1', 'x-credits-remaining': '1' });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: 'http://127.0.0.1:' + server.address().port, keys: { full: 'none' } })));
process.on('SIGTERM', () => process.exit(0));
`;

async function startChild(argv) {
  const child = spawn(process.execPath, argv, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: Object.fromEntries(Object.entries(nodeEnv()).filter(([name]) => !name.startsWith('COMPANY_DATA_'))),
  });
  const lines = createInterface({ input: child.stdout });
  const [line] = await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`the server exited with ${code} before listening`);
    }),
  ]);
  return { child, ...JSON.parse(line) };
}

async function stopChild(child) {
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/**
 * CPU time (user + system, ms) the sandbox process has used so far, from /proc on Linux.
 * On a shared machine wall-clock throughput depends on everyone else's load; CPU time per request
 * does not, so the report gives both.
 */
function childCpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function getJson(pool, path, key) {
  const res = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${key}` } });
  const body = await res.body.json();
  return { status: res.statusCode, body };
}

/** Existing domains from a search (popular first) and from the long tail, plus misses. */
async function domainMix(pool, key) {
  const found = [];
  for (const query of ['', 'shoes', 'coffee', 'saas', 'fitness', 'toys']) {
    const { body } = await getJson(pool, `/api/search?query=${query}&limit=200`, key);
    for (const row of body.rows ?? []) found.push(row.domain);
  }
  const unique = [...new Set(found)];
  // Roughly three found to one not found, interleaved.
  return unique.flatMap((domain, i) => (i % 3 === 2 ? [domain, `missing-${i}.example`] : [domain]));
}

async function lookupLoad(pool, key, domains, pid) {
  let done = 0;
  let errors = 0;
  let foundCount = 0;
  let next = 0;
  const deadline = performance.now() + seconds * 1000;
  async function worker() {
    while (performance.now() < deadline) {
      const domain = domains[next++ % domains.length];
      const res = await pool.request({
        method: 'GET',
        path: `/api/domains/${domain}`,
        headers: { authorization: `Bearer ${key}` },
      });
      const body = await res.body.json();
      if (res.statusCode !== 200) errors++;
      else if (body.found) foundCount++;
      done++;
    }
  }
  const cpuBefore = childCpuMs(pid);
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = childCpuMs(pid);
  const serverCpuUs = cpuBefore === undefined ? undefined : ((cpuAfter - cpuBefore) * 1000) / done;
  return {
    lookups: done,
    errors,
    found: foundCount,
    seconds: elapsed,
    perSecond: done / elapsed,
    serverCpuUsPerLookup: serverCpuUs === undefined ? null : Math.round(serverCpuUs),
    // What one core could serve if the sandbox had it to itself.
    perCoreCapacity: serverCpuUs ? Math.round(1e6 / serverCpuUs) : null,
  };
}

const SEARCHES = [
  { query: 'shoes' },
  { query: 'shopify shoes' },
  { query: 'coffee', filters: '{"country":["US","GB","DE"]}' },
  { query: 'saas analytics', query_operator: 'or' },
  { query: '', filters: '{"site_category":["fashion"],"employee_range":["11-50","51-200"]}' },
  { query: 'fitness yoga running', query_operator: 'or', limit: '100' },
  { query: 'organic skincare' },
  { query: 'toys', breakdown: 'country' },
  { query: '', breakdown: 'primary_platform', population: 'ecommerce' },
  { query: 'germany furniture' },
];

async function searchTimes(pool, key) {
  const times = [];
  for (let i = 0; i < searchCount; i++) {
    const params = new URLSearchParams(SEARCHES[i % SEARCHES.length]);
    const started = performance.now();
    const { status } = await getJson(pool, `/api/search?${params}`, key);
    times.push(performance.now() - started);
    if (status !== 200) throw new Error(`search ${params} answered ${status}`);
  }
  times.sort((a, b) => a - b);
  return {
    searches: times.length,
    medianMs: percentile(times, 50),
    p95Ms: percentile(times, 95),
    maxMs: times.at(-1),
  };
}

const sandbox = await startChild([
  BIN,
  '--quiet',
  'sandbox',
  '--port',
  '0',
  '--companies',
  String(companies),
]);
const pool = new Pool(sandbox.url, { connections: concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
try {
  const key = sandbox.keys.full;
  const domains = await domainMix(pool, key);
  // Warm-up: JIT and connection set-up are not what we measure.
  await Promise.all(domains.slice(0, 500).map((d) => getJson(pool, `/api/domains/${d}`, key)));
  const lookups = await lookupLoad(pool, key, domains, sandbox.child.pid);
  const search = await searchTimes(pool, key);
  let baseline = null;
  if (args.baseline) {
    const bare = await startChild(['-e', BARE_SERVER]);
    const barePool = new Pool(bare.url, {
      connections: concurrency,
      pipelining: 1,
      keepAliveTimeout: 30_000,
    });
    await Promise.all(domains.slice(0, 500).map((d) => getJson(barePool, `/api/domains/${d}`, key)));
    baseline = await lookupLoad(barePool, key, domains, bare.child.pid);
    await barePool.close();
    await stopChild(bare.child);
  }
  const result = {
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version, loadavg: loadavg() },
    settings: { companies, seconds, concurrency },
    lookups: {
      ...lookups,
      perSecond: Math.round(lookups.perSecond),
      seconds: Number(lookups.seconds.toFixed(2)),
    },
    baseline: baseline && {
      perSecond: Math.round(baseline.perSecond),
      serverCpuUsPerLookup: baseline.serverCpuUsPerLookup,
    },
    search: Object.fromEntries(Object.entries(search).map(([k, v]) => [k, Number(v.toFixed(2))])),
    targets: { lookupsPerSecond: 5000, searchMs: 20 },
  };
  if (args.json) console.log(JSON.stringify(result));
  else {
    console.log(
      `machine: ${result.machine.cpus} CPUs (${result.machine.model}), node ${result.machine.node}`,
    );
    console.log(
      `lookups: ${result.lookups.perSecond}/s over ${result.lookups.seconds}s at concurrency ${concurrency} ` +
        `(${lookups.lookups} requests, ${lookups.found} found, ${lookups.errors} errors; target >= 5000/s)`,
    );
    if (lookups.serverCpuUsPerLookup !== null)
      console.log(
        `sandbox CPU per lookup: ${lookups.serverCpuUsPerLookup} µs (one core's capacity: ${lookups.perCoreCapacity}/s)`,
      );
    if (result.baseline)
      console.log(
        `baseline (bare node:http, fixed body, same client): ${result.baseline.perSecond}/s, ` +
          `${result.baseline.serverCpuUsPerLookup} µs CPU per request`,
      );
    console.log(
      `load average during the run: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    console.log(
      `search over ${companies} companies: median ${result.search.medianMs} ms, p95 ${result.search.p95Ms} ms, ` +
        `max ${result.search.maxMs} ms (${searchCount} searches; target < 20 ms)`,
    );
  }
} finally {
  await pool.close();
  await stopChild(sandbox.child);
}
