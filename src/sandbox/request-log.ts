// The sandbox's request log (GET /_sandbox/requests): what tests and soak runs inspect to see
// what the client really sent. It records how a request authenticated, never with what.

export interface RequestLogEntry {
  seq: number;
  method: string;
  path: string;
  /** The raw query string without "?", "" when there was none. */
  query: string;
  auth: 'bearer' | 'x-api-key' | null;
  /** The sandbox key's name (`full`, ...) when the key was valid. */
  key_name: string | null;
  /** HTTP status sent; null while the request is in flight or when the connection was reset. */
  status: number | null;
  fault: string | null;
  content_type: string | null;
  body_bytes: number;
  /** When it arrived, epoch ms: what a pacing test reads rates and windows from. */
  at: number;
}

export const REQUEST_LOG_CAPACITY = 100_000;

/** A ring buffer, so a long soak run neither grows memory nor pays for Array#shift. */
export class RequestLog {
  private readonly ring: RequestLogEntry[] = [];
  private next = 0;
  private seq = 0;

  constructor(private readonly capacity = REQUEST_LOG_CAPACITY) {}

  /** Returns the stored entry, which the caller fills in (status, ...) once it has answered. */
  add(entry: Omit<RequestLogEntry, 'seq' | 'at'>, at = Date.now()): RequestLogEntry {
    this.seq += 1;
    const full: RequestLogEntry = { seq: this.seq, ...entry, at };
    if (this.ring.length < this.capacity) this.ring.push(full);
    else this.ring[this.next] = full;
    this.next = (this.next + 1) % this.capacity;
    return full;
  }

  /** Oldest first. */
  entries(): RequestLogEntry[] {
    if (this.ring.length < this.capacity) return this.ring.slice();
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  clear(): void {
    this.ring.length = 0;
    this.next = 0;
  }
}

/**
 * Removes secrets from text bound for the log: a client that wrongly puts its key in the URL
 * must not find it in the log either.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4 && out.includes(secret)) out = out.split(secret).join('[redacted]');
  }
  return out;
}
