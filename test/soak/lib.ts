// The chaos harness shared by the soak (`npm run test:soak`) and its reduced form in `npm test`:
// a batch against a faulty, rate-limited sandbox, the real binary killed with SIGKILL at seeded
// random moments and re-run with the same command until it reaches a final state, and the
// evidence the tests need to check it against a fault-free reference run. The input and the
// runs live in input.ts and runs.ts. Either back end of the store: a SQLite file per job, or a
// database per job on one PostgreSQL server of the suite's own (test/helpers/postgres.ts).
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { neutraliseFormula } from '../../src/output/sanitize.js';
import { SANDBOX_KEYS } from '../../src/sandbox/catalogs.js';
import { mulberry32 } from '../../src/sandbox/dataset.js';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { type Postgres, startPostgres } from '../helpers/postgres.js';
import { sqliteReader } from '../helpers/store.js';
import { postgresReader } from '../helpers/store-postgres.js';
import { costsFrom, parseCsv, writeSoakInput } from './input.js';
import {
  answeredDomains,
  type ChaosResult,
  purchases,
  repeatCost,
  runBinary,
  runUntilFinal,
} from './runs.js';

export interface ChaosSuiteOptions {
  rows: number;
  distinct: number;
  seed: number;
  /** SIGKILLs of the unbudgeted and of the budgeted chaos run. */
  kills: number;
  budgetKills: number;
  maxDelayMs: number;
  rateLimit: number;
  concurrency: number;
  timeoutMs: number;
  /** The store's back end (default sqlite); the caller skips postgres where postgresMissing(). */
  store?: 'sqlite' | 'postgres';
}

/**
 * Registers the chaos tests: a fault-free reference run, then a chaos run and a budgeted chaos
 * run, each against a sandbox of its own (same seed, so the same data; a log and balance each).
 */
export function chaosSuite(o: ChaosSuiteOptions): void {
  const companies = Math.max(2000, Math.ceil(o.distinct * 0.75));
  let root = '';
  let input: string[][] = [];
  /** Rows whose website is not a domain: a small input (SOAK_ROWS) may have none. */
  let invalid = 0;
  let reference: { bytes: Buffer; code: number | null; charged: number; costs: Map<string, number> };
  const sandboxes: SandboxHandle[] = [];
  const backend = o.store ?? 'sqlite';
  let server: Postgres | undefined;
  const start = async (faulty: boolean) => {
    const options = faulty ? { faultRate: 0.05, rateLimit: o.rateLimit } : {};
    const sandbox = await startSandbox({ port: 0, seed: o.seed, companies, ...options });
    sandboxes.push(sandbox);
    return sandbox;
  };
  /** The command a cron job repeats, with a directory of its own. */
  const job = async (sandbox: SandboxHandle, name: string, extra: string[] = []) => {
    const dir = join(root, name);
    mkdirSync(dir);
    copyFileSync(join(root, 'in.csv'), join(dir, 'in.csv'));
    const argv = ['--base-url', sandbox.url, '--retries', '6', 'enrich', '--input', join(dir, 'in.csv')];
    argv.push('--output', join(dir, 'out.csv'), '--concurrency', String(o.concurrency), ...extra);
    // The job's result store, outside its directory: the directory ends with in.csv and out.csv.
    const store = server ? await server.createDatabase(name) : join(root, 'home', name, 'store.db');
    const env = {
      COMPANY_DATA_STORE: store,
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      XDG_CONFIG_HOME: join(root, 'home', name),
      XDG_CACHE_HOME: join(root, 'home', name, 'cache'),
      // Backoff in milliseconds, so retried faults do not stretch the run (a 429 still waits).
      COMPANY_DATA_RETRY_BASE_MS: '5',
      COMPANY_DATA_RETRY_CAP_MS: '100',
    };
    return { dir, argv, env, store: server ? postgresReader(store) : sqliteReader(store) };
  };
  /**
   * Every input row exactly once, in order, its cells untouched but for the one rule of CSV
   * cells (a formula-like cell gets a quote first: docs/batch.md, "Output"), then the result
   * columns.
   */
  const expectRowsKept = (output: string[][]) => {
    expect(output.length).toBe(input.length);
    const width = input[0].length;
    const written = (cells: string[]) => cells.map(neutraliseFormula).join('\0');
    const differs = output.findIndex((row, i) => row.slice(0, width).join('\0') !== written(input[i]));
    expect(differs, 'index of the first record whose input cells changed').toBe(-1);
  };
  /** The state a chaos run must end in: the reference's bytes, no temporary file. */
  const expectFinalLikeReference = (result: ChaosResult, dir: string) => {
    expect(result.violations).toEqual([]);
    expect(result.final).toBe(true);
    expect(result.runs.at(-1)?.code).toBe(reference.code);
    const bytes = readFileSync(join(dir, 'out.csv'));
    expectRowsKept(parseCsv(bytes));
    expect(bytes.equals(reference.bytes), 'output differs from the fault-free run').toBe(true);
    // No temporary output: a SIGKILLed run cannot remove its `.out.csv.<pid>.tmp`,
    // so the next run removes those whose process is gone (src/batch/files.ts).
    const stray = readdirSync(dir).filter((name) => !['in.csv', 'out.csv'].includes(name));
    expect(stray).toEqual([]);
  };
  /**
   * Nothing paid twice except what a kill took in flight: every purchase beyond a domain's first
   * is one answer a SIGKILLed run had bought but not yet stored, and the credits charged
   * are the reference's plus exactly those answers.
   */
  const expectChargesExplained = (result: ChaosResult, sandbox: SandboxHandle) => {
    expect(sandbox.requests()[0]?.seq, 'the request log wrapped: raise its capacity').toBe(1);
    const bought = purchases(sandbox);
    expect(bought.size).toBe(reference.costs.size);
    const repeats = [...bought.values()].reduce((sum, times) => sum + times - 1, 0);
    expect(repeats).toBe(result.lost.length);
    const lostCost = result.lost.reduce((sum, domain) => sum + (reference.costs.get(domain) ?? 0), 0);
    expect(repeatCost(bought, reference.costs)).toBe(lostCost);
    expect(SANDBOX_KEYS.full.balance - sandbox.balances().full).toBe(reference.charged + lostCost);
  };
  /** With SOAK_REPORT=<file>, the runs and purchases of each chaos run, for a human to read. */
  const report = (name: string, result: ChaosResult, sandbox: SandboxHandle) => {
    const path = process.env.SOAK_REPORT;
    if (!path) return;
    const bought = purchases(sandbox);
    const summary = {
      name,
      options: o,
      referenceCharged: reference.charged,
      charged: SANDBOX_KEYS.full.balance - sandbox.balances().full,
      requests: sandbox.requests().length,
      faults: sandbox.requests().filter((e) => e.fault !== null).length,
      limited: sandbox.requests().filter((e) => e.status === 429 && e.fault === null).length,
      boughtAgain: [...bought.values()].filter((n) => n > 1).length,
      repeatCost: repeatCost(bought, reference.costs),
      lost: result.lost.length,
      runs: result.runs.map(({ pid, code, signal, plan, firstSeq, lastSeq }) => ({
        pid,
        exit: code ?? signal,
        plan,
        requests: lastSeq - firstSeq,
      })),
    };
    appendFileSync(path, `${JSON.stringify(summary)}\n`);
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'cd-chaos-'));
    if (backend === 'postgres') server = await startPostgres();
    const found = (await start(false)).dataset.companies.map((c) => c.domain);
    ({ invalid } = writeSoakInput(join(root, 'in.csv'), {
      rows: o.rows,
      distinct: o.distinct,
      found,
      seed: o.seed,
    }));
    input = parseCsv(readFileSync(join(root, 'in.csv')));
    await Promise.all([start(true), start(true)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(sandboxes.map((s) => s.close()));
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it(`reference: ${o.rows} rows naming ${o.distinct} domains, no faults`, {
    timeout: o.timeoutMs,
  }, async () => {
    const sandbox = sandboxes[0];
    const { dir, argv, env } = await job(sandbox, 'reference');
    const run = await runBinary(sandbox, argv, env);
    // Rows whose website is not a domain end the batch with exit 6; without them it succeeds.
    expect(run.code, run.stderr).toBe(invalid > 0 ? 6 : 0);
    const bytes = readFileSync(join(dir, 'out.csv'));
    const output = parseCsv(bytes);
    expectRowsKept(output);
    const costs = costsFrom(input, output);
    const charged = SANDBOX_KEYS.full.balance - sandbox.balances().full;
    reference = { bytes, code: run.code, charged, costs };
    expect(costs.size).toBe(o.distinct);
    expect(charged).toBe([...costs.values()].reduce((a, b) => a + b, 0));
    expect([...purchases(sandbox).values()].every((n) => n === 1)).toBe(true);
  });

  it(`${o.kills} SIGKILLs under 5% faults and ${o.rateLimit} requests/s, re-run until final`, {
    timeout: o.timeoutMs,
  }, async () => {
    const sandbox = sandboxes[1];
    const { dir, ...command } = await job(sandbox, 'chaos');
    const random = mulberry32(o.seed);
    const result = await runUntilFinal({ ...o, ...command, sandbox, random, kills: o.kills });
    report('chaos', result, sandbox);
    expectFinalLikeReference(result, dir);
    // A kill planned as a delay may miss a run that finishes first; the loop then plans another.
    expect(result.kills).toBeGreaterThanOrEqual(1);
    expectChargesExplained(result, sandbox);
  });

  it(`--budget per invocation, ${o.budgetKills} SIGKILLs, re-run until final`, {
    timeout: o.timeoutMs,
  }, async () => {
    const sandbox = sandboxes[2];
    // Small enough that the killed runs and the final one cannot buy everything between them:
    // at least one run must stop for the budget.
    const budget = Math.ceil(reference.charged / (o.budgetKills + 2));
    const { dir, ...command } = await job(sandbox, 'budget', ['--budget', String(budget)]);
    const random = mulberry32(o.seed + 1);
    const killWithin = budget;
    const result = await runUntilFinal({
      ...o,
      ...command,
      sandbox,
      random,
      kills: o.budgetKills,
      killWithin,
    });
    report(`budget ${budget}`, result, sandbox);
    expectFinalLikeReference(result, dir);
    expect(result.kills).toBeGreaterThanOrEqual(1);
    // The budget caps each invocation (docs/batch.md): no run, killed or not, charged more.
    const perRun = result.runs.map((run) =>
      answeredDomains(sandbox, run.firstSeq, run.lastSeq).reduce(
        (sum, d) => sum + (reference.costs.get(d) ?? 0),
        0,
      ),
    );
    expect(Math.max(...perRun)).toBeLessThanOrEqual(budget);
    expect(result.runs.filter((run) => run.code === 4).length).toBeGreaterThanOrEqual(1);
    expectChargesExplained(result, sandbox);
  });
}
