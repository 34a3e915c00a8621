// A test's own HTTP server on a loopback port, and how it goes away.
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

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

/** What a front may change of an answer: its headers and its JSON body (undefined: as it came). */
export type AnswerRewrite = (
  path: string,
  headers: IncomingHttpHeaders,
  body: Record<string, unknown>,
) => { headers?: IncomingHttpHeaders; body?: Record<string, unknown> } | undefined;

/**
 * A front that passes every request to `base`, its path as `route` reads it (a server that
 * normalises paths), and lets `rewrite` change the JSON answers it cares about (a proxy that lies
 * about charges, a service that states its limits in headers). Other answers go back as they came.
 */
export function answerFront(
  base: string,
  rewrite: AnswerRewrite = () => undefined,
  route = (path: string) => path,
): Server {
  return createServer((req, res) => {
    const target = new URL(base);
    const onward = request(
      {
        host: target.hostname,
        port: target.port,
        path: route(req.url ?? '/'),
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          let text = Buffer.concat(chunks).toString('utf8');
          const { 'content-length': _length, ...headers } = answer.headers;
          let sent: IncomingHttpHeaders = headers;
          try {
            const changed = rewrite(req.url ?? '', headers, JSON.parse(text));
            if (changed?.body) text = JSON.stringify(changed.body);
            if (changed?.headers) sent = changed.headers;
          } catch {
            // Not JSON: as it came.
          }
          res.writeHead(answer.statusCode ?? 502, sent);
          res.end(text);
        });
      },
    );
    onward.on('error', () => res.destroy());
    req.pipe(onward);
  });
}

/**
 * A front that lets `rewrite` change the JSON bodies of the paths it cares about (a catalog that
 * understates a price, a record full of controls).
 */
export function rewritingFront(
  base: string,
  rewrite: (path: string, body: Record<string, unknown>) => Record<string, unknown> | undefined,
): Server {
  return answerFront(base, (path, _headers, body) => {
    const changed = rewrite(path, body);
    return changed && { body: changed };
  });
}

/**
 * A front that passes every request on to `base`. After `hold(n)` it holds the lookups
 * (`/api/domains/...`) until more than `n` of them wait at once, then lets them and every later one
 * through. With `n` a client's --concurrency, that many lookups waiting means two clients are under
 * way at the same moment: clients started together are sure to overlap, however late one starts.
 */
export function overlappingFront(base: string): { server: Server; hold: (moreThan: number) => void } {
  let limit = 0;
  let holding = false;
  const held: Array<() => void> = [];
  const server = createServer((req, res) => {
    const pass = () => forwardTo(base, req, res);
    if (!holding || !req.url?.startsWith('/api/domains/')) return pass();
    held.push(pass);
    if (held.length <= limit) return;
    holding = false;
    for (const release of held.splice(0)) release();
  });
  const hold = (moreThan: number) => {
    limit = moreThan;
    holding = true;
  };
  return { server, hold };
}
