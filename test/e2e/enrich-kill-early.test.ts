// A SIGKILL at any moment, the first second included, loses at most the answers of the requests
// in flight: every answer is committed to the result store as it arrives. Five kills at random
// moments between 0.15 and 1.5 s at concurrency 64, each followed by the next run on the same store; the domains bought
// more than once are counted from the sandbox's requests and through the balance.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/sandbox/dataset.js';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { testSeed } from '../helpers/seed.js';

const CONCURRENCY = 64;
// Five kills at random moments between 0.15 and 1.5 s, from a fixed seed, printed at the start and
// with any failure (COMPANY_DATA_TEST_SEED replays or changes it).
const SEED = testSeed('enrich-kill-early', 20_261_126);
const random = mulberry32(SEED);
const KILL_AT_MS = Array.from({ length: 5 }, () => 150 + Math.floor(random() * 1350));

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  // 20 ms a lookup at concurrency 64: some 3,000 lookups a second, so each kill lands mid-run.
  sandbox = await startSandbox({ port: 0, companies: 20_000, latencyMs: 20 });
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
    const domains = sandbox.dataset.companies.slice(0, 15_000).map((c) => c.domain);
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
    const start = sandbox.requests().length;
    const balanceBefore = sandbox.balances().full;
    for (const ms of KILL_AT_MS) {
      await startCli(args, { env, input: 'ignore', stdout: 'ignore', killAfterMs: ms }).done;
    }
    const finished = await runCli(args, { env, timeoutMs: 120_000 });
    const seed = `COMPANY_DATA_TEST_SEED=${SEED} (kills at ${KILL_AT_MS.join(', ')} ms)`;
    expect(finished.code, `${seed}: ${finished.stderr}`).toBe(0);
    const all = lookups(start);
    const unique = new Set(all);
    expect(unique.size).toBe(new Set(domains).size);
    const bought = all.length - unique.size;
    // The kills landed while lookups were under way.
    expect(all.length).toBeGreaterThan(domains.length / 10);
    expect(bought, seed).toBeLessThanOrEqual(CONCURRENCY * KILL_AT_MS.length);
    // Counted through the balance too: every domain is found and costs one credit, so what the
    // balance lost beyond one credit a domain is what was bought again.
    const paidAgain = balanceBefore - sandbox.balances().full - unique.size;
    expect(paidAgain, seed).toBeLessThanOrEqual(CONCURRENCY * KILL_AT_MS.length);
  }, 180_000);
});
