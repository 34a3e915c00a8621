// A forward HTTP proxy on loopback for tests, and a record of what it was asked to carry:
// - an absolute-URI request (`GET http://host:port/path`, what a client sends for an http://
//   service) is forwarded, and its answer passed back;
// - a CONNECT (what a client sends for an https:// service) is tunnelled.
// Whatever host a request names, the proxy connects to that port on 127.0.0.1, so a test can use
// a name only the proxy "knows" (`service.invalid:4100` reaches 127.0.0.1:4100).
import { createServer, request } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

export interface ForwardProxy {
  url: string;
  /** Absolute URIs of the requests forwarded, in order (`GET http://host:port/path`). */
  forwarded: string[];
  /** `host:port` of each CONNECT tunnel opened. */
  tunnels: string[];
  close(): Promise<void>;
}

// Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own are not passed on.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export async function startForwardProxy(): Promise<ForwardProxy> {
  const forwarded: string[] = [];
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();

  const proxy = createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new Error('not http');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('absolute http:// URI expected\n');
      return;
    }
    forwarded.push(`${req.method} ${req.url}`);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    const onward = request(
      {
        host: '127.0.0.1',
        port: Number(target.port) || 80,
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers,
      },
      (answer) => {
        const back: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (value !== undefined && !HOP_BY_HOP.has(name)) back[name] = value;
        res.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(res);
        answer.on('aborted', () => res.destroy());
        answer.on('error', () => res.destroy());
      },
    );
    // An upstream that resets or refuses is passed on as a closed connection (a real proxy would
    // answer 502), so that tests see the same failure with and without the proxy.
    onward.on('error', () => res.destroy());
    // The client gave up (its timeout) before the answer was through: so does the proxy.
    res.on('close', () => {
      if (!res.writableFinished) onward.destroy();
    });
    req.pipe(onward);
  });

  proxy.on('connect', (req, socket: Socket) => {
    const hostPort = req.url ?? '';
    tunnels.push(hostPort);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const onward = connect(Number(hostPort.split(':').pop()), '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      onward.pipe(socket).pipe(onward);
    });
    onward.on('error', () => socket.destroy());
    socket.on('error', () => onward.destroy());
    socket.on('close', () => onward.destroy());
  });

  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    forwarded,
    tunnels,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
