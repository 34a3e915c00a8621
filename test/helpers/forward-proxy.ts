// A forward HTTP proxy on loopback for tests, and a record of what it was asked to carry:
// - an absolute-URI request (`GET http://host:port/path`, what a client sends for an http://
//   service) is forwarded, and its answer passed back;
// - a CONNECT (what a client sends for an https:// service) is tunnelled.
// Whatever host a request names, the proxy connects to that port on 127.0.0.1, so a test can use
// a name only the proxy "knows" (`service.invalid:4100` reaches 127.0.0.1:4100).
// Started with `credentials`, it answers 407 to any request or CONNECT without them in
// Proxy-Authorization (Basic), as a proxy that wants a user name and password does. Started with
// `refuseConnect`, it answers every CONNECT with that status.
import { createServer, type IncomingMessage, request } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

export interface ForwardProxy {
  url: string;
  /** Absolute URIs of the requests forwarded, in order (`GET http://host:port/path`). */
  forwarded: string[];
  /** `host:port` of each CONNECT tunnel opened. */
  tunnels: string[];
  /** Requests and CONNECTs refused (407 for wrong or missing credentials, or refuseConnect), in order. */
  refused: string[];
  /** TCP connections accepted. */
  connections(): number;
  close(): Promise<void>;
}

export interface ForwardProxyOptions {
  /** `user:password` the proxy demands (Basic), answering 407 without them. */
  credentials?: string;
  /**
   * Every CONNECT is answered with this status and no tunnel, as a stock squid answers CONNECT to
   * a port other than 443 (403); absolute-URI requests are still forwarded.
   */
  refuseConnect?: number;
}

const CHALLENGE = 'Basic realm="test proxy"';

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

export async function startForwardProxy(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const forwarded: string[] = [];
  const tunnels: string[] = [];
  const refused: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const expected = options.credentials
    ? `Basic ${Buffer.from(options.credentials).toString('base64')}`
    : undefined;
  const authorised = (req: IncomingMessage) => {
    if (!expected || req.headers['proxy-authorization'] === expected) return true;
    refused.push(`${req.method} ${req.url}`);
    return false;
  };

  const proxy = createServer((req, res) => {
    if (!authorised(req)) {
      res.writeHead(407, { 'proxy-authenticate': CHALLENGE, 'content-type': 'text/plain' }).end('auth\n');
      return;
    }
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

  proxy.on('connection', () => {
    connections++;
  });

  proxy.on('connect', (req, socket: Socket) => {
    if (!authorised(req)) {
      socket.end(
        `HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: ${CHALLENGE}\r\nContent-Length: 0\r\n\r\n`,
      );
      return;
    }
    if (options.refuseConnect !== undefined) {
      refused.push(`CONNECT ${req.url}`);
      socket.end(`HTTP/1.1 ${options.refuseConnect} Refused\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
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
    refused,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
