// Exclusions: the client's time before a search with 20,000 exclusions read from a CSV leaves.
//
// Definition: a stand-in service (node:http on loopback, in this process) notes the moment the
// search request's headers arrive. Client time = median(spawn -> arrival) minus the median wall
// time of a bare `node -e 0` measured in the same rounds: everything the CLI does before its
// request is out (loading itself, reading, normalising and deduplicating the CSV, validating
// against the cached fields catalog, building the body, connecting), and nothing of Node's own
// start. The same search without exclusions is measured too, so the part due to the list shows.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { writeCsv } from './data.mjs';
import { BIN, cliEnv, nodeEnv, startSandbox } from './proc.mjs';
import { figure, median } from './stats.mjs';

const EXCLUSIONS = 20_000;

/** Serves the catalogs a search reads (copied from a real sandbox) and a small search answer. */
async function standIn(catalogs) {
  let waiting;
  const server = createServer((req, res) => {
    const arrived = performance.timeOrigin + performance.now();
    if (req.method === 'POST' || req.url.startsWith('/api/search')) waiting?.(arrived);
    req.resume();
    req.on('end', () => {
      const path = req.url.split('?')[0];
      const name = path.replace('/api/', '');
      const body = catalogs[name] ?? JSON.stringify({ total: 0, rows: [] });
      res.writeHead(200, { 'content-type': 'application/json', 'x-credits-charged': '0' });
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    nextSearch: () =>
      new Promise((resolve) => {
        waiting = resolve;
      }),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function fetchCatalogs(scratch) {
  const sandbox = await startSandbox({ companies: 1000, scratch });
  try {
    const catalogs = {};
    for (const name of ['fields', 'products', 'errors']) {
      catalogs[name] = await (await fetch(`${sandbox.url}/api/${name}`)).text();
    }
    return catalogs;
  } finally {
    await sandbox.stop();
  }
}

export async function exclusionsFigure({ rounds, scratch, log }) {
  const file = await writeCsv(join(scratch, 'exclusions.csv'), 'company,domain', EXCLUSIONS, (i) => {
    // Mixed spellings, as exported lists have them: URLs, upper case, www.
    const domain = `excluded-${i}.com`;
    if (i % 3 === 1) return `Company ${i},https://www.${domain}/about`;
    if (i % 3 === 2) return `Company ${i},${domain.toUpperCase()}`;
    return `Company ${i},${domain}`;
  });
  const service = await standIn(await fetchCatalogs(scratch));
  const env = cliEnv(scratch, { COMPANY_DATA_API_KEY: 'cd_bench_key' });
  const base = [process.execPath, BIN, '--quiet', '--base-url', service.url, '-o', 'json', 'search', 'shoes'];
  async function untilSearch(extra) {
    const arrival = service.nextSearch();
    const spawned = performance.timeOrigin + performance.now();
    const child = spawn(base[0], [...base.slice(1), ...extra], { env, stdio: 'ignore' });
    const [arrived] = await Promise.all([arrival, once(child, 'close')]);
    if (child.exitCode !== 0) throw new Error(`search ${extra.join(' ')} exited with ${child.exitCode}`);
    return arrived - spawned;
  }
  const bareNode = () => {
    const started = performance.now();
    spawnSync(process.execPath, ['-e', '0'], { env: nodeEnv(), stdio: 'ignore' });
    return performance.now() - started;
  };
  const withList = [];
  const without = [];
  const nodes = [];
  try {
    // The first run caches the fields catalog, as any earlier command against the service would.
    await untilSearch([]);
    await untilSearch(['--exclude', file]);
    log(`exclusions: ${rounds} interleaved searches with ${EXCLUSIONS.toLocaleString('en-US')} exclusions`);
    for (let i = 0; i < rounds; i++) {
      withList.push(await untilSearch(['--exclude', file]));
      without.push(await untilSearch([]));
      nodes.push(bareNode());
    }
  } finally {
    await service.close();
  }
  const clientMs = median(withList) - median(nodes);
  return figure({
    id: 'exclusions.client-time',
    name: `${EXCLUSIONS / 1000}k exclusions from CSV: client time before the request`,
    ratio: clientMs,
    target: { op: '<=', value: 150, unit: 'ms' },
    note: `${median(withList).toFixed(0)} ms from spawn, node -e 0 ${median(nodes).toFixed(0)} ms`,
    details: {
      definition: 'median(spawn -> search request arrives) - median(node -e 0 wall time)',
      spawnToRequestMedianMs: round1(median(withList)),
      nodeMedianMs: round1(median(nodes)),
      withoutExclusionsSpawnToRequestMs: round1(median(without)),
      dueToExclusionsMs: round1(median(withList) - median(without)),
      runs: withList.length,
    },
  });
}

const round1 = (n) => Math.round(n * 10) / 10;
