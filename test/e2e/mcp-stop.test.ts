// A stop is a stop for the MCP server: a 60-domain `enrich` against a slow service, stopped by the
// client's cancel (notifications/cancelled, sent by the SDK's client when its signal aborts), by a
// closed stdin, and by SIGTERM. After the stop no request starts: the credits the service takes
// afterwards are at most those of the requests in flight at that moment, the ledger (`spend`) holds
// every credit the service took, and on stdin's end or SIGTERM the process exits by itself once
// the request in flight has settled. The same call with a progressToken receives progress.
// Counted from the sandbox's balance and request log, never from the tool's own summary.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { BIN, cleanEnv, ROOT } from '../helpers/cli.js';
import { caseEnvIn, spentBy } from '../helpers/hosts.js';
import { StdioStreams } from '../helpers/mcp-client.js';

const DOMAINS = 60;
/** Each lookup this slow: a call is always mid-request when the test stops it. */
const LOOKUP_MS = 250;
/** Lookups answered before the stop. */
const BEFORE_STOP = 7;

let sandbox: SandboxHandle;
let dir: string;
let domains: string[];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, companies: 2_000 });
  dir = mkdtempSync(join(tmpdir(), 'cd-mcp-stop-'));
  domains = sandbox.dataset.companies.slice(100, 100 + DOMAINS).map((c) => c.domain);
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

let cases = 0;
const caseEnv = () => caseEnvIn(join(dir, `case-${++cases}`), sandbox);

const lookups = (afterSeq = 0) =>
  sandbox.requests().filter((r) => r.path.startsWith('/api/domains/') && r.seq > afterSeq);

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

/**
 * The built server under the SDK's client, over the child's own stdio. No confirmation is asked
 * (--confirm-above 1000): the stop, not the person's yes, is under test here.
 */
async function serve(env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, 'mcp', '--allow-spend', '1000', '--confirm-above', '1000'], {
    cwd: ROOT,
    env: cleanEnv(env),
    stdio: 'pipe',
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const kill = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve) =>
      child.on('close', (code, signal) => {
        clearTimeout(kill);
        resolve({ code, signal, stderr });
      }),
  );
  const client = new Client({ name: 'company-data-test', version: '1.0.0' });
  await client.connect(new StdioStreams(child.stdin, child.stdout));
  const estimate = await client.callTool({
    name: 'estimate',
    arguments: { tool: 'enrich', arguments: { domains: [domains[0]] } },
  });
  const worst = (estimate.structuredContent as { worst_case_credits: number }).worst_case_credits;
  return { child, done, client, worst, stderr: () => stderr };
}

/**
 * Starts the 60-domain enrich; once BEFORE_STOP lookups have been answered and the next has
 * arrived, stops it with `stop`. What the service took after the stop, and how many lookups were
 * in flight at that moment and arrived after it.
 */
async function stopMidCall(
  env: Record<string, string>,
  stop: (server: Awaited<ReturnType<typeof serve>>, cancel: AbortController) => Promise<void>,
) {
  const server = await serve(env);
  const firstSeq = sandbox.requests().at(-1)?.seq ?? 0;
  sandbox.faults.add(`delay:${LOOKUP_MS}`, { path: '/api/domains/', times: 1000 });
  const before = sandbox.balances().full;
  const cancel = new AbortController();
  try {
    const call = server.client
      .callTool({ name: 'enrich', arguments: { domains } }, undefined, {
        signal: cancel.signal,
        timeout: 120_000,
      })
      .then(
        () => 'answered',
        (error: Error) => error.name,
      );
    await until(() => lookups(firstSeq).length > BEFORE_STOP);
    const atStop = sandbox.requests().at(-1)!.seq;
    const inFlight = lookups(firstSeq).filter((r) => r.status === null).length;
    const balanceAtStop = sandbox.balances().full;
    await stop(server, cancel);
    const outcome = await call;
    // Every lookup that arrived has been answered.
    await until(() => lookups(firstSeq).every((r) => r.status !== null));
    return {
      server,
      outcome,
      inFlight,
      arrivedAfter: lookups(atStop).length,
      takenAfter: balanceAtStop - sandbox.balances().full,
      took: before - sandbox.balances().full,
    };
  } finally {
    sandbox.faults.clear();
  }
}

describe('mcp: a stop is a stop (60-domain enrich, lookups of 250 ms)', () => {
  it("the client's cancel: nothing starts after it, the ledger holds every credit, the server serves on", async () => {
    const env = caseEnv();
    const result = await stopMidCall(env, async (server, cancel) => {
      cancel.abort();
      // The server's word that the call has ended: only then can nothing more arrive.
      await until(() =>
        server.stderr().includes('company-data mcp: enrich stopped (cancelled by the client)'),
      );
    });
    const { server } = result;
    try {
      expect(result.outcome).toBe('McpError');
      expect(result.inFlight).toBe(1);
      expect(result.arrivedAfter).toBe(0);
      expect(result.takenAfter).toBeLessThanOrEqual(result.inFlight * server.worst);
      expect(result.took).toBeGreaterThan(0);
      expect(await spentBy(env)).toBeGreaterThanOrEqual(result.took);
      // The session goes on: the next call is answered.
      const account = await server.client.callTool({ name: 'account', arguments: {} });
      expect(account.isError).toBeFalsy();
    } finally {
      await server.client.close();
      await server.done;
    }
  }, 60_000);

  it('a closed stdin: nothing starts after it, and the process exits by itself (0) once the lookup in flight settles', async () => {
    const env = caseEnv();
    const result = await stopMidCall(env, async (server) => {
      server.child.stdin!.end();
    });
    const exited = await result.server.done;
    expect({ code: exited.code, signal: exited.signal }, exited.stderr).toEqual({ code: 0, signal: null });
    expect(result.inFlight).toBe(1);
    expect(result.arrivedAfter).toBe(0);
    expect(result.takenAfter).toBeLessThanOrEqual(result.inFlight * result.server.worst);
    expect(await spentBy(env)).toBeGreaterThanOrEqual(result.took);
  }, 60_000);

  it('SIGTERM with stdin still open: nothing starts after it, and the process exits by itself once the lookup in flight settles', async () => {
    const env = caseEnv();
    const result = await stopMidCall(env, async (server) => {
      server.child.kill('SIGTERM');
    });
    const exited = await result.server.done;
    // Not killed by the signal (the default action): the server ended its session and exited.
    expect(exited.signal, exited.stderr).toBeNull();
    expect(result.inFlight).toBe(1);
    expect(result.arrivedAfter).toBe(0);
    expect(result.takenAfter).toBeLessThanOrEqual(result.inFlight * result.server.worst);
    expect(await spentBy(env)).toBeGreaterThanOrEqual(result.took);
  }, 60_000);

  it('progress: the call with a progressToken receives a notification before each domain', async () => {
    const env = caseEnv();
    const server = await serve(env);
    try {
      const seen: Array<{ progress: number; total?: number }> = [];
      const few = domains.slice(0, 5);
      const result = await server.client.callTool(
        { name: 'enrich', arguments: { domains: few } },
        undefined,
        {
          onprogress: ({ progress, total }) => seen.push({ progress, total }),
        },
      );
      expect(result.isError).toBeFalsy();
      expect(seen).toEqual([0, 1, 2, 3, 4].map((progress) => ({ progress, total: 5 })));
    } finally {
      await server.client.close();
      await server.done;
    }
  }, 60_000);
});
