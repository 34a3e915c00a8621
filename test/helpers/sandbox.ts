// Starts a sandbox in-process for a test file and talks to it over real HTTP on 127.0.0.1.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll } from 'vitest';
import { type SandboxHandle, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';
import type { RequestLogEntry } from '../../src/sandbox/request-log.js';

export type { SandboxHandle } from '../../src/sandbox/index.js';

/** A small dataset keeps start-up quick; the showcase records are in every dataset. */
const TEST_COMPANIES = 2000;

/** A sandbox of the tests' usual size (TEST_COMPANIES), unless `options` says otherwise. */
export function startTestSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  return startSandbox({ companies: TEST_COMPANIES, ...options });
}

interface SandboxAndDir {
  sandbox: SandboxHandle;
  dir: string;
  /** Closes the sandbox and removes the directory. */
  close(): Promise<void>;
}

async function openSandboxAndDir(prefix: string, options: SandboxOptions): Promise<SandboxAndDir> {
  const sandbox = await startSandbox({ port: 0, ...options });
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    sandbox,
    dir,
    async close() {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A sandbox and a scratch directory for the tests of a file (or of the describe block it is called
 * in): started before them, handed to `use`, and closed and removed after them.
 */
export function sandboxAndDirForTests(
  prefix: string,
  options: SandboxOptions,
  use: (sandbox: SandboxHandle, dir: string) => void,
): void {
  let opened: SandboxAndDir | undefined;
  beforeAll(async () => {
    opened = await openSandboxAndDir(prefix, options);
    use(opened.sandbox, opened.dir);
  });
  afterAll(() => opened?.close());
}

/** Takes a cleanup to run when a test ends: its context's `onTestFinished`, or a list an afterEach empties. */
export type OnTestFinished = (cleanup: () => Promise<void> | void) => void;

/**
 * A sandbox (of startTestSandbox's size unless `options` says otherwise) and a scratch directory
 * of one test, closed and removed when that test ends (through its context's `onTestFinished`):
 * nothing is shared, so the tests of a `describe.concurrent` block that wait on timeouts or pacing
 * can wait side by side.
 */
export async function sandboxAndDirForTest(
  prefix: string,
  options: SandboxOptions,
  onTestFinished: OnTestFinished,
): Promise<{ sandbox: SandboxHandle; dir: string }> {
  const opened = await openSandboxAndDir(prefix, { companies: TEST_COMPANIES, ...options });
  onTestFinished(opened.close);
  return opened;
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** Sent as `Authorization: Bearer <key>` unless `auth` says otherwise. */
  key?: string;
  auth?: 'bearer' | 'x-api-key';
  query?: Record<string, string>;
  /** A JSON body (serialised here) or raw text/bytes. */
  json?: unknown;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The parsed body when it is JSON, else undefined. */
  json: Record<string, unknown> | undefined;
}

export async function call(base: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) {
    if (options.auth === 'x-api-key') headers['x-api-key'] = options.key;
    else headers.authorization = `Bearer ${options.key}`;
  }
  let body: string | Buffer | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const query = options.query ? `?${new URLSearchParams(options.query)}` : '';
  const res = await request(`${base}${path}${query}`, {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
  });
  const text = await res.body.text();
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: flat, text, json };
}

/** The request log as a client sees it, through GET /_sandbox/requests. */
export async function readRequestLog(base: string): Promise<RequestLogEntry[]> {
  const res = await call(base, '/_sandbox/requests');
  return (res.json as { requests: RequestLogEntry[] }).requests;
}

export async function clearRequestLog(base: string): Promise<void> {
  await call(base, '/_sandbox/requests', { method: 'DELETE' });
}

/** Balance of a key as the service reports it (GET /api/me never charges). */
export async function balanceOf(base: string, key: string): Promise<number> {
  const res = await call(base, '/api/me', { key });
  return res.json?.balance as number;
}

/** A sandbox of `companies` for the tests of the describe block this is called in. */
export function sandboxForBlock(companies: number): () => SandboxHandle {
  let sandbox: SandboxHandle | undefined;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ companies });
  });
  afterAll(async () => sandbox?.close());
  return () => sandbox as SandboxHandle;
}

/**
 * Resolves just after the next second of the epoch begins: the sandbox's rate limiter counts a
 * key's requests in fixed one-second windows aligned on those seconds (src/sandbox/rate-limit.ts),
 * so what is sent after it cannot share a window with what was sent before.
 */
export function nextRateWindow(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1010 - (Date.now() % 1000)));
}
