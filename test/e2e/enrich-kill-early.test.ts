// A SIGKILL at any moment of a batch's first seconds loses at most the answers of the requests in
// flight: every answer is committed to the result store as it arrives. Three kills at random
// moments within 1.35 s of the run's first lookup (one in each third of that span: the kill comes
// after the start-up, however slow the machine is, so lookups are always in flight) at concurrency
// 64, each followed by the next run on the same store; the domains bought more than once are
// counted from the sandbox's requests and through the balance.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/sandbox/dataset.js';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { msAfter, runCli, startCli } from '../helpers/cli.js';
import { testSeed } from '../helpers/seed.js';

const CONCURRENCY = 64;
const KILLS = 3;
const WITHIN_MS = 1350;
// Kills at random moments after the first lookup, one in each third of 1.35 s, from a fixed seed,
// printed at the start and with any failure (COMPANY_DATA_TEST_SEED replays or changes it).
const SEED = testSeed('enrich-kill-early', 20_261_126);
const random = mulberry32(SEED);
const KILL_AT_MS = Array.from({ length: KILLS }, (_, i) => Math.floor(((i + random()) * WITHIN_MS) / KILLS));
// While the kills land, each lookup takes 200 ms (20 ms of latency and a queued delay): 64 at a
// time, a run makes at most 0.32 lookups a millisecond, so the killed runs together make at most
// this many (64 more each for the wave in flight at the kill), and each of them is still under
// way when its kill lands, on any machine.
const SLOW_MS = 200;
const KILLED_AT_MOST =
  Math.ceil((KILL_AT_MS.reduce((a, b) => a + b, 0) * CONCURRENCY) / SLOW_MS) + CONCURRENCY * KILLS;
const ROWS = KILLED_AT_MOST + 300;

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, companies: ROWS, latencyMs: 20 });
  dir = mkdtempSync(join(tmpdir(), 'cd-kill-early-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

const lookups = (from: number) =>
  sandbox
    .requests()
    .slice(from)
    .filter((r) => r.path.startsWith('/api/domains/'))
    .map((r) => decodeURIComponent(r.path.slice('/api/domains/'.length)));

describe('SIGKILL in the first seconds of a batch', () => {
  it(`re-buys at most the ${CONCURRENCY} requests in flight per kill`, async () => {
    const domains = sandbox.dataset.companies.slice(0, ROWS).map((c) => c.domain);
    const input = join(dir, 'in.csv');
    const output = join(dir, 'out.csv');
    writeFileSync(input, `domain\n${domains.join('\n')}\n`);
    const store = join(dir, 'store.db');
    const env = {
      COMPANY_DATA_STORE: store,
      COMPANY_DATA_BASE_URL: sandbox.url,
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
    };
    const args = ['-q', 'enrich', '--input', input, '--output', output, '--concurrency', String(CONCURRENCY)];
    const seed = `COMPANY_DATA_TEST_SEED=${SEED} (kills ${KILL_AT_MS.join(', ')} ms after the first lookup)`;
    const start = sandbox.requests().length;
    const balanceBefore = sandbox.balances().full;
    sandbox.faults.add(`delay:${SLOW_MS - 20}`, { path: '/api/domains/', times: ROWS * 2 });
    const killedLookups: number[] = [];
    for (const ms of KILL_AT_MS) {
      const from = sandbox.requests().length;
      const killed = await startCli(args, {
        env,
        input: 'ignore',
        stdout: 'ignore',
        signalWhen: { when: msAfter(() => lookups(from).length > 0, ms), signal: 'SIGKILL' },
      }).done;
      // The kill ended the run: it had not finished (nor failed) by then.
      expect({ code: killed.code, signal: killed.signal }, `${seed}: ${killed.stderr}`).toEqual({
        code: null,
        signal: 'SIGKILL',
      });
      killedLookups.push(lookups(from).length);
    }
    sandbox.faults.clear();
    const finished = await runCli(args, { env, timeoutMs: 120_000 });
    expect(finished.code, `${seed}: ${finished.stderr}`).toBe(0);
    const all = lookups(start);
    const unique = new Set(all);
    expect(unique.size).toBe(new Set(domains).size);
    const bought = all.length - unique.size;
    // Each kill landed while lookups were under way.
    expect(
      killedLookups.every((n) => n > 0),
      `${seed}: lookups of the killed runs ${killedLookups}`,
    ).toBe(true);
    expect(bought, seed).toBeLessThanOrEqual(CONCURRENCY * KILL_AT_MS.length);
    // Counted through the balance too: every domain is found and costs one credit, so what the
    // balance lost beyond one credit a domain is what was bought again.
    const paidAgain = balanceBefore - sandbox.balances().full - unique.size;
    expect(paidAgain, seed).toBeLessThanOrEqual(CONCURRENCY * KILL_AT_MS.length);
  }, 120_000);
});
