// A test's own HTTP server on a loopback port, and how it goes away.
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

/** Listens on 127.0.0.1 (any free port); `close` drops open connections and stops listening. */
export async function listenLocal(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Passes a request on to `base` (e.g. a sandbox) as it came, and its answer back: a front's default. */
export function forwardTo(base: string, req: IncomingMessage, res: ServerResponse): void {
  const target = new URL(base);
  const onward = request(
    { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  onward.on('error', () => res.destroy());
  req.pipe(onward);
}

/**
 * An HTTP proxy on loopback that tunnels every CONNECT to the same port on 127.0.0.1, whatever
 * host it names (`service.invalid:4100` reaches 127.0.0.1:4100), and records what it was asked for.
 */
export async function tunnelProxy(): Promise<{ url: string; tunnels: string[]; close: () => Promise<void> }> {
  const tunnels: string[] = [];
  const proxy = createServer((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req: IncomingMessage, socket: Socket) => {
    tunnels.push(req.url ?? '');
    const onward = connect(Number((req.url ?? '').split(':').pop()), '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      onward.pipe(socket).pipe(onward);
    });
    onward.on('error', () => socket.destroy());
    socket.on('error', () => onward.destroy());
  });
  const { url, close } = await listenLocal(proxy);
  return { url, tunnels, close };
}
