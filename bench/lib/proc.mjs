// Child processes of the benchmark: the built CLI, sandboxes, timed runs, peak memory.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const GNU_TIME = '/usr/bin/time';
/** The CLI under test: a snapshot of the build, set by makeScratch(). */
export let BIN = join(ROOT, 'bin/company-data.js');

/**
 * A scratch directory for one benchmark run; also the CLI's config and cache home, so neither a
 * developer's settings nor a catalog cached by another run changes what is measured.
 * The build (bin/, dist/, package.json) is copied into it first: `npm run build` elsewhere (tests
 * rebuild dist/) must not swap the binary out from under a measurement. Nothing here knows what
 * dist/ holds: the copy is run through its bin/, and node_modules is linked beside it in case the
 * build leaves a dependency outside the bundle.
 */
export function makeScratch() {
  const dir = mkdtempSync(join(tmpdir(), 'company-data-bench-'));
  // BENCH_BUILD names another build (a directory with bin/, dist/ and package.json) to measure
  // instead of this checkout's, for a before-and-after with the same bench.
  const from = process.env.BENCH_BUILD || ROOT;
  for (const part of ['bin', 'dist', 'package.json']) {
    if (!existsSync(join(from, part))) throw new Error(`${part} is missing: run \`npm run build\` first`);
    cpSync(join(from, part), join(dir, 'app', part), { recursive: true });
  }
  if (existsSync(join(ROOT, 'node_modules')))
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'app/node_modules'));
  BIN = join(dir, 'app/bin/company-data.js');
  const check = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8', env: nodeEnv() });
  if (check.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the build does not run (${check.stderr.trim()}): run \`npm run build\` first`);
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Variables that change what a bare Node start costs, dropped from every Node process the bench
 * starts (the CLI, `node -e 0` and the bare loop alike). NODE_EXTRA_CA_CERTS makes Node 20 read
 * and parse the named CA bundle before running anything (~60 ms on a machine that sets it
 * machine-wide), which would squeeze every start-up ratio towards 1.0x. No run of the bench makes
 * a TLS connection, so nothing else changes.
 */
export const DROPPED_NODE_VARIABLES = ['NODE_EXTRA_CA_CERTS'];

/** The caller's environment minus DROPPED_NODE_VARIABLES: for every Node process of the bench. */
export function nodeEnv() {
  const env = { ...process.env };
  for (const name of DROPPED_NODE_VARIABLES) delete env[name];
  return env;
}

/** The environment every CLI run gets: nodeEnv() minus COMPANY_DATA_*, plus `extra`. */
export function cliEnv(scratch, extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(nodeEnv())) {
    if (k.startsWith('COMPANY_DATA_') || k === 'NO_COLOR' || k === 'FORCE_COLOR') continue;
    env[k] = v;
  }
  env.XDG_CONFIG_HOME = join(scratch, 'config');
  env.XDG_CACHE_HOME = join(scratch, 'cache');
  return { ...env, ...extra };
}

/**
 * Wall time in ms of one process from spawn to exit, and its CPU time (user + system, all
 * threads) when GNU time is there to report it. spawnSync keeps the benchmark's own event loop out
 * of the measurement; output goes to /dev/null. On a shared machine the wall time swings with the
 * neighbours' load; CPU time is steadier and says what the process itself costs.
 */
export function timeSync(argv, env, scratch) {
  const report = scratch && existsSync(GNU_TIME) ? join(scratch, 'time.txt') : undefined;
  const full = report ? [GNU_TIME, '-f', '%U %S', '-o', report, ...argv] : argv;
  const started = performance.now();
  const result = spawnSync(full[0], full.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - started;
  if (result.status !== 0) {
    throw new Error(`${argv.join(' ')} exited with ${result.status}: ${String(result.stderr).slice(0, 500)}`);
  }
  let cpuMs = Number.NaN;
  if (report) {
    const [user, system] = readFileSync(report, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
    cpuMs = (user + system) * 1000;
  }
  return { ms, cpuMs };
}

/** Runs a command to completion; resolves with its wall time, exit code and stderr tail. */
export async function run(argv, { env, stdout = 'ignore', cwd = ROOT } = {}) {
  const started = performance.now();
  const child = spawn(argv[0], argv.slice(1), { env, cwd, stdio: ['ignore', stdout, 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const [code] = await once(child, 'close');
  return { ms: performance.now() - started, code, stderr };
}

/**
 * Like run(), and also the peak resident set size in MB and the CPU time (user + system) in ms,
 * from GNU time; without it, the peak from /proc and no CPU time.
 */
export async function runMeasured(argv, options) {
  if (existsSync(GNU_TIME)) {
    const out = join(options.scratch, `time-${process.hrtime.bigint()}.txt`);
    const result = await run([GNU_TIME, '-f', '%M %U %S', '-o', out, ...argv], options);
    const [kb, user, system] = readFileSync(out, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
    return { ...result, peakRssMb: kb / 1024, cpuMs: (user + system) * 1000, source: GNU_TIME };
  }
  return runPollingHighWaterMark(argv, options);
}

// VmHWM is the process's own high-water mark, so sampling it often enough before exit loses at
// most what was allocated after the last sample; the CPU time is the last sample's (utime and
// stime of /proc/<pid>/stat, in USER_HZ = 100 ticks a second), so it misses the last 20 ms.
async function runPollingHighWaterMark(argv, options) {
  const started = performance.now();
  const child = spawn(argv[0], argv.slice(1), { env: options.env, cwd: ROOT, stdio: 'ignore' });
  let kb = 0;
  let cpuMs = Number.NaN;
  const timer = setInterval(() => {
    try {
      const match = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (match) kb = Math.max(kb, Number(match[1]));
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      cpuMs = (Number(stat[11]) + Number(stat[12])) * 10;
    } catch {
      // the process has just exited
    }
  }, 20);
  const [code] = await once(child, 'close');
  clearInterval(timer);
  return {
    ms: performance.now() - started,
    code,
    stderr: '',
    peakRssMb: kb / 1024,
    cpuMs,
    source: '/proc (sampled every 20 ms)',
  };
}

/**
 * Starts `company-data sandbox` on a free loopback port and waits for its handshake line
 * ({"url","keys"}). Returns the url, the keys and stop().
 */
export async function startSandbox({ companies, latency = 0, rateLimit = 0, scratch }) {
  const argv = [BIN, '--quiet', 'sandbox', '--port', '0', '--companies', String(companies)];
  if (latency) argv.push('--latency', String(latency));
  if (rateLimit) argv.push('--rate-limit', String(rateLimit));
  return startServer([process.execPath, ...argv], cliEnv(scratch));
}

/** Starts a process that prints one JSON line when it listens; see startSandbox. */
export async function startServer(argv, env) {
  const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const [line] = await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`${argv.slice(1).join(' ')} exited with ${code} before listening`);
    }),
  ]);
  const handshake = JSON.parse(line);
  return {
    ...handshake,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
