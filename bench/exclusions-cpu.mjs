// Figure 6 in finer grain, for comparing builds side by side: the CPU a search with 20,000
// exclusions costs, and the time from spawn to the request's arrival, for one or more builds run
// in alternation (a busy 2-core box drifts over minutes, so only interleaved runs compare).
//
//   node bench/exclusions-cpu.mjs [--rounds N] [--in-process] [app-dir ...]
//
// An app dir holds bin/ and dist/ (a copy of a build); the default is this checkout. Each round
// runs, per build: `search shoes --exclude list.csv`, the same without --exclude, and --version,
// under GNU time when it is there (CPU of all threads, 10 ms steps). --in-process instead times
// loadExclusions alone (src/exclusions.ts bundled with esbuild), a fresh process per run, with
// process.cpuUsage() around the call: no start-up, no HTTP, finer than GNU time.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeEnv } from './lib/proc.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GNU_TIME = '/usr/bin/time';
const args = process.argv.slice(2);
const take = (flag) => {
  const i = args.indexOf(flag);
  return i === -1 ? undefined : args.splice(i, 2)[1];
};
const rounds = Number(take('--rounds') ?? 15);
const inProcess = args.includes('--in-process');
const apps = args.filter((a) => !a.startsWith('--')).map((a) => resolve(a));
if (apps.length === 0) apps.push(ROOT);

const scratch = mkdtempSync(join(tmpdir(), 'exclusions-cpu-'));
const csv = join(scratch, 'exclusions.csv');
{
  // The spellings of bench/lib/exclusions.mjs: bare, URL with www and a path, upper case.
  let text = 'company,domain\n';
  for (let i = 0; i < 20_000; i++) {
    const domain = `excluded-${i}.com`;
    if (i % 3 === 1) text += `Company ${i},https://www.${domain}/about\n`;
    else if (i % 3 === 2) text += `Company ${i},${domain.toUpperCase()}\n`;
    else text += `Company ${i},${domain}\n`;
  }
  writeFileSync(csv, text);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (xs) => `median ${median(xs).toFixed(1)} (min ${Math.min(...xs).toFixed(1)})`;

async function runInProcess() {
  const { build } = await import('esbuild');
  const bundles = [];
  for (const [n, app] of apps.entries()) {
    const outfile = join(scratch, `exclusions-${n}.mjs`);
    await build({
      entryPoints: [join(app, 'src/exclusions.ts')],
      outfile,
      bundle: true,
      format: 'esm',
      platform: 'node',
      logLevel: 'warning',
      // A copied source tree has no node_modules of its own.
      nodePaths: [join(ROOT, 'node_modules')],
    });
    const runner = join(scratch, `run-${n}.mjs`);
    writeFileSync(
      runner,
      `import { loadExclusions } from './exclusions-${n}.mjs';
const start = process.cpuUsage();
const list = await loadExclusions({ files: [${JSON.stringify(csv)}], domains: [] }, { stdin: process.stdin });
const body = JSON.stringify({ query: 'shoes', exclude_domains: list.domains });
const used = process.cpuUsage(start);
process.stdout.write(JSON.stringify({ ms: (used.user + used.system) / 1000, n: list.domains.length, bytes: body.length }));`,
    );
    bundles.push(runner);
  }
  const times = apps.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < apps.length; k++) {
      const i = (r + k) % apps.length;
      const out = spawnSync(process.execPath, [bundles[i]], { encoding: 'utf8', env: nodeEnv() });
      if (out.status !== 0) throw new Error(out.stderr);
      const result = JSON.parse(out.stdout);
      if (result.n !== 20_000) throw new Error(`expected 20,000 domains, got ${result.n}`);
      times[i].push(result.ms);
    }
  }
  for (const [i, app] of apps.entries())
    console.log(`${app}\n  loadExclusions + JSON, CPU ms: ${fmt(times[i])}`);
}

async function standIn() {
  const catalogs = {};
  let waiting;
  const server = createServer((req, res) => {
    const arrived = performance.timeOrigin + performance.now();
    if (req.url.startsWith('/api/search')) waiting?.(arrived);
    req.resume();
    req.on('end', () => {
      const name = req.url.split('?')[0].replace('/api/', '');
      res.writeHead(200, { 'content-type': 'application/json', 'x-credits-charged': '0' });
      res.end(catalogs[name] ?? JSON.stringify({ total: 0, rows: [] }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    catalogs,
    url: `http://127.0.0.1:${server.address().port}`,
    next: () => new Promise((r) => (waiting = r)),
    close: () => new Promise((r) => server.close(r)),
  };
}

/** The catalogs a search reads, from a real sandbox of the first build. */
async function loadCatalogs(into) {
  const child = spawn(
    process.execPath,
    [join(apps[0], 'bin/company-data.js'), '--quiet', 'sandbox', '--port', '0'],
    {
      env: {
        ...nodeEnv(),
        XDG_CONFIG_HOME: join(scratch, 'config'),
        XDG_CACHE_HOME: join(scratch, 'sb-cache'),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const [chunk] = await once(child.stdout, 'data');
  const { url } = JSON.parse(String(chunk).split('\n')[0]);
  for (const name of ['fields', 'products', 'errors'])
    into[name] = await (await fetch(`${url}/api/${name}`)).text();
  child.kill();
}

async function runCli() {
  const service = await standIn();
  await loadCatalogs(service.catalogs);
  const report = join(scratch, 'time.txt');
  const timed = existsSync(GNU_TIME);
  const envOf = (i) => ({
    ...nodeEnv(),
    COMPANY_DATA_API_KEY: 'cd_bench_key',
    XDG_CONFIG_HOME: join(scratch, `config-${i}`),
    XDG_CACHE_HOME: join(scratch, `cache-${i}`),
  });
  async function search(i, extra) {
    const argv = [
      process.execPath,
      join(apps[i], 'bin/company-data.js'),
      '--quiet',
      '--base-url',
      service.url,
    ];
    argv.push('-o', 'json', 'search', 'shoes', ...extra);
    const full = timed ? [GNU_TIME, '-f', '%U %S', '-o', report, ...argv] : argv;
    const arrival = service.next();
    const spawned = performance.timeOrigin + performance.now();
    const child = spawn(full[0], full.slice(1), { env: envOf(i), stdio: 'ignore' });
    const [arrived] = await Promise.all([arrival, once(child, 'close')]);
    if (child.exitCode !== 0) throw new Error(`search exited with ${child.exitCode}`);
    const cpu = timed ? readFileSync(report, 'utf8').trim().split(/\s+/).slice(-2) : [Number.NaN, 0];
    return { wall: arrived - spawned, cpu: (Number(cpu[0]) + Number(cpu[1])) * 1000 };
  }
  const stats = apps.map(() => ({ withWall: [], withCpu: [], noWall: [], noCpu: [], version: [] }));
  try {
    for (let i = 0; i < apps.length; i++) await search(i, []); // caches the fields catalog
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < apps.length; k++) {
        const i = (r + k) % apps.length;
        const withList = await search(i, ['--exclude', csv]);
        const without = await search(i, []);
        const started = performance.now();
        spawnSync(process.execPath, [join(apps[i], 'bin/company-data.js'), '--version'], {
          stdio: 'ignore',
          env: envOf(i),
        });
        stats[i].version.push(performance.now() - started);
        stats[i].withWall.push(withList.wall);
        stats[i].withCpu.push(withList.cpu);
        stats[i].noWall.push(without.wall);
        stats[i].noCpu.push(without.cpu);
      }
    }
  } finally {
    await service.close();
  }
  for (const [i, app] of apps.entries()) {
    const s = stats[i];
    console.log(app);
    console.log(`  --exclude: spawn->request ms ${fmt(s.withWall)}; process CPU ms ${fmt(s.withCpu)}`);
    console.log(`  no exclude: spawn->request ms ${fmt(s.noWall)}; process CPU ms ${fmt(s.noCpu)}`);
    console.log(`  --version wall ms ${fmt(s.version)}`);
    console.log(
      `  client time (figure 6 definition) ${(median(s.withWall) - median(s.version)).toFixed(1)} ms`,
    );
  }
}

try {
  await (inProcess ? runInProcess() : runCli());
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
