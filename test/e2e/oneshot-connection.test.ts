// A one-shot command's connections, seen from the server: the real binary against a front to the
// sandbox that never closes an idle connection itself (no keep-alive timeout). The command exits
// as soon as it has its answer: a connection left idle never keeps it waiting, nor does V8
// recompiling undici's WebAssembly HTTP parser.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN, runCli, startProcess } from '../helpers/cli.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';
import { forwardTo } from '../helpers/server.js';

let sandbox: SandboxHandle;
let front: Server;
let base: string;
let home: string;
const connections: Socket[] = [];

beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 200 });
  front = createServer((req, res) => forwardTo(sandbox.url, req, res));
  front.keepAliveTimeout = 0; // idle connections stay open until the client closes them
  front.on('connection', (socket: Socket) => connections.push(socket));
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  home = mkdtempSync(join(tmpdir(), 'cd-e2e-oneshot-'));
});

afterAll(async () => {
  front?.closeAllConnections();
  await new Promise<void>((resolve) => (front ? front.close(() => resolve()) : resolve()));
  await sandbox?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

const SEARCH = ['-o', 'json', 'search', 'shoes', '--limit', '1'];

/** A fresh configuration and catalog cache: the fields catalog is fetched before the search. */
function freshEnv(): Record<string, string> {
  const dir = mkdtempSync(join(home, 'run-'));
  return {
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    COMPANY_DATA_API_KEY: sandbox.keys.full,
  };
}

it('exits as soon as it has its answer, without waiting for idle connections to close', async () => {
  const result = await runCli(['--base-url', base, ...SEARCH], { env: freshEnv(), timeoutMs: 20_000 });
  expect(result.stderr).toBe('Showing 1 of 13 companies\n');
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout).rows).toHaveLength(1);
  // Killed at 20 s if an idle connection kept it alive.
  expect(result.signal).toBeNull();
  // The calls went through the front.
  expect(connections.length).toBeGreaterThan(0);
});

// Without --liftoff-only (bin/company-data.js), V8 recompiles llhttp's parser function with
// TurboFan after the first responses, on a thread the process then waits for at its exit (150-250
// ms, and as much CPU). V8 reports each WebAssembly compile on stdout under this flag.
it('compiles the HTTP parser with the baseline compiler only, so nothing is left to wait for at exit', async () => {
  const { code, stdout, stderr } = await startProcess(
    process.execPath,
    ['--trace-wasm-compilation-times', BIN, '--base-url', sandbox.url, ...SEARCH],
    { env: freshEnv(), timeoutMs: 20_000 },
  ).done;
  expect(stderr).toBe('Showing 1 of 13 companies\n');
  expect(code).toBe(0);
  const tiers = [...stdout.matchAll(/^Compiled function \S+ using (\w+),/gm)].map((m) => m[1]);
  expect(tiers.length, stdout).toBeGreaterThan(0);
  expect(new Set(tiers)).toEqual(new Set(['Liftoff']));
});
