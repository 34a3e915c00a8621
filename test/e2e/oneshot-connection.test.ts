// A one-shot command's connections, seen from the server: the real binary against a front to the
// sandbox that never closes an idle connection itself (no keep-alive timeout). The command exits
// as soon as it has its answer: a connection left idle never keeps it waiting.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
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

it('exits as soon as it has its answer, without waiting for idle connections to close', async () => {
  const dir = mkdtempSync(join(home, 'run-'));
  const result = await runCli(['--base-url', base, '-o', 'json', 'search', 'shoes', '--limit', '1'], {
    env: {
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'), // empty: the fields catalog is fetched first
      COMPANY_DATA_API_KEY: sandbox.keys.full,
    },
    timeoutMs: 20_000,
  });
  expect(result.stderr).toBe('Showing 1 of 13 companies\n');
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout).rows).toHaveLength(1);
  // Killed at 20 s if an idle connection kept it alive.
  expect(result.signal).toBeNull();
  // The calls went through the front.
  expect(connections.length).toBeGreaterThan(0);
});
