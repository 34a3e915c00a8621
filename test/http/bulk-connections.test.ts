// A batch's calls (`bulk`) share connections sized by prepareBulk(): at most twice the calls the
// batch keeps in flight, however many it fires at once. The server holds every answer a while,
// so the calls overlap and an unbounded pool would open one connection per call.
import { createServer } from 'node:http';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/http/client.js';
import { createIO } from '../../src/io.js';
import type { Client } from '../../src/types.js';
import { testConfig } from '../helpers/config.js';
import { listenLocal } from '../helpers/server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function slowServer(): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = createServer((req, res) => {
    req.resume();
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 40);
  });
  server.on('connection', () => connections++);
  const { url, close } = await listenLocal(server);
  cleanups.push(close);
  return {
    url,
    connections: () => connections,
  };
}

function clientFor(baseUrl: string): Client {
  const sink = new Writable({ write: (_c, _e, done) => done() });
  const config = testConfig(baseUrl, { timeoutMs: { value: 5_000, source: 'default' } });
  const client = createClient(config, createIO({ stdout: sink, stderr: sink, env: {} }), { env: {} });
  cleanups.push(() => client.close());
  return client;
}

const fire = (client: Client, calls: number) =>
  Promise.all(
    Array.from({ length: calls }, (_, i) =>
      client.request({
        method: 'GET',
        path: `/api/domains/d${i}.com`,
        auth: true,
        bulk: true,
        spinner: false,
      }),
    ),
  );

describe('prepareBulk', () => {
  it('keeps a batch to twice its calls in flight in connections', async () => {
    const server = await slowServer();
    const client = clientFor(server.url);
    client.prepareBulk?.({ inFlight: 2 });
    const answers = await fire(client, 12);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(server.connections()).toBeGreaterThan(0);
    expect(server.connections()).toBeLessThanOrEqual(4);
  });

  it('without it, overlapping bulk calls are not held back (the bound above is prepareBulk)', async () => {
    const server = await slowServer();
    const answers = await fire(clientFor(server.url), 12);
    expect(answers).toHaveLength(12);
    expect(server.connections()).toBeGreaterThan(4);
  });

  it('does not throw on a configuration the first call will report', async () => {
    const client = clientFor('not a url');
    expect(() => client.prepareBulk?.({ inFlight: 4 })).not.toThrow();
    await expect(
      client.request({ method: 'GET', path: '/api/me', auth: true, spinner: false }),
    ).rejects.toThrow();
  });
});
