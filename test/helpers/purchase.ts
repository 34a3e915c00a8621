// One test's sandbox, scratch directory and store, and the commands run against them in-process,
// with the credits counted from the sandbox's balance: the tests of the purchase path share it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { KEYS } from './command-cases.js';
import { runInProcess } from './in-process.js';
import { type OnTestFinished, type SandboxHandle, sandboxAndDirForTest } from './sandbox.js';

/**
 * One test's sandbox, scratch directory and store, and the commands run against them. Nothing is
 * shared between tests, so they run side by side (`describe.concurrent`): most of them wait on a
 * timeout or a slow answer, not on the CPU.
 */
export interface Purchase {
  sandbox: SandboxHandle;
  dir: string;
  /** What the sandbox took from the full key since the test started. */
  took(): number;
  run(argv: string[], extra?: Record<string, string>, base?: string): ReturnType<typeof runInProcess>;
  /** The ledger's totals, as `spend -o json` reports them. */
  ledger(): Promise<{ charged: number; possibly_charged: number; calls: number }>;
  /** A CSV of these domains in the scratch directory. */
  inputOf(domains: string[]): string;
}

export async function purchase(
  onTestFinished: OnTestFinished,
  options: Parameters<typeof sandboxAndDirForTest>[1] = {},
): Promise<Purchase> {
  const { sandbox, dir } = await sandboxAndDirForTest('cd-purchase-', options, onTestFinished);
  const before = sandbox.balances().full;
  const env = (extra: Record<string, string>, base = sandbox.url): Record<string, string> => ({
    HOME: dir,
    COMPANY_DATA_BASE_URL: base,
    COMPANY_DATA_API_KEY: KEYS.full,
    COMPANY_DATA_STORE: join(dir, 'store.db'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    COMPANY_DATA_RETRY_BASE_MS: '1',
    ...extra,
  });
  const run = (argv: string[], extra: Record<string, string> = {}, base?: string) =>
    runInProcess(argv, { env: env(extra, base) });
  return {
    sandbox,
    dir,
    took: () => before - sandbox.balances().full,
    run,
    async ledger() {
      const spent = await run(['spend', '--by', 'command', '-o', 'json']);
      expect(spent.code, spent.stderr).toBe(0);
      return JSON.parse(spent.stdout).total;
    },
    inputOf(domains) {
      const path = join(dir, 'in.csv');
      writeFileSync(path, `domain\n${domains.join('\n')}\n`);
      return path;
    },
  };
}

/** The last line of stderr, a problem as scripts read it (stderr is not a terminal here). */
export function problemOf(stderr: string): { code: string; detail: string } {
  return JSON.parse(stderr.trim().split('\n').at(-1) ?? '{}');
}
