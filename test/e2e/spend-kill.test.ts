// The month cap survives kill -9: a batch under --budget-month is SIGKILLed five times while 16
// lookups are in flight (answers take 1 s), then a last run goes to the end. Counted from the
// sandbox's balance, never from the tool's summary: the service took no more than the cap, and
// `spend` (charged plus possibly charged) shows at least what the service took. This needs real
// processes and real signals: a kill -9 cannot be played in-process.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/sandbox/dataset.js';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { BIN, cleanEnv, runCli } from '../helpers/cli.js';

const CAP = 100;
const CONCURRENCY = 16;
// Five kills, each at a random moment within the first second after the run's first lookup reached
// the service (answers take 1 s: some are always in flight); KILL_SEED replays a run.
const SEED = Number(process.env.KILL_SEED ?? 28_2026);
const random = mulberry32(SEED);
const KILL_AT_MS = Array.from({ length: 5 }, () => 50 + Math.floor(random() * 900));
process.stderr.write(
  `spend-kill: KILL_SEED=${SEED} (kills ${KILL_AT_MS.join(', ')} ms after the first lookup)\n`,
);

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, companies: 2_000, latencyMs: 1_000 });
  dir = mkdtempSync(join(tmpdir(), 'cd-spend-kill-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('--budget-month across kill -9', () => {
  it(`holds ${CAP} credits as the service counts them, and spend shows at least what it took`, async () => {
    // Every domain is found and costs 1 credit: 400 of them are far more than the cap.
    const domains = sandbox.dataset.companies.slice(0, 400).map((c) => c.domain);
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
    const argv = ['-q', 'enrich', '--input', input, '--output', output];
    // No pacing (no question to `me`), and the catalogs cached by a dry run first: each run sends
    // its first lookups at once, so every kill lands while some are in flight.
    const capped = [
      ...argv,
      '--concurrency',
      String(CONCURRENCY),
      '--rate',
      '0',
      '--budget-month',
      String(CAP),
    ];
    const dry = await runCli([...argv, '--dry-run'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    const before = sandbox.balances().full;
    const lookupsSent = () => sandbox.requests().filter((r) => r.path.startsWith('/api/domains/')).length;
    for (const ms of KILL_AT_MS) {
      const sent = lookupsSent();
      const child = spawn(process.execPath, [BIN, ...capped], { env: cleanEnv(env), stdio: 'ignore' });
      // However slow the machine is to start the process, the kill comes after its first lookup.
      for (let waited = 0; lookupsSent() === sent && waited < 30_000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise((resolve) => setTimeout(resolve, ms));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.on('close', resolve));
    }
    const killed = lookupsSent();
    const tookByKilled = before - sandbox.balances().full;
    const last = await runCli(capped, { env, timeoutMs: 120_000 });
    process.stderr.write(
      `spend-kill: ${killed} lookups sent by the killed runs, ${tookByKilled} credits taken before the last run\n`,
    );
    const seed = `KILL_SEED=${SEED} (kills ${KILL_AT_MS.join(', ')} ms after the first lookup)`;
    // The last run stops at the cap: exit 4, budget_exhausted.
    expect(last.code, `${seed}: ${last.stderr}`).toBe(4);
    expect(last.stderr).toContain('"code":"budget_exhausted"');
    // Let the answers to the killed runs' last requests land in the sandbox's count.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
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
