// The chaos harness shared by the soak (`npm run test:soak`) and its reduced form in `npm test`:
// a batch against a faulty, rate-limited sandbox, the real binary killed with SIGKILL at seeded
// random moments and re-run with the same command until it reaches a final state, and the
// evidence the tests need to check it against a fault-free reference run.
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { normaliseDomain } from '../../src/domain.js';
import { SANDBOX_KEYS } from '../../src/sandbox/catalogs.js';
import { mulberry32 } from '../../src/sandbox/dataset.js';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { BIN, cleanEnv } from '../helpers/cli.js';

export interface SoakInput {
  rows: number;
  /** Distinct normalised domains the input names (valid ones only). */
  distinct: number;
  /** Rows whose domain cell is not a domain at all (final `invalid_domain`, so the batch exits 6). */
  invalid: number;
}

const NAME_STYLES = [
  (i: number) => `Company ${i}`,
  (i: number) => `"Quoted" & Co, ${i}`,
  (i: number) => `Line one ${i}\nline two`,
  (i: number) => `Müller ${i} Söhne`,
  (i: number) => `=SUM(A${i})`,
];

/**
 * Writes a CSV of `rows` rows naming `distinct` domains: a share of them from the dataset (found,
 * charged), the rest `.example` domains (not found, free). Every distinct domain appears at least
 * once; the other rows repeat them in URL, upper-case or padded forms that normalise to the same
 * domain, so deduplication across spellings is part of the run. Cells hold commas, quotes,
 * newlines, non-ASCII text and formula-like text, which must come back untouched.
 */
export function writeSoakInput(
  path: string,
  options: { rows: number; distinct: number; found: readonly string[]; seed: number },
): SoakInput {
  const random = mulberry32(options.seed);
  const foundCount = Math.min(options.found.length, Math.floor(options.distinct * 0.7));
  const pool = [
    ...options.found.slice(0, foundCount),
    ...Array.from({ length: options.distinct - foundCount }, (_, i) => `absent-${i}.example`),
  ];
  const picks: number[] = pool.map((_, i) => i);
  while (picks.length < options.rows) picks.push(Math.floor(random() * random() * pool.length));
  for (let i = picks.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [picks[i], picks[j]] = [picks[j], picks[i]];
  }
  const uses = new Uint32Array(pool.length);
  for (const p of picks) uses[p]++;
  let invalid = 0;
  const lines = ['id,name,website,note'];
  for (let i = 0; i < picks.length; i++) {
    const domain = pool[picks[i]];
    const form = random();
    let cell = domain;
    if (form < 0.15) cell = `https://www.${domain}/about?ref=${i}`;
    else if (form < 0.25) cell = domain.toUpperCase();
    else if (form < 0.3) cell = `  ${domain} `;
    else if (form < 0.302 && uses[picks[i]] > 1) {
      // Only a duplicate may become invalid, so every distinct domain is still asked for.
      uses[picks[i]]--;
      cell = 'not a domain';
      invalid++;
    }
    const name = NAME_STYLES[Math.floor(random() * NAME_STYLES.length)](i);
    lines.push([String(i), name, cell, random() < 0.5 ? '' : `note ${i}`].map(csvCell).join(','));
  }
  writeFileSync(path, `${lines.join('\r\n')}\r\n`);
  return { rows: picks.length, distinct: pool.length, invalid };
}

function csvCell(value: string): string {
  return /[",\r\n ]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** Records of a CSV file (header first), parsed independently of the tool's reader. */
export function parseCsv(bytes: Buffer | string): string[][] {
  return parse(bytes, { bom: true, relax_column_count: true }) as string[][];
}

/** The normalised domain of each data row's `website` cell, or null for an invalid one. */
export function rowDomains(input: string[][]): Array<string | null> {
  const column = input[0].indexOf('website');
  return input.slice(1).map((row) => {
    const result = normaliseDomain(row[column]);
    return result.ok ? result.domain : null;
  });
}

/** What each domain cost when bought: its first row's credits_charged in a complete output. */
export function costsFrom(input: string[][], output: string[][]): Map<string, number> {
  const charged = output[0].indexOf('credits_charged');
  const costs = new Map<string, number>();
  rowDomains(input).forEach((domain, i) => {
    if (domain !== null && !costs.has(domain)) costs.set(domain, Number(output[i + 1][charged]));
  });
  return costs;
}

/** Domains in a journal file; a torn last line is ignored, as the journal itself does. */
export function journalDomains(path: string): Set<string> {
  const domains = new Set<string>();
  if (!existsSync(path)) return domains;
  for (const line of readFileSync(path, 'utf8').split('\n').slice(1)) {
    try {
      const entry = JSON.parse(line) as { d?: unknown };
      if (typeof entry.d === 'string') domains.add(entry.d);
    } catch {
      // torn by a kill
    }
  }
  return domains;
}

export interface KillPlan {
  /** SIGKILL once the sandbox has logged this many requests of the run ... */
  afterRequests?: number;
  /** ... or once this many milliseconds have passed since the spawn. */
  afterMs?: number;
}

export interface BinaryRun {
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  plan: KillPlan;
  /** Sandbox request sequence numbers of this run: (firstSeq, lastSeq]. */
  firstSeq: number;
  lastSeq: number;
}

const lastSeq = (sandbox: SandboxHandle): number => sandbox.requests().at(-1)?.seq ?? 0;

/**
 * Waits until the sandbox has answered everything a finished (or killed) client sent: no entry in
 * flight and no new entry for a moment. A killed client's last requests may still be read and
 * charged by the server after the process is gone; they belong to that run.
 */
export async function settle(sandbox: SandboxHandle, sinceSeq: number): Promise<void> {
  let previous = -1;
  for (let round = 0; round < 100; round++) {
    const entries = sandbox.requests().filter((e) => e.seq > sinceSeq);
    const busy = entries.some((e) => e.status === null && e.fault !== 'reset');
    const seq = lastSeq(sandbox);
    if (!busy && seq === previous) return;
    previous = seq;
    await sleep(50);
  }
}

/** Runs the binary once, SIGKILLing it per the plan; resolves when the sandbox has settled. */
export async function runBinary(
  sandbox: SandboxHandle,
  argv: string[],
  env: Record<string, string>,
  plan: KillPlan = {},
): Promise<BinaryRun> {
  const firstSeq = lastSeq(sandbox);
  const child = spawn(process.execPath, [BIN, ...argv], {
    env: cleanEnv(env),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    // The tail is what explains a failure; a long run's progress is not needed.
    stderr = (stderr + d).slice(-20_000);
  });
  const kill = () => child.kill('SIGKILL');
  const timer = plan.afterMs !== undefined ? setTimeout(kill, plan.afterMs) : undefined;
  const poll =
    plan.afterRequests !== undefined
      ? setInterval(() => {
          if (lastSeq(sandbox) - firstSeq >= (plan.afterRequests ?? 0)) kill();
        }, 10)
      : undefined;
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve, reject) => {
      child.on('error', reject);
      child.on('close', (c, s) => resolve({ code: c, signal: s }));
    },
  );
  clearTimeout(timer);
  clearInterval(poll);
  await settle(sandbox, firstSeq);
  return { pid: child.pid ?? -1, code, signal, stderr, plan, firstSeq, lastSeq: lastSeq(sandbox) };
}

/** The domain of a `/api/domains/<domain>` request, else undefined. */
export function domainOf(path: string): string | undefined {
  const prefix = '/api/domains/';
  return path.startsWith(prefix) ? decodeURIComponent(path.slice(prefix.length)) : undefined;
}

/** Domain requests the service answered (200, no fault) in (fromSeq, toSeq]: each a purchase. */
export function answeredDomains(sandbox: SandboxHandle, fromSeq = 0, toSeq = Number.POSITIVE_INFINITY) {
  const answered: string[] = [];
  for (const entry of sandbox.requests()) {
    if (entry.seq <= fromSeq || entry.seq > toSeq) continue;
    if (entry.status !== 200 || entry.fault !== null) continue;
    const domain = domainOf(entry.path);
    if (domain !== undefined) answered.push(domain);
  }
  return answered;
}

export interface ChaosOptions {
  sandbox: SandboxHandle;
  argv: string[];
  env: Record<string, string>;
  journal: string;
  random: () => number;
  /** SIGKILLs to land before the runs are left to finish. */
  kills: number;
  /** Upper bound of a kill delay; request-count kills are drawn from the domains still to do. */
  maxDelayMs: number;
  distinct: number;
  /** Kills by request count land within this many requests (a budgeted run stops early). */
  killWithin?: number;
  /** A safety stop for a run that never reaches a final state. */
  maxRuns?: number;
}

export interface ChaosResult {
  runs: BinaryRun[];
  kills: number;
  /** Broken invariants seen along the way, each with enough detail to reproduce. */
  violations: string[];
  /** The last run exited by itself and left no journal. */
  final: boolean;
  /** Purchases of the killed runs that had not reached the journal when the process died. */
  lost: string[];
}

/** Exit codes after which a cron job simply runs the same command again. */
const RESUMABLE_CODES = new Set([0, 4, 5, 6]);

/**
 * Runs the same command again and again, with a kill planned for each run until `kills` have
 * landed, until a run exits by itself and its journal is gone (every row final). Checks per run:
 * no domain that was in the journal when the run started is requested, no domain is bought twice
 * within one run, and a run that exits by itself has journalled everything it bought.
 */
export async function runUntilFinal(options: ChaosOptions): Promise<ChaosResult> {
  const { sandbox, random } = options;
  const runs: BinaryRun[] = [];
  const violations: string[] = [];
  const lost: string[] = [];
  let kills = 0;
  for (let n = 0; n < (options.maxRuns ?? 60); n++) {
    const journalled = journalDomains(options.journal);
    let plan: KillPlan = {};
    if (kills < options.kills) {
      const toDo = Math.max(1, Math.min(options.distinct - journalled.size, options.killWithin ?? Infinity));
      plan =
        random() < 0.5
          ? { afterRequests: 1 + Math.floor(random() * toDo * 0.8) }
          : { afterMs: Math.floor(random() * options.maxDelayMs) };
    }
    const run = await runBinary(sandbox, options.argv, options.env, plan);
    runs.push(run);
    if (run.signal === 'SIGKILL') kills++;
    const label = `run ${n + 1} (pid ${run.pid}, plan ${JSON.stringify(plan)}, exit ${run.code ?? run.signal})`;
    const requested = new Set<string>();
    for (const entry of sandbox.requests()) {
      const domain = entry.seq > run.firstSeq && entry.seq <= run.lastSeq ? domainOf(entry.path) : undefined;
      if (domain !== undefined) requested.add(domain);
    }
    const again = [...requested].filter((domain) => journalled.has(domain));
    if (again.length > 0) violations.push(`${label}: requested journalled domains ${again.slice(0, 5)}`);
    const bought = answeredDomains(sandbox, run.firstSeq, run.lastSeq);
    if (new Set(bought).size !== bought.length) violations.push(`${label}: a domain was bought twice`);
    const kept = journalDomains(options.journal);
    const unkept = bought.filter((domain) => !kept.has(domain));
    if (run.signal !== null) {
      if (run.signal !== 'SIGKILL') violations.push(`${label}: died of ${run.signal}: ${run.stderr}`);
      // Answers the server charged for but the journal never got: the only ones a re-run buys again.
      lost.push(...unkept);
      continue;
    }
    // A run that ends by itself journals every answer it bought (or removes a complete journal).
    if (existsSync(options.journal) && unkept.length > 0) {
      violations.push(`${label}: bought but not journalled: ${unkept.slice(0, 5)}`);
    }
    if (!RESUMABLE_CODES.has(run.code ?? -1)) {
      violations.push(`${label}: unexpected exit: ${run.stderr}`);
      return { runs, kills, violations, final: false, lost };
    }
    if (!existsSync(options.journal)) return { runs, kills, violations, final: true, lost };
  }
  violations.push(`no final state after ${runs.length} runs`);
  return { runs, kills, violations, final: false, lost };
}

/** How many times each domain was bought (answered 200 without a fault) over the whole log. */
export function purchases(sandbox: SandboxHandle): Map<string, number> {
  const counts = new Map<string, number>();
  for (const domain of answeredDomains(sandbox)) counts.set(domain, (counts.get(domain) ?? 0) + 1);
  return counts;
}

/** Credits of the purchases beyond the first of each domain: what the kills cost. */
export function repeatCost(bought: Map<string, number>, costs: Map<string, number>): number {
  let extra = 0;
  for (const [domain, times] of bought) extra += (times - 1) * (costs.get(domain) ?? 0);
  return extra;
}

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
}

/**
 * Registers the chaos tests: a fault-free reference run, then a chaos run and a budgeted chaos
 * run, each against a sandbox of its own (same seed, so the same data; a log and balance each).
 */
export function chaosSuite(o: ChaosSuiteOptions): void {
  const companies = Math.max(2000, Math.ceil(o.distinct * 0.75));
  let root = '';
  let input: string[][] = [];
  let reference: { bytes: Buffer; code: number | null; charged: number; costs: Map<string, number> };
  const sandboxes: SandboxHandle[] = [];
  const start = async (faulty: boolean) => {
    const options = faulty ? { faultRate: 0.05, rateLimit: o.rateLimit } : {};
    const sandbox = await startSandbox({ port: 0, seed: o.seed, companies, ...options });
    sandboxes.push(sandbox);
    return sandbox;
  };
  /** The command a cron job repeats, with a directory of its own. */
  const job = (sandbox: SandboxHandle, name: string, extra: string[] = []) => {
    const dir = join(root, name);
    mkdirSync(dir);
    copyFileSync(join(root, 'in.csv'), join(dir, 'in.csv'));
    const argv = ['--base-url', sandbox.url, '--retries', '6', 'enrich', '--input', join(dir, 'in.csv')];
    argv.push('--output', join(dir, 'out.csv'), '--concurrency', String(o.concurrency), ...extra);
    const env = {
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      XDG_CONFIG_HOME: join(root, 'home', name),
      XDG_CACHE_HOME: join(root, 'home', name, 'cache'),
      // Backoff in milliseconds, so retried faults do not stretch the run (a 429 still waits).
      COMPANY_DATA_RETRY_BASE_MS: '5',
      COMPANY_DATA_RETRY_CAP_MS: '100',
    };
    return { dir, argv, env, journal: join(dir, 'out.csv.journal') };
  };
  /** Every input row exactly once, in order, its cells untouched, then the result columns. */
  const expectRowsKept = (output: string[][]) => {
    expect(output.length).toBe(input.length);
    const width = input[0].length;
    const differs = output.findIndex((row, i) => row.slice(0, width).join('\0') !== input[i].join('\0'));
    expect(differs, 'index of the first record whose input cells changed').toBe(-1);
  };
  /** The state a chaos run must end in: the reference's bytes, no journal, no temporary file. */
  const expectFinalLikeReference = (result: ChaosResult, dir: string) => {
    expect(result.violations).toEqual([]);
    expect(result.final).toBe(true);
    expect(result.runs.at(-1)?.code).toBe(reference.code);
    const bytes = readFileSync(join(dir, 'out.csv'));
    expectRowsKept(parseCsv(bytes));
    expect(bytes.equals(reference.bytes), 'output differs from the fault-free run').toBe(true);
    // No journal, and no temporary output: a SIGKILLed run cannot remove its `.out.csv.<pid>.tmp`,
    // so the next run removes those whose process is gone (src/batch/files.ts).
    const stray = readdirSync(dir).filter((name) => !['in.csv', 'out.csv'].includes(name));
    expect(stray).toEqual([]);
  };
  /**
   * Nothing paid twice except what a kill took from the journal: every purchase beyond a domain's
   * first is one answer a SIGKILLed run had bought but not yet journalled, and the credits charged
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
    const found = (await start(false)).dataset.companies.map((c) => c.domain);
    writeSoakInput(join(root, 'in.csv'), { rows: o.rows, distinct: o.distinct, found, seed: o.seed });
    input = parseCsv(readFileSync(join(root, 'in.csv')));
    await Promise.all([start(true), start(true)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(sandboxes.map((s) => s.close()));
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it(`reference: ${o.rows} rows naming ${o.distinct} domains, no faults`, {
    timeout: o.timeoutMs,
  }, async () => {
    const sandbox = sandboxes[0];
    const { dir, argv, env } = job(sandbox, 'reference');
    const run = await runBinary(sandbox, argv, env);
    expect(run.code, run.stderr).toBe(6); // the rows whose website is not a domain
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
    const { dir, ...command } = job(sandbox, 'chaos');
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
    const { dir, ...command } = job(sandbox, 'budget', ['--budget', String(budget)]);
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
