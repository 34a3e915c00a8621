// Running the real binary in the chaos harness (test/soak/lib.ts): one run with its kill plan,
// runs repeated until the batch reaches a final state, and what the sandbox saw bought.
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { startCli } from '../helpers/cli.js';
import type { StoreReader } from '../helpers/store.js';

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
  const run = startCli(argv, {
    env,
    input: 'ignore',
    stdout: 'ignore',
    // The tail is what explains a failure; a long run's progress is not needed.
    stderrTail: 20_000,
    // A soak run may take long: only its own kills (or the test's timeout) end it.
    timeoutMs: 3_600_000,
    killAfterMs: plan.afterMs,
    signalWhen:
      plan.afterRequests === undefined
        ? undefined
        : { when: () => lastSeq(sandbox) - firstSeq >= (plan.afterRequests ?? 0), signal: 'SIGKILL' },
  });
  const { code, signal, stderr } = await run.done;
  await settle(sandbox, firstSeq);
  return { pid: run.child.pid ?? -1, code, signal, stderr, plan, firstSeq, lastSeq: lastSeq(sandbox) };
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
  /** The job's result store, read from the outside (a SQLite file or a PostgreSQL database). */
  store: StoreReader;
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
  /** The last run exited by itself and completed its batch (its run is done in the store). */
  final: boolean;
  /** Purchases of the killed runs that had not reached the store when the process died. */
  lost: string[];
}

/** Exit codes after which a cron job simply runs the same command again. */
const RESUMABLE_CODES = new Set([0, 4, 5, 6]);

/**
 * Runs the same command again and again, with a kill planned for each run until `kills` have
 * landed, until a run exits by itself with its batch complete (every row final). Checks per run:
 * no domain that was in the store when the run started is requested, no domain is bought twice
 * within one run, and a run that exits by itself has stored everything it bought.
 */
export async function runUntilFinal(options: ChaosOptions): Promise<ChaosResult> {
  const { sandbox, random } = options;
  const runs: BinaryRun[] = [];
  const violations: string[] = [];
  const lost: string[] = [];
  let kills = 0;
  for (let n = 0; n < (options.maxRuns ?? 60); n++) {
    const stored = await options.store.storedDomains();
    let plan: KillPlan = {};
    if (kills < options.kills) {
      const toDo = Math.max(1, Math.min(options.distinct - stored.size, options.killWithin ?? Infinity));
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
    const again = [...requested].filter((domain) => stored.has(domain));
    if (again.length > 0) violations.push(`${label}: requested stored domains ${again.slice(0, 5)}`);
    const bought = answeredDomains(sandbox, run.firstSeq, run.lastSeq);
    if (new Set(bought).size !== bought.length) violations.push(`${label}: a domain was bought twice`);
    const kept = await options.store.storedDomains();
    const unkept = bought.filter((domain) => !kept.has(domain));
    if (run.signal !== null) {
      if (run.signal !== 'SIGKILL') violations.push(`${label}: died of ${run.signal}: ${run.stderr}`);
      // Answers the server charged for but the store never got: the only ones a re-run buys again.
      lost.push(...unkept);
      continue;
    }
    // A run that ends by itself has stored every answer it bought.
    if (unkept.length > 0) violations.push(`${label}: bought but not stored: ${unkept.slice(0, 5)}`);
    if (!RESUMABLE_CODES.has(run.code ?? -1)) {
      violations.push(`${label}: unexpected exit: ${run.stderr}`);
      return { runs, kills, violations, final: false, lost };
    }
    if ((await options.store.lastRunState()) === 'done')
      return { runs, kills, violations, final: true, lost };
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
