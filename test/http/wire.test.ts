// The direct transport (src/http/wire.ts) against raw TCP servers on 127.0.0.1 that write
// exactly the bytes a test gives them, split as the test says: every framing the service may
// use, every malformed answer it must refuse, and what happens to the connection afterwards.
import type { IncomingHttpHeaders } from 'node:http';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exchange } from '../../src/http/exchange.js';
import {
  createWireDispatcher,
  IDLE_REUSE_MS,
  MAX_HEAD_BYTES,
  requestBytes,
  type WireDispatcher,
} from '../../src/http/wire.js';

interface Served {
  origin: string;
  /** Every request head received, as text, and the connection (by number) it came on. */
  requests: Array<{ head: string; body: string; connection: number }>;
  connections: number;
  sockets: Socket[];
}

/** How a test answers: the bytes to write for the n-th request, or a function of the socket. */
type Answer = string | Buffer | ((socket: Socket, request: number) => void);

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** Writes `bytes` one byte per turn of the event loop, so the client sees them apart. */
async function trickle(socket: Socket, bytes: Buffer): Promise<void> {
  for (const byte of bytes) {
    if (socket.destroyed) return;
    socket.write(Buffer.of(byte));
    await new Promise((r) => setTimeout(r, 0));
  }
}

async function serve(...answers: Answer[]): Promise<Served> {
  const served: Served = { origin: '', requests: [], connections: 0, sockets: [] };
  const server: Server = createServer((socket) => {
    const connection = ++served.connections;
    served.sockets.push(socket);
    socket.setNoDelay(true);
    let buffer = Buffer.alloc(0);
    socket.on('error', () => {});
    socket.on('data', (data) => {
      buffer = Buffer.concat([buffer, data]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffer.subarray(0, end).toString('latin1');
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
        buffer = buffer.subarray(end + 4 + length);
        const n = served.requests.push({ head, body, connection }) - 1;
        const answer = answers[Math.min(n, answers.length - 1)];
        if (typeof answer === 'function') answer(socket, n);
        else socket.write(answer);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  served.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(() => {
    for (const socket of served.sockets) socket.destroy();
    server.close();
  });
  return served;
}

function dispatcher(idleMs = 2000): WireDispatcher {
  const d = createWireDispatcher({ connectMs: 2000, idleMs });
  cleanups.push(() => d.close());
  return d;
}

interface Got {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function get(
  d: WireDispatcher,
  origin: string,
  path = '/api/me',
  method = 'GET',
  body?: string,
): Promise<Got> {
  return exchange(
    d,
    { origin, path, method, headers: { accept: 'application/json' }, body },
    {},
    { received: 0 },
  ).then((r) => ({ statusCode: r.statusCode, headers: r.headers, body: r.body.toString('utf8') }));
}

async function failure(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a failure');
}

const OK_LENGTH =
  'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}';
const OK_CHUNKED =
  'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n' +
  '4;name=value\r\n{"ok\r\n7\r\n":true}\r\n0\r\nx-trailer: 1\r\n\r\n';

describe('reading a response', () => {
  it('reads a Content-Length body and the headers, names in lower case', async () => {
    const s = await serve(OK_LENGTH);
    const got = await get(dispatcher(), s.origin);
    expect(got).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/json', 'content-length': '11' },
      body: '{"ok":true}',
    });
  });

  it('reads a chunked body with chunk extensions and trailer fields', async () => {
    const s = await serve(OK_CHUNKED);
    const got = await get(dispatcher(), s.origin);
    expect(got.body).toBe('{"ok":true}');
    expect(got.headers['transfer-encoding']).toBe('chunked');
  });

  it.each([
    ['Content-Length', OK_LENGTH],
    ['chunked', OK_CHUNKED],
  ])('reads a %s response that arrives one byte at a time', async (_name, bytes) => {
    const s = await serve((socket) => void trickle(socket, Buffer.from(bytes)));
    const got = await get(dispatcher(), s.origin);
    expect(got.statusCode).toBe(200);
    expect(got.body).toBe('{"ok":true}');
  });

  it('reads a body that ends with the connection when no length is given', async () => {
    const s = await serve((socket) =>
      socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nall of it'),
    );
    const got = await get(dispatcher(), s.origin);
    expect(got.body).toBe('all of it');
  });

  it('skips interim 1xx responses and reads the final one', async () => {
    const s = await serve(
      `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n${OK_LENGTH}`,
    );
    const got = await get(dispatcher(), s.origin);
    expect(got.statusCode).toBe(200);
    expect(got.headers.link).toBeUndefined();
    expect(got.body).toBe('{"ok":true}');
  });

  it('reads no body for 204, and keeps the connection for the next call', async () => {
    const s = await serve('HTTP/1.1 204 No Content\r\nx-a: 1\r\n\r\n', OK_LENGTH);
    const d = dispatcher();
    expect(await get(d, s.origin)).toMatchObject({ statusCode: 204, body: '' });
    expect(await get(d, s.origin)).toMatchObject({ statusCode: 200, body: '{"ok":true}' });
    expect(s.requests.map((r) => r.connection)).toEqual([1, 1]);
  });

  it('joins repeated header fields, and keeps each Set-Cookie apart', async () => {
    const s = await serve(
      'HTTP/1.1 200 OK\r\nVary: a\r\nvary: b\r\nSet-Cookie: x=1\r\nSet-Cookie: y=2\r\nx-pad:   spaced  \r\ncontent-length: 0\r\n\r\n',
    );
    const got = await get(dispatcher(), s.origin);
    expect(got.headers.vary).toBe('a, b');
    expect(got.headers['set-cookie']).toEqual(['x=1', 'y=2']);
    expect(got.headers['x-pad']).toBe('spaced');
  });

  it('reads a body of several megabytes whole', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    const s = await serve(`HTTP/1.1 200 OK\r\ncontent-length: ${big.length}\r\n\r\n${big}`);
    const got = await get(dispatcher(), s.origin);
    expect(got.body.length).toBe(big.length);
  });
});

describe('connections', () => {
  it('sends one call after another on one kept-alive connection', async () => {
    const s = await serve(OK_LENGTH, OK_CHUNKED, OK_LENGTH);
    const d = dispatcher();
    for (let i = 0; i < 3; i++) expect((await get(d, s.origin)).body).toBe('{"ok":true}');
    expect(s.connections).toBe(1);
  });

  it('opens a connection per call made at the same time', async () => {
    const s = await serve(OK_LENGTH);
    const d = dispatcher();
    const got = await Promise.all([get(d, s.origin), get(d, s.origin), get(d, s.origin)]);
    expect(got.map((g) => g.body)).toEqual(Array(3).fill('{"ok":true}'));
    expect(s.connections).toBe(3);
  });

  it.each([
    ['Connection: close', 'HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nhi'],
    ['HTTP/1.0', 'HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nhi'],
    [
      'both Transfer-Encoding and Content-Length',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 99\r\n\r\n2\r\nhi\r\n0\r\n\r\n',
    ],
    ['bytes after the response', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhiEXTRA'],
  ])('does not reuse a connection after %s', async (_name, answer) => {
    const s = await serve(answer);
    const d = dispatcher();
    expect((await get(d, s.origin)).body).toBe('hi');
    expect((await get(d, s.origin)).body).toBe('hi');
    expect(s.connections).toBe(2);
  });

  it.each([
    ['timeout=1 (less than the 2 s margin: not reused)', 'timeout=1', 2],
    ['timeout=3', 'timeout=3', 1],
    ['max=100, timeout=30', 'max=100, timeout=30', 1],
  ])("follows the server's Keep-Alive hint: %s", async (_name, hint, connections) => {
    const s = await serve(`HTTP/1.1 200 OK\r\nkeep-alive: ${hint}\r\ncontent-length: 2\r\n\r\nhi`);
    const d = dispatcher();
    expect((await get(d, s.origin)).body).toBe('hi');
    expect((await get(d, s.origin)).body).toBe('hi');
    expect(s.connections).toBe(connections);
  });

  it(`reuses an idle connection for ${IDLE_REUSE_MS / 1000} s, or what the hint leaves, and then opens a new one`, async () => {
    const s = await serve(
      OK_LENGTH,
      OK_LENGTH,
      'HTTP/1.1 200 OK\r\nkeep-alive: timeout=60\r\ncontent-length: 2\r\n\r\nhi',
      OK_LENGTH,
    );
    const d = dispatcher();
    const start = Date.now();
    const now = vi.spyOn(Date, 'now');
    cleanups.push(() => now.mockRestore());
    now.mockReturnValue(start);
    await get(d, s.origin);
    now.mockReturnValue(start + IDLE_REUSE_MS - 10);
    await get(d, s.origin);
    expect(s.connections).toBe(1);
    now.mockReturnValue(start + 2 * IDLE_REUSE_MS);
    await get(d, s.origin); // the hint: 60 s less the margin
    expect(s.connections).toBe(2);
    now.mockReturnValue(start + 2 * IDLE_REUSE_MS + 57_000);
    await get(d, s.origin); // answered without a hint: 4 s again
    expect(s.connections).toBe(2);
    now.mockReturnValue(start + 2 * IDLE_REUSE_MS + 57_000 + IDLE_REUSE_MS + 1);
    await get(d, s.origin);
    expect(s.connections).toBe(3);
  });

  it('drops an idle connection the server closed, and opens a new one', async () => {
    const s = await serve((socket) => socket.end(OK_LENGTH));
    const d = dispatcher();
    await get(d, s.origin);
    await new Promise((r) => setTimeout(r, 50)); // the server's FIN arrives while idle
    expect((await get(d, s.origin)).body).toBe('{"ok":true}');
    expect(s.connections).toBe(2);
  });

  it('drops an idle connection that sends bytes nobody asked for', async () => {
    const s = await serve((socket, n) => {
      socket.write(OK_LENGTH);
      if (n === 0) setTimeout(() => socket.write('HTTP/1.1 200 OK\r\n'), 10);
    });
    const d = dispatcher();
    await get(d, s.origin);
    await new Promise((r) => setTimeout(r, 50));
    expect((await get(d, s.origin)).body).toBe('{"ok":true}');
    expect(s.connections).toBe(2);
  });

  it('close() ends a call in progress', async () => {
    const s = await serve(() => {});
    const d = dispatcher();
    const pending = failure(get(d, s.origin));
    while (s.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    d.close();
    expect((await pending).code).toBe('UND_ERR_SOCKET');
  });

  it('a refused connection fails with its system code', async () => {
    const s = await serve(OK_LENGTH);
    const port = new URL(s.origin).port;
    for (const cleanup of cleanups.splice(0)) cleanup(); // nothing listens there any more
    await new Promise((r) => setTimeout(r, 20));
    const error = await failure(get(dispatcher(), `http://127.0.0.1:${port}`));
    expect(error.code).toBe('ECONNREFUSED');
  });

  it('reaches an IPv6 loopback origin (the brackets of the URL are not part of the address)', async () => {
    const server = createServer((socket) => socket.end(OK_LENGTH));
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '::1', resolve));
    cleanups.push(() => server.close());
    const got = await get(dispatcher(), `http://[::1]:${(server.address() as AddressInfo).port}`);
    expect(got.body).toBe('{"ok":true}');
  });
});

describe('refusing what is not valid HTTP/1.1', () => {
  it.each([
    ['no status line', 'SSH-2.0-OpenSSH_9.6\r\n\r\n', 'does not start with an HTTP/1.x status line'],
    [
      'a header line without a colon',
      'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n',
      'a header line is malformed',
    ],
    ['a folded header line', 'HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\n\r\n', 'a header line is malformed'],
    [
      'two different lengths',
      'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nhi',
      'Content-Length is not one number',
    ],
    [
      'a negative length',
      'HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n',
      'Content-Length is not one number',
    ],
    [
      'a bad chunk size',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
      'a chunk size is malformed',
    ],
    [
      'a chunk longer than its size',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhello\r\n',
      'longer than its size',
    ],
    ['a protocol switch', 'HTTP/1.1 101 Switching Protocols\r\nupgrade: h2c\r\n\r\n', 'switches protocols'],
  ])('%s', async (_name, answer, message) => {
    const s = await serve(answer);
    const error = await failure(get(dispatcher(), s.origin));
    expect(error.code).toBe('HPE_INVALID_RESPONSE');
    expect(error.message).toContain('The response is not valid HTTP/1.1');
    expect(error.message).toContain(message);
  });

  it(`a head larger than ${MAX_HEAD_BYTES / 1024} KiB`, async () => {
    const s = await serve(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(MAX_HEAD_BYTES)}\r\n`);
    const error = await failure(get(dispatcher(), s.origin));
    expect(error.message).toContain('its head is larger than 64 KiB');
  });

  it('a connection closed before the whole head, or the whole body', async () => {
    for (const answer of [
      'HTTP/1.1 200 OK\r\ncontent-le',
      'HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort',
    ]) {
      const s = await serve((socket) => socket.end(answer));
      const progress = { received: 0 } as { received: number; status?: number };
      const error = await failure(
        exchange(dispatcher(), { origin: s.origin, path: '/', method: 'GET', headers: {} }, {}, progress),
      );
      expect(error.code).toBe('UND_ERR_SOCKET');
      if (answer.endsWith('short')) expect(progress).toEqual({ status: 200, received: 5 });
      else expect(progress.status).toBeUndefined();
    }
  });

  it('a head that never ends, within the idle timeout', async () => {
    const s = await serve('HTTP/1.1 200 OK\r\n');
    const error = await failure(get(dispatcher(100), s.origin));
    expect(error.code).toBe('UND_ERR_HEADERS_TIMEOUT');
  });

  it('a body that stops, within the idle timeout', async () => {
    const s = await serve('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf');
    const error = await failure(get(dispatcher(100), s.origin));
    expect(error.code).toBe('UND_ERR_BODY_TIMEOUT');
  });
});

describe('writing a request', () => {
  const url = new URL('http://127.0.0.1:8080');

  it('writes the method, target, host and headers, and the body with its length in bytes', () => {
    const bytes = requestBytes(url, {
      method: 'POST',
      path: '/api/search?q=caf%C3%A9',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: '{"q":"café"}',
    });
    expect(bytes.toString('utf8')).toBe(
      'POST /api/search?q=caf%C3%A9 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\ncontent-type: application/json\r\n' +
        'authorization: Bearer k\r\ncontent-length: 13\r\n\r\n{"q":"café"}',
    );
  });

  it('gives a POST without a body a zero length, and a GET none', () => {
    expect(requestBytes(url, { method: 'POST', path: '/', headers: {} }).toString()).toContain(
      'content-length: 0\r\n',
    );
    expect(requestBytes(url, { method: 'GET', path: '/', headers: {} }).toString()).not.toContain(
      'content-length',
    );
  });

  it('leaves the default port out of the host header', () => {
    const head = requestBytes(new URL('https://api.example.com'), { method: 'GET', path: '/', headers: {} });
    expect(head.toString()).toContain('\r\nhost: api.example.com\r\n');
  });

  it.each([
    ['a line break in a value', { 'x-a': 'one\r\nx-injected: yes' }, 'ERR_INVALID_CHAR'],
    ['a character past latin1 in a value', { 'x-a': 'ключ' }, 'ERR_INVALID_CHAR'],
    ['a space in a name', { 'x a': '1' }, 'ERR_INVALID_HTTP_TOKEN'],
  ])('refuses %s', (_name, headers, code) => {
    expect(() => requestBytes(url, { method: 'GET', path: '/', headers })).toThrow(
      expect.objectContaining({ code }),
    );
  });

  it('refuses a target with spaces or control characters', () => {
    expect(() => requestBytes(url, { method: 'GET', path: '/a b', headers: {} })).toThrow(
      expect.objectContaining({ code: 'ERR_UNESCAPED_CHARACTERS' }),
    );
  });

  it('sends what requestBytes writes', async () => {
    const s = await serve(OK_LENGTH);
    await get(dispatcher(), s.origin, '/api/search', 'POST', '{"a":1}');
    const { host } = new URL(s.origin);
    expect(s.requests[0].head).toBe(
      `POST /api/search HTTP/1.1\r\nhost: ${host}\r\naccept: application/json\r\ncontent-length: 7`,
    );
    expect(s.requests[0].body).toBe('{"a":1}');
  });
});
