// HTTP/1.1 for every call going direct, one-shot commands and batches alike, straight over
// node:net (node:tls for https). Calls through a proxy go over undici (src/http/transport.ts).
//
// Why not node:http: a one-request command spends most of its time starting up, and node:http's
// first request runs a large amount of code for the first time (the Agent, ClientRequest,
// OutgoingMessage, IncomingMessage and their streams, the parser's callbacks). A bare
// `http.get()` of the errors catalog took ~9 ms longer than the same request written on a
// node:net socket, out of a start of ~60 ms (docs/performance.md, "Eleventh pass"). Why not
// undici for a batch: over this, a 2,000-row batch spent ~25% less CPU per row, and no wasm
// parser to compile ("Twelfth pass").
//
// What it speaks is small on purpose: one request at a time per connection, a head written in one
// go with the body (a JSON string), and a response read whole and handed to the caller in pieces
// through the same handler interface as undici's `dispatch` (src/http/exchange.ts collects it).
// The response side follows RFC 9112: a status line, header fields, and a body framed by
// `Transfer-Encoding: chunked`, by `Content-Length`, or by the end of the connection; interim
// 1xx responses are skipped; no body for HEAD, 204 and 304. Anything else is refused with a
// clear error rather than guessed at. A connection is kept for the next call when the response
// was complete, framed, and not `Connection: close`; idle, it is unref'd, so it never keeps the
// process alive, and the kernel closes it at exit. As undici does, an idle connection is reused
// only within 4 s, or within the server's `Keep-Alive: timeout=N` less 2 s: a server closes an
// idle connection on its own clock, and a request written as it does so would be lost. Over TLS,
// a new connection resumes the latest session of its origin (undici's session cache does the
// same), which spares the handshake's certificate work when a batch opens its connections.
//
// Timeouts and failures carry undici's error codes, so the client's problem mapping reads one
// kind of transport: UND_ERR_CONNECT_TIMEOUT, UND_ERR_HEADERS_TIMEOUT (request written -> whole
// head), UND_ERR_BODY_TIMEOUT (between two pieces of the body), UND_ERR_SOCKET (closed early).
import type { IncomingHttpHeaders } from 'node:http';
import { connect as connectTcp, isIP, type Socket } from 'node:net';

export interface DispatchOptions {
  origin: string;
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** Ends a request in progress (undici's request controller has the same method). */
export interface Controller {
  abort(reason: Error): void;
}

/** Receives one response (undici's v7 dispatch handler has the same shape). */
export interface Handler {
  onRequestStart(controller: Controller): void;
  onResponseStart(controller: Controller, statusCode: number, headers: IncomingHttpHeaders): void;
  onResponseData(controller: Controller, chunk: Buffer): void;
  onResponseEnd(controller: Controller): void;
  onResponseError(controller: Controller, error: Error): void;
}

/** What the client needs of a transport: undici's dispatchers have the same method. */
export interface Dispatch {
  dispatch(options: Omit<DispatchOptions, 'signal'>, handler: Handler): boolean;
}

export interface WireDispatcher extends Dispatch {
  /** Ends the calls still running; idle connections are left to the process's exit. */
  close(): void;
}

export interface WireTimeouts {
  connectMs: number;
  /** From the request written to the whole response head, and then between two body pieces. */
  idleMs: number;
}

/** A transport failure, with the code the problem mapping reads. */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** How long an idle connection is reused without a Keep-Alive hint (undici's default). */
export const IDLE_REUSE_MS = 4_000;
/** Taken off a server's Keep-Alive timeout, for the request's way there (undici's default). */
const KEEP_ALIVE_MARGIN_MS = 2_000;
/** The longest reuse a Keep-Alive hint can ask for (undici's default). */
const MAX_IDLE_REUSE_MS = 600_000;

/** A response head larger than this is refused (node:http's own limit is 16 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;
/** A chunk-size line, or a trailer line, longer than this is refused. */
const MAX_LINE_BYTES = 8 * 1024;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What node:http refuses in a header value: controls other than tab, and anything past latin1. */
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** What node:http refuses in a request target. */
const BAD_PATH = /[\x00-\x20\x7f]/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: |$)/;
const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

/** The request's head and body as written, or a thrown error naming what cannot be sent. */
export function requestBytes(url: URL, options: Omit<DispatchOptions, 'signal' | 'origin'>): Buffer {
  if (BAD_PATH.test(options.path)) {
    throw Object.assign(new TypeError('Request path contains unescaped characters'), {
      code: 'ERR_UNESCAPED_CHARACTERS',
    });
  }
  let head = `${options.method} ${options.path} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(options.headers)) {
    if (!TOKEN.test(name)) {
      throw Object.assign(new TypeError(`Header name must be a valid HTTP token ["${name}"]`), {
        code: 'ERR_INVALID_HTTP_TOKEN',
      });
    }
    if (BAD_VALUE.test(value)) {
      throw Object.assign(new TypeError(`Invalid character in header content ["${name}"]`), {
        code: 'ERR_INVALID_CHAR',
      });
    }
    head += `${name}: ${value}\r\n`;
  }
  const body = options.body === undefined ? undefined : Buffer.from(options.body, 'utf8');
  if (body) head += `content-length: ${body.length}\r\n`;
  else if (options.method === 'POST' || options.method === 'PUT' || options.method === 'PATCH')
    head += 'content-length: 0\r\n';
  head += '\r\n';
  // Header bytes as node:http writes them (latin1); the body as UTF-8.
  const headBytes = Buffer.from(head, 'latin1');
  return body ? Buffer.concat([headBytes, body]) : headBytes;
}

export function createWireDispatcher(timeouts: WireTimeouts): WireDispatcher {
  const origins = new Map<string, URL>();
  const idle = new Map<string, Connection[]>();
  const busy = new Set<Connection>();
  /** The latest TLS session (ticket) per origin: a new connection resumes it, as undici does. */
  const sessions = new Map<string, Buffer>();

  const release = (connection: Connection) => {
    busy.delete(connection);
    connection.socket.unref();
    const list = idle.get(connection.key);
    if (list) list.push(connection);
    else idle.set(connection.key, [connection]);
  };
  const forget = (connection: Connection) => {
    busy.delete(connection);
    const list = idle.get(connection.key);
    const at = list ? list.indexOf(connection) : -1;
    if (at >= 0) list!.splice(at, 1);
  };

  /** The most recently idle connection still fit for a request; stale ones are closed. */
  const takeIdle = (key: string): Connection | undefined => {
    const list = idle.get(key);
    const now = Date.now();
    for (let connection = list?.pop(); connection; connection = list?.pop()) {
      if (!connection.socket.destroyed && now < connection.idleUntil) return connection;
      connection.socket.destroy();
    }
    return undefined;
  };

  return {
    dispatch(options, handler) {
      let url = origins.get(options.origin);
      if (!url) {
        url = new URL(options.origin);
        origins.set(options.origin, url);
      }
      const bytes = requestBytes(url, options);
      const exchange = new Exchange(handler, options.method, timeouts.idleMs);
      handler.onRequestStart(exchange);
      if (exchange.done) return true;
      let connection = takeIdle(options.origin);
      if (!connection) connection = new Connection(options.origin, url, timeouts, release, forget, sessions);
      busy.add(connection);
      connection.send(exchange, bytes);
      return true;
    },
    close() {
      for (const connection of busy) connection.socket.destroy();
      busy.clear();
      idle.clear();
    },
  };
}

/** One connection; it carries one exchange at a time. */
class Connection {
  readonly socket: Socket;
  /** While idle: reused only before this time (Date.now()). */
  idleUntil = 0;
  private current: Exchange | undefined;
  private connecting = true;
  private connectTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly key: string,
    url: URL,
    private readonly timeouts: WireTimeouts,
    private readonly release: (connection: Connection) => void,
    private readonly forget: (connection: Connection) => void,
    sessions: Map<string, Buffer>,
  ) {
    // `[::1]` in a URL is `::1` to the socket.
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const secure = url.protocol === 'https:';
    const port = Number(url.port) || (secure ? 443 : 80);
    this.socket = secure
      ? process.getBuiltinModule('node:tls').connect({
          host,
          port,
          servername: isIP(host) ? undefined : host,
          ALPNProtocols: ['http/1.1'],
          session: sessions.get(key),
        })
      : connectTcp({ host, port, noDelay: true });
    if (secure) {
      this.socket.setNoDelay(true);
      this.socket.on('session', (session: Buffer) => sessions.set(key, session));
    }
    this.connectTimer = setTimeout(() => {
      this.current?.fail(new TransportError('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT'));
    }, this.timeouts.connectMs);
    this.socket.once(secure ? 'secureConnect' : 'connect', () => {
      this.connecting = false;
      clearTimeout(this.connectTimer);
      this.current?.armHeaders();
    });
    this.socket.on('data', (chunk: Buffer) => {
      if (this.current) this.current.feed(chunk);
      else this.destroy(); // bytes nobody asked for: the connection cannot be trusted
    });
    this.socket.on('end', () => this.ended());
    this.socket.on('close', () => this.ended());
    this.socket.on('error', (error) => {
      const current = this.current;
      this.current = undefined;
      current?.fail(error);
      this.ended();
    });
  }

  send(exchange: Exchange, bytes: Buffer): void {
    this.current = exchange;
    exchange.attach(this);
    this.socket.ref();
    this.socket.write(bytes);
    if (!this.connecting) exchange.armHeaders();
  }

  /** The exchange finished: keep the connection for `reuseMs` more, or close it (0). */
  finished(reuseMs: number): void {
    this.current = undefined;
    if (reuseMs > 0 && !this.socket.destroyed && this.socket.readable && this.socket.writable) {
      this.idleUntil = Date.now() + reuseMs;
      this.release(this);
    } else {
      this.forget(this);
      this.socket.destroy();
    }
  }

  destroy(): void {
    this.current = undefined;
    this.forget(this);
    this.socket.destroy();
  }

  private ended(): void {
    clearTimeout(this.connectTimer);
    this.forget(this);
    const current = this.current;
    this.current = undefined;
    current?.closed();
    if (!this.socket.destroyed) this.socket.destroy();
  }
}

enum State {
  Head,
  Length,
  Chunked,
  Close,
  Done,
}

enum Chunk {
  Size,
  Data,
  DataEnd,
  Trailer,
}

/** One request's response: its parser, its timer, and its handler's calls. */
class Exchange implements Controller {
  done = false;
  private state = State.Head;
  private connection: Connection | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Bytes of an unfinished head, chunk-size line or trailer line. */
  private pending: Buffer | undefined;
  private remaining = 0;
  private chunk = Chunk.Size;
  /** How long the connection may be reused after this response; 0: it closes. */
  private reuseMs = IDLE_REUSE_MS;

  constructor(
    private readonly handler: Handler,
    private readonly method: string,
    private readonly idleMs: number,
  ) {}

  attach(connection: Connection): void {
    this.connection = connection;
  }

  abort(reason: Error): void {
    this.fail(reason);
  }

  armHeaders(): void {
    if (this.done || this.state !== State.Head) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => this.fail(new TransportError('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT')),
      this.idleMs,
    );
  }

  fail(error: Error): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.connection?.destroy();
    this.handler.onResponseError(this, error);
  }

  /** The connection ended or closed while this exchange had it. */
  closed(): void {
    if (this.done) return;
    if (this.state === State.Close) {
      this.reuseMs = 0;
      this.finish();
    } else {
      this.fail(new TransportError('other side closed', 'UND_ERR_SOCKET'));
    }
  }

  feed(data: Buffer): void {
    let rest: Buffer = data;
    while (!this.done && rest.length > 0) {
      if (this.state === State.Head) rest = this.readHead(rest);
      else if (this.state === State.Length) rest = this.readLength(rest);
      else if (this.state === State.Chunked) rest = this.readChunked(rest);
      else {
        this.data(rest);
        rest = EMPTY;
      }
    }
    if (this.done && rest.length > 0) {
      // Bytes after a complete response: the connection is out of step, so it goes.
      this.connection?.destroy();
    } else if (!this.done && this.state !== State.Head) {
      this.timer?.refresh();
    }
  }

  private data(piece: Buffer): void {
    if (piece.length > 0) this.handler.onResponseData(this, piece);
  }

  private readHead(data: Buffer): Buffer {
    const before = this.pending ? this.pending.length : 0;
    const buffer = this.pending ? Buffer.concat([this.pending, data]) : data;
    const end = buffer.indexOf(HEAD_END, Math.max(0, before - 3));
    if (end < 0) {
      if (buffer.length > MAX_HEAD_BYTES)
        this.invalid(`its head is larger than ${MAX_HEAD_BYTES / 1024} KiB`);
      else this.pending = buffer;
      return EMPTY;
    }
    this.pending = undefined;
    if (end > MAX_HEAD_BYTES) {
      this.invalid(`its head is larger than ${MAX_HEAD_BYTES / 1024} KiB`);
      return EMPTY;
    }
    const lines = buffer.toString('latin1', 0, end).split('\r\n');
    const status = STATUS_LINE.exec(lines[0]);
    if (!status) {
      this.invalid('it does not start with an HTTP/1.x status line');
      return EMPTY;
    }
    const statusCode = Number(status[2]);
    const headers: IncomingHttpHeaders = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon).toLowerCase() : '';
      if (!TOKEN.test(name)) {
        this.invalid(`a header line is malformed (${JSON.stringify(line.slice(0, 40))})`);
        return EMPTY;
      }
      const value = line.slice(colon + 1).trim();
      const known = headers[name];
      if (name === 'set-cookie') headers[name] = [...((known as string[] | undefined) ?? []), value];
      else headers[name] = known === undefined ? value : `${known}, ${value}`;
    }
    const rest = buffer.subarray(end + HEAD_END.length);
    // An interim response (100 Continue, 103 Early Hints): the real one follows.
    if (statusCode >= 100 && statusCode < 200) {
      if (statusCode === 101) this.invalid('it switches protocols (101), which was not asked for');
      return rest;
    }
    if (!this.frame(statusCode, status[1] === '1', headers)) return EMPTY;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => this.fail(new TransportError('Body Timeout Error', 'UND_ERR_BODY_TIMEOUT')),
      this.idleMs,
    );
    this.handler.onResponseStart(this, statusCode, headers);
    if (this.state === State.Length && this.remaining === 0) this.finish();
    return rest;
  }

  /** Chooses how the body ends; false when the framing is invalid (already reported). */
  private frame(statusCode: number, http11: boolean, headers: IncomingHttpHeaders): boolean {
    const connection = headerText(headers.connection).toLowerCase();
    const hint = /(?:^|[\s,;])timeout\s*=\s*(\d+)/i.exec(headerText(headers['keep-alive']));
    if (hint) this.reuseMs = Math.min(Number(hint[1]) * 1000 - KEEP_ALIVE_MARGIN_MS, MAX_IDLE_REUSE_MS);
    if (!http11 || /(?:^|,)\s*close\s*(?:,|$)/.test(connection)) this.reuseMs = 0;
    if (this.method === 'HEAD' || statusCode === 204 || statusCode === 304) {
      this.state = State.Length;
      this.remaining = 0;
      return true;
    }
    const encoding = headers['transfer-encoding'];
    if (encoding !== undefined) {
      const codings = headerText(encoding).toLowerCase().split(',');
      // With both, the length is not to be trusted, nor the connection after it (RFC 9112, 6.3).
      if (headers['content-length'] !== undefined) this.reuseMs = 0;
      if (codings[codings.length - 1].trim() === 'chunked') {
        this.state = State.Chunked;
        this.chunk = Chunk.Size;
      } else {
        this.state = State.Close;
        this.reuseMs = 0;
      }
      return true;
    }
    const length = headers['content-length'];
    if (length !== undefined) {
      const values = headerText(length)
        .split(',')
        .map((v) => v.trim());
      if (!values.every((v) => /^\d{1,15}$/.test(v) && v === values[0])) {
        this.invalid(`its Content-Length is not one number (${JSON.stringify(headerText(length))})`);
        return false;
      }
      this.state = State.Length;
      this.remaining = Number(values[0]);
      return true;
    }
    this.state = State.Close;
    this.reuseMs = 0;
    return true;
  }

  private readLength(data: Buffer): Buffer {
    const take = Math.min(this.remaining, data.length);
    this.remaining -= take;
    this.data(take === data.length ? data : data.subarray(0, take));
    if (this.remaining === 0) this.finish();
    return data.subarray(take);
  }

  private readChunked(data: Buffer): Buffer {
    let rest = data;
    while (!this.done && rest.length > 0) {
      if (this.chunk === Chunk.Data) {
        const take = Math.min(this.remaining, rest.length);
        this.remaining -= take;
        this.data(rest.subarray(0, take));
        rest = rest.subarray(take);
        if (this.remaining === 0) this.chunk = Chunk.DataEnd;
        continue;
      }
      const line = this.line(rest);
      if (!line) return EMPTY;
      rest = line.rest;
      if (this.chunk === Chunk.DataEnd) {
        if (line.text !== '') return this.invalid('a chunk is longer than its size says');
        this.chunk = Chunk.Size;
      } else if (this.chunk === Chunk.Size) {
        const size = /^([0-9a-fA-F]{1,12})[ \t]*(?:;.*)?$/.exec(line.text);
        if (!size)
          return this.invalid(`a chunk size is malformed (${JSON.stringify(line.text.slice(0, 40))})`);
        this.remaining = Number.parseInt(size[1], 16);
        this.chunk = this.remaining === 0 ? Chunk.Trailer : Chunk.Data;
      } else if (line.text === '') {
        this.finish(); // the empty line after the last chunk and its trailer fields
      }
    }
    return rest;
  }

  /** The next CRLF-ended line (without it), or undefined when more bytes are needed. */
  private line(data: Buffer): { text: string; rest: Buffer } | undefined {
    const before = this.pending ? this.pending.length : 0;
    const buffer = this.pending ? Buffer.concat([this.pending, data]) : data;
    const end = buffer.indexOf(CRLF, Math.max(0, before - 1));
    if (end < 0) {
      if (buffer.length > MAX_LINE_BYTES) this.invalid('a chunk-size or trailer line is too long');
      else this.pending = buffer;
      return undefined;
    }
    this.pending = undefined;
    return { text: buffer.toString('latin1', 0, end), rest: buffer.subarray(end + CRLF.length) };
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.state = State.Done;
    clearTimeout(this.timer);
    this.connection?.finished(this.reuseMs);
    this.handler.onResponseEnd(this);
  }

  private invalid(what: string): Buffer {
    this.fail(new TransportError(`The response is not valid HTTP/1.1: ${what}.`, 'HPE_INVALID_RESPONSE'));
    return EMPTY;
  }
}

const EMPTY = Buffer.alloc(0);

function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}
