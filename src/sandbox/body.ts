// Reading a request body with a hard ceiling: a client may send gigabytes, the sandbox keeps at
// most `limit` bytes in memory and answers as soon as the ceiling is crossed.
import type { IncomingMessage } from 'node:http';

export type BodyResult =
  | { ok: true; text: string; bytes: number }
  | { ok: false; reason: 'too_large' | 'aborted'; bytes: number };

/** After answering 413 we drain this much more so the client can read the answer, then hang up. */
const DRAIN_AFTER_LIMIT = 64 * 1024 * 1024;

export function declaredLength(req: IncomingMessage): number | undefined {
  const raw = req.headers['content-length'];
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  return Number(raw);
}

export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const declared = declaredLength(req);
    if (declared !== undefined && declared > limit) {
      drain(req, 0);
      resolve({ ok: false, reason: 'too_large', bytes: 0 });
      return;
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) {
        settled = true;
        chunks.length = 0;
        req.off('data', onData);
        drain(req, bytes);
        resolve({ ok: false, reason: 'too_large', bytes });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (settled) return;
      settled = true;
      resolve({ ok: true, text: Buffer.concat(chunks, bytes).toString('utf8'), bytes });
    });
    req.once('error', () => {
      if (settled) return;
      settled = true;
      resolve({ ok: false, reason: 'aborted', bytes });
    });
    req.once('close', () => {
      if (settled) return;
      settled = true;
      resolve({ ok: false, reason: 'aborted', bytes });
    });
  });
}

/**
 * Discards the rest of an oversized body without keeping it. Closing at once would make the
 * kernel answer the client's pending upload with a reset, which can destroy the 413 before the
 * client reads it; draining a bounded amount first lets a well-behaved client see the answer.
 */
function drain(req: IncomingMessage, alreadyRead: number): void {
  let discarded = alreadyRead;
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DRAIN_AFTER_LIMIT) {
      req.off('data', onData);
      req.socket.destroy();
    }
  };
  req.on('data', onData);
  req.resume();
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase();
}
