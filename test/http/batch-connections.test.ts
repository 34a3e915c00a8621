// A batch keeps --concurrency calls in flight (src/batch/scheduler.ts); the transport gives each
// call in flight one connection, and a call made after another has finished reuses that one's. The
// server holds every answer a while, so the calls overlap: connections never outnumber the calls
// in flight, however many calls are made in all.
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

const call = (client: Client, i: number) =>
  client.request({ method: 'GET', path: `/api/domains/d${i}.com`, auth: true, spinner: false });

/** `lanes` callers, each making `each` calls one after another. */
const inLanes = (client: Client, lanes: number, each: number) =>
  Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      const answers = [];
      for (let i = 0; i < each; i++) answers.push(await call(client, lane * each + i));
      return answers;
    }),
  ).then((lanes) => lanes.flat());

describe('the connections of many calls', () => {
  it('are never more than the calls in flight', async () => {
    const server = await slowServer();
    const answers = await inLanes(clientFor(server.url), 3, 4);
    expect(answers).toHaveLength(12);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(server.connections()).toBe(3);
  });

  it('are one per call when all are in flight at once', async () => {
    const server = await slowServer();
    const client = clientFor(server.url);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => call(client, i)));
    expect(answers).toHaveLength(6);
    expect(server.connections()).toBe(6);
  });
});

describe('prepareTransport', () => {
  it('does not throw on a configuration the first call will report', async () => {
    const client = clientFor('not a url');
    await expect(client.prepareTransport?.()).resolves.toBeUndefined();
    await expect(
      client.request({ method: 'GET', path: '/api/me', auth: true, spinner: false }),
    ).rejects.toThrow();
  });
});
