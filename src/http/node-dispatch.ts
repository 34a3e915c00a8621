// A light transport on node:http for one-shot commands. Loading undici (its dispatchers, its
// WebAssembly HTTP parser, and through it node:tls and node:http2) costs about 50 ms of start-up,
// a third of a single `errors -o json`; node:http is part of Node and loads in a few ms. undici
// stays the transport of a batch (about 20% less CPU per call once loaded) and of proxies.
//
// It speaks the same small dialect as undici's `Dispatcher.request`, and reports its timeouts
// with undici's error codes, so the client and its problem mapping see one kind of transport.
import type { Agent, IncomingHttpHeaders, IncomingMessage, RequestOptions } from 'node:http';
import type { Readable } from 'node:stream';

export interface DispatchOptions {
  origin: string;
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export interface DispatchResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/** What the client needs of a transport: undici's `Dispatcher` has the same shape. */
export interface Dispatch {
  request(options: DispatchOptions): Promise<DispatchResponse>;
}

export interface NodeDispatcher extends Dispatch {
  close(): void;
}

export interface NodeDispatchTimeouts {
  connectMs: number;
  /** From the request sent to the response's headers, and then between two body chunks. */
  idleMs: number;
}

/** A transport failure, with the code the problem mapping reads (undici's, for its timeouts). */
class TransportError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** What node:http and node:https have in common here. */
interface HttpModule {
  request: typeof import('node:http')['request'];
  Agent: typeof import('node:http')['Agent'];
}

export function createNodeDispatcher(timeouts: NodeDispatchTimeouts): NodeDispatcher {
  const modules = new Map<string, Promise<HttpModule>>();
  const agents = new Map<string, Agent>();
  const origins = new Map<string, URL>();

  const moduleFor = (protocol: string): Promise<HttpModule> => {
    let loading = modules.get(protocol);
    if (!loading) {
      loading = (protocol === 'https:' ? import('node:https') : import('node:http')) as Promise<HttpModule>;
      modules.set(protocol, loading);
    }
    return loading;
  };

  async function request(options: DispatchOptions): Promise<DispatchResponse> {
    let origin = origins.get(options.origin);
    if (!origin) {
      origin = new URL(options.origin);
      origins.set(options.origin, origin);
    }
    const http = await moduleFor(origin.protocol);
    let agent = agents.get(origin.protocol);
    if (!agent) {
      // Kept alive: a command's catalog call and its main call share one connection.
      agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
      agents.set(origin.protocol, agent);
    }
    const headers: Record<string, string | number> = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const target: RequestOptions = {
      protocol: origin.protocol,
      // `[::1]` in a URL is `::1` to the socket.
      hostname: origin.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: origin.port || undefined,
      path: options.path,
      method: options.method,
      headers,
      agent,
      signal: options.signal,
    };
    return send(http, target, options.body, timeouts);
  }

  return {
    request,
    close() {
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  };
}

function send(
  http: HttpModule,
  target: RequestOptions,
  body: string | undefined,
  timeouts: NodeDispatchTimeouts,
): Promise<DispatchResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(target);
    let timer: NodeJS.Timeout | undefined;
    const arm = (ms: number, code: string, message: string, fail: (error: Error) => void) => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(new TransportError(message, code)), ms);
    };
    const headersTimeout = () =>
      arm(timeouts.idleMs, 'UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error', (e) => req.destroy(e));

    req.once('socket', (socket) => {
      if (!socket.connecting) return headersTimeout();
      arm(timeouts.connectMs, 'UND_ERR_CONNECT_TIMEOUT', 'Connect Timeout Error', (e) => req.destroy(e));
      socket.once('connect', headersTimeout);
    });
    // on, not once: a socket error after the response may reach the request too.
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.once('response', (res: IncomingMessage) => {
      clearTimeout(timer);
      // The socket's own idle timer (no listener on the body, which would start it flowing
      // before the caller reads it); the agent resets it when the socket goes back to the pool.
      res.setTimeout(timeouts.idleMs, () =>
        res.destroy(new TransportError('Body Timeout Error', 'UND_ERR_BODY_TIMEOUT')),
      );
      resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
    });
    req.end(body);
  });
}
