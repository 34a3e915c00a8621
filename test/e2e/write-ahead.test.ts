// Every charging path writes its hold to the store before its request leaves, with or without a
// month cap: a process killed while a paid request is in flight leaves the hold behind, and the
// next look at the store (`spend`) counts it as possibly charged. Counted from the sandbox's
// balance, never from the tool's own summary: `spend` (charged plus possibly charged) is at least
// what the service took. Real processes and real signals: a kill cannot be played in-process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { msAfter, runCli, startCli } from '../helpers/cli.js';
import { caseEnvIn, spentBy } from '../helpers/hosts.js';
import { mcpClient } from '../helpers/mcp-client.js';
import { settle } from '../soak/runs.js';

/** How long each paid answer takes: the kill always lands while it is in flight. */
const PAID_DELAY_MS = 1500;
const KILL_AFTER_MS = 250;

let sandbox: SandboxHandle;
let dir: string;
let domains: string[];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, companies: 2_000 });
  dir = mkdtempSync(join(tmpdir(), 'cd-write-ahead-'));
  domains = sandbox.dataset.companies.slice(0, 40).map((c) => c.domain);
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

let cases = 0;
const caseEnv = () => caseEnvIn(join(dir, `case-${++cases}`), sandbox);

const paidSent = (path: string) => () => sandbox.requests().filter((r) => r.path.startsWith(path)).length;

/** Runs `argv` with the paid path slowed, kills it once a paid request is in flight; what the service took. */
async function killMidRequest(
  argv: string[],
  path: string,
  signal: NodeJS.Signals,
  env: Record<string, string>,
): Promise<number> {
  const before = sandbox.balances().full;
  const firstSeq = sandbox.requests().at(-1)?.seq ?? 0;
  sandbox.faults.add(`delay:${PAID_DELAY_MS}`, { path, times: 1000 });
  try {
    const sent = paidSent(path);
    const already = sent();
    const killed = await startCli(argv, {
      env,
      input: 'ignore',
      stdout: 'ignore',
      signalWhen: { when: msAfter(() => sent() > already, KILL_AFTER_MS), signal },
    }).done;
    expect(killed.code === 0, `${argv.join(' ')} ended before the kill: ${killed.stderr}`).toBe(false);
    await settle(sandbox, firstSeq);
  } finally {
    sandbox.faults.clear();
  }
  return before - sandbox.balances().full;
}

describe('a hold is in the store before its request leaves, without a month cap', () => {
  const input = () => {
    const file = join(dir, 'in.csv');
    writeFileSync(file, `domain\n${domains.slice(0, 24).join('\n')}\n`);
    return file;
  };
  const paths: Array<[name: string, argv: () => string[], path: string, signal: NodeJS.Signals]> = [
    ['enrich, one domain (SIGKILL)', () => ['enrich', domains[0]], '/api/domains/', 'SIGKILL'],
    [
      'enrich --input, a batch (SIGKILL)',
      () => ['enrich', '--input', input(), '--output', join(dir, `out-${cases}.csv`), '--rate', '0'],
      '/api/domains/',
      'SIGKILL',
    ],
    ['search (SIGKILL)', () => ['search', 'shoes'], '/api/search', 'SIGKILL'],
    ['search (SIGTERM)', () => ['search', 'shoes'], '/api/search', 'SIGTERM'],
    ['search --all (SIGKILL)', () => ['search', 'shoes', '--all', '-o', 'ndjson'], '/api/search', 'SIGKILL'],
    ['breakdown (SIGKILL)', () => ['breakdown', 'country', 'shoes'], '/api/search', 'SIGKILL'],
    ['lookalike, one seed (SIGKILL)', () => ['lookalike', domains[1]], '/api/lookalike/', 'SIGKILL'],
    ['lookalike, one seed (SIGTERM)', () => ['lookalike', domains[1]], '/api/lookalike/', 'SIGTERM'],
    [
      'lookalike, many seeds (SIGKILL)',
      () => ['lookalike', domains[1], domains[2], domains[3]],
      '/api/lookalike/',
      'SIGKILL',
    ],
    [
      'api GET /api/search (SIGKILL)',
      () => ['api', 'GET', '/api/search', '--query', 'query=shoes'],
      '/api/search',
      'SIGKILL',
    ],
    [
      'api GET domains/… (SIGKILL)',
      () => ['api', 'GET', `domains/${domains[4]}`],
      '/api/domains/',
      'SIGKILL',
    ],
  ];
  it.each(paths)(
    '%s: spend shows at least what the service took',
    async (_name, argv, path, signal) => {
      const env = caseEnv();
      const took = await killMidRequest(argv(), path, signal, env);
      expect(took).toBeGreaterThan(0);
      expect(await spentBy(env)).toBeGreaterThanOrEqual(took);
    },
    60_000,
  );

  it('a batch killed with lookups in flight, then resumed: spend shows at least what the service took', async () => {
    const env = caseEnv();
    const file = input();
    const argv = ['-q', 'enrich', '--input', file, '--output', join(dir, 'resumed.csv'), '--rate', '0'];
    const before = sandbox.balances().full;
    const tookByKilled = await killMidRequest(argv, '/api/domains/', 'SIGKILL', env);
    expect(tookByKilled).toBeGreaterThan(0);
    const resumed = await runCli(argv, { env, timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const took = before - sandbox.balances().full;
    // The resume bought again what was in flight at the kill: both purchases are on record.
    expect(took).toBeGreaterThan(24);
    expect(await spentBy(env)).toBeGreaterThanOrEqual(took);
  }, 90_000);
});

describe('mcp closed as the SDK client closes it (stdin, then SIGTERM 2 s later) mid-call', () => {
  const tools: Array<[tool: string, args: () => Record<string, unknown>, path: string]> = [
    ['enrich', () => ({ domains: domains.slice(10, 14) }), '/api/domains/'],
    ['search', () => ({ query: 'shoes', limit: 2 }), '/api/search'],
    ['breakdown', () => ({ field: 'country', query: 'shoes' }), '/api/search'],
    ['lookalike', () => ({ seeds: [domains[5]] }), '/api/lookalike/'],
  ];
  it.each(tools)(
    '%s: spend shows at least what the service took',
    async (tool, args, path) => {
      const env = caseEnv();
      const before = sandbox.balances().full;
      const firstSeq = sandbox.requests().at(-1)?.seq ?? 0;
      // Longer than the 2 s between the closing of stdin and the SIGTERM: the call is in flight at both.
      sandbox.faults.add('delay:4000', { path, times: 1000 });
      const { client, transport, stderr } = mcpClient(['mcp', '--allow-spend', '50'], env);
      try {
        await client.connect(transport);
        const sent = paidSent(path);
        const already = sent();
        const call = client.callTool({ name: tool, arguments: args() }).catch((error: Error) => error);
        const since = msAfter(() => sent() > already, KILL_AFTER_MS);
        while (!since()) await new Promise((resolve) => setTimeout(resolve, 5));
        await client.close();
        await call;
        await settle(sandbox, firstSeq);
      } finally {
        sandbox.faults.clear();
      }
      const took = before - sandbox.balances().full;
      expect(took, stderr()).toBeGreaterThan(0);
      expect(await spentBy(env), stderr()).toBeGreaterThanOrEqual(took);
    },
    60_000,
  );
});
