// One request and its whole answer, read into a buffer: what the client does with every call.
//
// Over undici (a batch's calls, and proxied ones) the answer is collected by a dispatch handler:
// no Readable stream, no 'data'/'end' events and no promise for the body per call, which the
// client never needed, since it reads every body whole. Measured on a bare loop of 15,000
// lookups, alternating: 69 -> 58 µs of CPU per call (docs/performance.md, "Fifth pass"). The
// node:http dispatcher of one-shot calls keeps its stream.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatch, DispatchOptions } from './node-dispatch.js';

export interface Exchanged {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A call in progress: `cut` ends its current attempt, or its wait before a retry. The deadline
 * sweep calls it, and so does an abort of the caller's signal (both in src/http/client.ts), so the
 * answer collector below adds no listener of its own to the signal.
 */
export interface Cuttable {
  cut?: (reason: Error) => void;
  /** Set by the sweep once the call's deadline has passed. */
  expired?: Error;
}

/** What a failed attempt had got so far, for its problem's wording. */
export interface Progress {
  status?: number;
  received: number;
}

/** undici's request controller and handler (the v7 handler interface). */
interface Controller {
  abort(reason: Error): void;
}
interface Handler {
  onRequestStart(controller: Controller): void;
  onResponseStart(controller: Controller, statusCode: number, headers: IncomingHttpHeaders): void;
  onResponseData(controller: Controller, chunk: Buffer): void;
  onResponseEnd(controller: Controller): void;
  onResponseError(controller: Controller, error: Error): void;
}
interface HandlerDispatch {
  dispatch(options: Omit<DispatchOptions, 'signal'>, handler: Handler): boolean;
}

export function exchange(
  dispatcher: Dispatch,
  options: DispatchOptions,
  call: Cuttable,
  progress: Progress,
): Promise<Exchanged> {
  return 'dispatch' in dispatcher && typeof dispatcher.dispatch === 'function'
    ? collected(dispatcher as unknown as HandlerDispatch, options, call, progress)
    : streamed(dispatcher, options, call, progress);
}

function collected(
  dispatcher: HandlerDispatch,
  { signal, ...options }: DispatchOptions,
  call: Cuttable,
  progress: Progress,
): Promise<Exchanged> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let controller: Controller | undefined;
    let early: Error | undefined;
    call.cut = (reason: Error) => {
      if (controller) controller.abort(reason);
      else early ??= reason;
    };
    const settled = () => {
      call.cut = undefined;
    };
    const chunks: Buffer[] = [];
    let statusCode = 0;
    let headers: IncomingHttpHeaders = {};
    try {
      dispatcher.dispatch(options, {
        onRequestStart(c) {
          controller = c;
          if (early) c.abort(early);
        },
        onResponseStart(_c, status, responseHeaders) {
          statusCode = status;
          progress.status = status;
          headers = responseHeaders;
        },
        onResponseData(_c, chunk) {
          chunks.push(chunk);
          progress.received += chunk.length;
        },
        onResponseEnd() {
          settled();
          resolve({ statusCode, headers, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) });
        },
        onResponseError(_c, error) {
          settled();
          reject(error);
        },
      });
    } catch (error) {
      settled();
      reject(error);
    }
  });
}

async function streamed(
  dispatcher: Dispatch,
  options: DispatchOptions,
  call: Cuttable,
  progress: Progress,
): Promise<Exchanged> {
  const res = await dispatcher.request(options);
  progress.status = res.statusCode;
  call.cut = (reason) => res.body.destroy(reason);
  // The deadline may have passed while the headers were awaited.
  if (call.expired) res.body.destroy(call.expired);
  try {
    return { statusCode: res.statusCode, headers: res.headers, body: await readBody(res.body, progress) };
  } finally {
    call.cut = undefined;
  }
}

/** The whole body; `progress.received` counts bytes as they come, for a cut-off body's problem. */
function readBody(body: Readable, progress: Progress): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      progress.received += chunk.length;
    });
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    body.once('error', reject);
  });
}
