// The month cap survives kill -9: a batch under --budget-month is SIGKILLed three times while 16
// lookups are in flight (answers take 400 ms), then a last run goes to the end. Counted from the
// sandbox's balance, never from the tool's summary: the service took no more than the cap, and
// `spend` (charged plus possibly charged) shows at least what the service took. This needs real
// processes and real signals: a kill -9 cannot be played in-process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/sandbox/dataset.js';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { msAfter, runCli, startCli } from '../helpers/cli.js';
import { testSeed } from '../helpers/seed.js';
import { settle } from '../soak/runs.js';

const CONCURRENCY = 16;
const LATENCY_MS = 400;
// Three kills of the 16 lookups of a run's first wave take at most 48 credits: the last run has
// room left under the cap, buys it and stops there.
const CAP = 60;
// Three kills, each at a random moment between 50 and 350 ms after the run's first lookup reached
// the service (answers take 400 ms: the first wave is always in flight), from a fixed seed,
// printed at the start and with any failure (COMPANY_DATA_TEST_SEED replays or changes it).
const SEED = testSeed('spend-kill', 28_2026);
const random = mulberry32(SEED);
const KILL_AT_MS = Array.from({ length: 3 }, () => 50 + Math.floor(random() * 300));

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, companies: 2_000, latencyMs: LATENCY_MS });
  dir = mkdtempSync(join(tmpdir(), 'cd-spend-kill-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('--budget-month across kill -9', () => {
  it(`holds ${CAP} credits as the service counts them, and spend shows at least what it took`, async () => {
    // Every domain is found and costs 1 credit: 200 of them are far more than the cap.
    const domains = sandbox.dataset.companies.slice(0, 200).map((c) => c.domain);
    const input = join(dir, 'in.csv');
    const output = join(dir, 'out.csv');
    writeFileSync(input, `domain\n${domains.join('\n')}\n`);
    const env = {
      COMPANY_DATA_STORE: join(dir, 'store.db'),
      COMPANY_DATA_BASE_URL: sandbox.url,
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
    };
    // No pacing (no question to `me`): each run sends its first lookups at once, once it has the
    // catalogs (the first run fetches and caches them), so every kill lands while some are in flight.
    const capped = [
      '-q',
      'enrich',
      '--input',
      input,
      '--output',
      output,
      '--concurrency',
      String(CONCURRENCY),
      '--rate',
      '0',
      '--budget-month',
      String(CAP),
    ];
    const before = sandbox.balances().full;
    const firstSeq = sandbox.requests().at(-1)?.seq ?? 0;
    const lookupsSent = () => sandbox.requests().filter((r) => r.path.startsWith('/api/domains/')).length;
    const seed = `COMPANY_DATA_TEST_SEED=${SEED} (kills ${KILL_AT_MS.join(', ')} ms after the first lookup)`;
    for (const ms of KILL_AT_MS) {
      const sent = lookupsSent();
      // However slow the machine is to start the process, the kill comes after its first lookup.
      const killed = await startCli(capped, {
        env,
        input: 'ignore',
        stdout: 'ignore',
        signalWhen: { when: msAfter(() => lookupsSent() > sent, ms), signal: 'SIGKILL' },
      }).done;
      expect(killed.signal, `${seed}: ${killed.stderr}`).toBe('SIGKILL');
    }
    const killed = lookupsSent();
    const tookByKilled = before - sandbox.balances().full;
    const last = await runCli(capped, { env, timeoutMs: 120_000 });
    process.stderr.write(
      `spend-kill: ${killed} lookups sent by the killed runs, ${tookByKilled} credits taken before the last run\n`,
    );
    // The last run stops at the cap: exit 4, budget_exhausted.
    expect(last.code, `${seed}: ${last.stderr}`).toBe(4);
    expect(last.stderr).toContain('"code":"budget_exhausted"');
    // Every request the service got is answered and counted (it charges on arrival).
    await settle(sandbox, firstSeq);
    const took = before - sandbox.balances().full;
    expect(took, seed).toBeLessThanOrEqual(CAP);
    // The kills landed while lookups were under way: the killed runs sent some and paid for some.
    expect(killed, seed).toBeGreaterThan(0);
    expect(tookByKilled, seed).toBeGreaterThan(0);
    const spend = await runCli(['spend', '-o', 'json'], { env });
    expect(spend.code, spend.stderr).toBe(0);
    const { total } = JSON.parse(spend.stdout) as { total: { charged: number; possibly_charged: number } };
    expect(total.charged + total.possibly_charged, seed).toBeGreaterThanOrEqual(took);
    expect(total.charged + total.possibly_charged, seed).toBeLessThanOrEqual(CAP);
  }, 120_000);
});
