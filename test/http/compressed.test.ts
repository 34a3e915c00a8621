// Answers compressed on the way (a proxy may do it though the client sends no Accept-Encoding):
// a small loopback server sends gzip, deflate and br bodies, and the client reads them as if plain.
import { createServer, type ServerResponse } from 'node:http';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/http/client.js';
import { Problem } from '../../src/problem.js';
import type { Client } from '../../src/types.js';
import { testConfig } from '../helpers/config.js';
import { listenLocal } from '../helpers/server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Answer = (res: ServerResponse) => void;

async function clientAnswering(answer: Answer): Promise<{ client: Client; acceptEncoding: () => unknown }> {
  let acceptEncoding: unknown;
  const server = createServer((req, res) => {
    acceptEncoding = req.headers['accept-encoding'];
    req.resume();
    answer(res);
  });
  const { url, close } = await listenLocal(server);
  cleanups.push(close);
  const client = createClient(testConfig(url), { env: {} });
  cleanups.push(() => client.close());
  return { client, acceptEncoding: () => acceptEncoding };
}

const compressed =
  (status: number, type: string, encoding: string, body: Buffer): Answer =>
  (res) => {
    res.writeHead(status, { 'content-type': type, 'content-encoding': encoding });
    res.end(body);
  };

const ME = { method: 'GET', path: '/api/me', auth: true } as const;
const ACCOUNT = { plan: 'pro', balance: 1000, note: 'é' };
const plain = Buffer.from(JSON.stringify(ACCOUNT));

async function failure(promise: Promise<unknown>): Promise<Problem> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof Problem) return error;
  throw new Error(`expected a Problem, got ${String(error)}`);
}

describe('a compressed answer', () => {
  it('is decoded from gzip before it is parsed, and nothing asked for it', async () => {
    const { client, acceptEncoding } = await clientAnswering(
      compressed(200, 'application/json', 'gzip', gzipSync(plain)),
    );
    const res = await client.request(ME);
    expect(res.data).toEqual(ACCOUNT);
    expect(acceptEncoding()).toBeUndefined();
  });

  it('is decoded for a problem+json error body too', async () => {
    const problem = {
      type: 'https://x.dev/problems/insufficient-credits',
      title: 'Insufficient credits',
      status: 403,
      code: 'insufficient_credits',
      detail: 'The balance is 0.',
    };
    const { client } = await clientAnswering(
      compressed(403, 'application/problem+json', 'gzip', gzipSync(JSON.stringify(problem))),
    );
    const p = await failure(client.request(ME));
    expect(p).toMatchObject({ code: 'insufficient_credits', status: 403, detail: 'The balance is 0.' });
    expect(p.exitCode).toBe(4);
  });

  it.each([
    ['deflate', deflateSync(plain)],
    ['deflate', deflateRawSync(plain)],
    ['br', brotliCompressSync(plain)],
    ['gzip, br', brotliCompressSync(gzipSync(plain))],
  ])('is decoded from %s', async (encoding, body) => {
    const { client } = await clientAnswering(compressed(200, 'application/json', encoding, body));
    expect((await client.request(ME)).data).toEqual(ACCOUNT);
  });

  it('in an encoding it cannot read is a problem naming the encoding, not malformed JSON', async () => {
    const { client } = await clientAnswering(
      compressed(200, 'application/json', 'zz-pack', Buffer.from([0x28, 0xb5, 0x2f, 0xfd])),
    );
    const p = await failure(client.request(ME));
    expect(p.code).toBe('unexpected_response');
    expect(p.detail).toContain('"zz-pack"');
    expect(p.detail).not.toMatch(/malformed|\ufffd/);
    expect(p.retryable).toBe(false);
  });

  it('that does not decode is a retryable problem saying so', async () => {
    const { client } = await clientAnswering(
      compressed(200, 'application/json', 'gzip', Buffer.from('not gzip at all')),
    );
    const p = await failure(client.request(ME));
    expect(p.code).toBe('unexpected_response');
    expect(p.detail).toMatch(/marked gzip but could not be decoded/);
    expect(p.retryable).toBe(true);
  });
});
