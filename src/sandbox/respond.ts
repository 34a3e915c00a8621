// What the sandbox sends back: problem+json bodies shaped as docs/contract.md says, and
// the few byte-level ways of answering (JSON, an HTML proxy page, a cut-off body).
import type { ServerResponse } from 'node:http';
import { catalogEntry, PROBLEM_CONTENT_TYPE } from '../error-catalog.js';

export const PROBLEM_BASE_URI = 'https://sandbox.company-data.dev/problems';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
}

/** `not_found` is the one code outside the catalog (unknown paths). */
const EXTRA_CODES: Record<string, { status: number; title: string }> = {
  not_found: { status: 404, title: 'Not found' },
};

export function problemBody(code: string, detail?: string, status?: number): ProblemBody {
  const entry = catalogEntry(code);
  const extra = EXTRA_CODES[code];
  return {
    type: `${PROBLEM_BASE_URI}/${code.replaceAll('_', '-')}`,
    title: entry?.title ?? extra?.title ?? code,
    status: status ?? entry?.http_status ?? extra?.status ?? 500,
    code,
    detail: detail ?? entry?.detail ?? '',
  };
}

/** A fully computed answer, before latency, charging and faults are applied to it. */
export interface Reply {
  status: number;
  /** Serialised body. */
  body: string;
  contentType: string;
  headers?: Record<string, string>;
}

export function jsonReply(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return { status, body: JSON.stringify(value), contentType: 'application/json; charset=utf-8', headers };
}

export function problemReply(code: string, detail?: string, headers?: Record<string, string>): Reply {
  const body = problemBody(code, detail);
  return { status: body.status, body: JSON.stringify(body), contentType: PROBLEM_CONTENT_TYPE, headers };
}

/** 405 is the status; the code is invalid_request, as the contract decides. */
export function methodNotAllowed(method: string, path: string, allow: string[]): Reply {
  const body = problemBody(
    'invalid_request',
    `${method} is not allowed on ${path}; use ${allow.join(' or ')}`,
    405,
  );
  return {
    status: 405,
    body: JSON.stringify(body),
    contentType: PROBLEM_CONTENT_TYPE,
    headers: { allow: allow.join(', ') },
  };
}

export function html502Reply(): Reply {
  return {
    status: 502,
    body: '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body><center><h1>502 Bad Gateway</h1></center>\n<hr><center>sandbox-proxy</center></body></html>\n',
    contentType: 'text/html; charset=utf-8',
  };
}

export function writeReply(res: ServerResponse, reply: Reply, extraHeaders: Record<string, string>): void {
  res.writeHead(reply.status, {
    'content-type': reply.contentType,
    'content-length': String(Buffer.byteLength(reply.body)),
    ...reply.headers,
    ...extraHeaders,
  });
  // A string body goes out in the same write as the headers; a Buffer would cost a writev.
  res.end(reply.body);
}

/** Promises the whole body in Content-Length, sends half, then drops the connection. */
export function writeTruncated(
  res: ServerResponse,
  reply: Reply,
  extraHeaders: Record<string, string>,
): void {
  const body = Buffer.from(reply.body, 'utf8');
  res.writeHead(200, {
    'content-type': reply.contentType,
    'content-length': String(body.length),
    ...reply.headers,
    ...extraHeaders,
  });
  res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
}
