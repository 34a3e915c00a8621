// Runs that share one result store, as processes against one sandbox: a second run of the same
// batch pays nothing; two runs at once over overlapping inputs pay once per domain (the claims);
// --budget-month holds across runs, two of them at once included; the ledger matches the balance.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { listenLocal, overlappingFront } from '../helpers/server.js';
import { ledgerTotal } from '../helpers/store.js';

let sandbox: SandboxHandle;
let dir: string;
// 10 ms a lookup.
sandboxAndDirForTests('cd-store-runs-', { companies: 5000, latencyMs: 10 }, (s, d) => {
  sandbox = s;
  dir = d;
});

// The runs reach the sandbox through a front: two runs started together are held until both are
// under way (overlappingFront), so they overlap in time whatever their size.
let front: ReturnType<typeof overlappingFront>;
let base: string;
let closeFront: (() => Promise<void>) | undefined;
beforeAll(async () => {
  front = overlappingFront(sandbox.url);
  const listening = await listenLocal(front.server);
  base = listening.url;
  closeFront = listening.close;
});
afterAll(async () => closeFront?.());

const env = (store: string) => ({
  COMPANY_DATA_STORE: join(dir, store),
  COMPANY_DATA_BASE_URL: base,
  COMPANY_DATA_API_KEY: sandbox.keys.full,
  XDG_CONFIG_HOME: join(dir, 'config'),
  XDG_CACHE_HOME: join(dir, 'cache'),
});

function writeInput(name: string, domains: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `domain\n${domains.join('\n')}\n`);
  return path;
}

const companies = (from: number, to: number) =>
  sandbox.dataset.companies.slice(from, to).map((c) => c.domain);
const balance = () => sandbox.balances().full;
const lookups = (from: number) =>
  sandbox
    .requests()
    .slice(from)
    .filter((r) => r.path.startsWith('/api/domains/'))
    .map((r) => decodeURIComponent(r.path.slice('/api/domains/'.length)));

/** A batch as its own process: two of them, started together, run at the same time. */
const start = (args: string[], store: string) =>
  runCli(['-q', 'enrich', ...args], { env: env(store), timeoutMs: 60_000 });

const column = (path: string, name: string): string[] => {
  const [header, ...rows] = parse(readFileSync(path)) as string[][];
  return rows.map((row) => row[header.indexOf(name)]);
};

describe('runs sharing a store', () => {
  it('a second run of the same 200-row batch charges nothing and says when each answer was bought', async () => {
    const input = writeInput('repeat.csv', [...companies(0, 190), ...companies(0, 10)]);
    const output = join(dir, 'repeat-out.csv');
    const before = balance();
    const first = await runCli(['enrich', '--input', input, '--output', output], { env: env('repeat.db') });
    expect(first.code, first.stderr).toBe(0);
    expect(before - balance()).toBe(190);
    expect(column(output, 'bought_at').every((cell) => cell === '')).toBe(true);

    const from = sandbox.requests().length;
    const second = await runCli(['enrich', '--input', input, '--output', output], { env: env('repeat.db') });
    expect(second.code, second.stderr).toBe(0);
    expect(lookups(from)).toEqual([]);
    expect(before - balance()).toBe(190);
    expect(column(output, 'credits_charged').every((cell) => cell === '0')).toBe(true);
    expect(column(output, 'bought_at').every((cell) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(cell))).toBe(
      true,
    );
    expect(second.stderr).toMatch(
      /Enriched: 200 rows, 190 unique domains \(190 found, 0 not found\), .*0 credits charged, 190 reused from the store/,
    );
    expect(ledgerTotal(join(dir, 'repeat.db'))).toBe(190);
  });

  it('two runs at once over overlapping inputs pay once per domain', async () => {
    // 200 rows each, 100 domains in common, met in opposite orders at once: the runs meet head on.
    const a = writeInput('a.csv', companies(1000, 1200));
    const b = writeInput('b.csv', [...companies(1100, 1200).reverse(), ...companies(1200, 1300)]);
    const before = balance();
    const from = sandbox.requests().length;
    front.hold(8);
    const [ra, rb] = await Promise.all([
      start(['--input', a, '--output', join(dir, 'a-out.csv')], 'shared.db'),
      start(['--input', b, '--output', join(dir, 'b-out.csv')], 'shared.db'),
    ]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    const bought = lookups(from);
    expect(new Set(bought).size).toBe(300);
    expect(bought).toHaveLength(300);
    expect(before - balance()).toBe(300);
    // Each run's output has every row answered; what the other run bought is marked as such.
    const charged = [join(dir, 'a-out.csv'), join(dir, 'b-out.csv')]
      .map((path) => column(path, 'credits_charged').reduce((sum, cell) => sum + Number(cell), 0))
      .reduce((sum, n) => sum + n, 0);
    expect(charged).toBe(300);
    expect(column(join(dir, 'a-out.csv'), 'found').every((cell) => cell === 'true')).toBe(true);
    expect(column(join(dir, 'b-out.csv'), 'found').every((cell) => cell === 'true')).toBe(true);
    expect(ledgerTotal(join(dir, 'shared.db'))).toBe(300);
  });

  it('--budget-month holds across three runs, two of them at once', async () => {
    const cap = 100;
    const before = balance();
    const one = await runCli(
      ['enrich', '--input', writeInput('m1.csv', companies(4000, 4060)), '--budget-month', String(cap)],
      { env: env('month.db') },
    );
    expect(one.code, one.stderr).toBe(0);
    expect(before - balance()).toBe(60);
    front.hold(16);
    const [two, three] = await Promise.all([
      start(
        [
          '--input',
          writeInput('m2.csv', companies(4100, 4160)),
          '--budget-month',
          String(cap),
          '--concurrency',
          '16',
        ],
        'month.db',
      ),
      start(
        [
          '--input',
          writeInput('m3.csv', companies(4200, 4260)),
          '--budget-month',
          String(cap),
          '--concurrency',
          '16',
        ],
        'month.db',
      ),
    ]);
    // The month had room for 40 more: both runs stop at the cap, with exit 4.
    expect([two.code, three.code], `${two.stderr}\n${three.stderr}`).toEqual([4, 4]);
    expect(before - balance()).toBe(cap);
    for (const r of [two, three]) {
      const problem = JSON.parse(r.stderr.trim().split('\n').at(-1) as string);
      expect(problem.code).toBe('budget_exhausted');
      expect(problem.detail).toMatch(
        /^--budget-month 100 \(this key's spend in this calendar month, UTC, across runs and commands\) reached/,
      );
    }
    // A fourth run sends nothing at all.
    const from = sandbox.requests().length;
    const four = await runCli(
      ['enrich', '--input', writeInput('m4.csv', companies(4300, 4310)), '--budget-month', String(cap)],
      { env: { ...env('month.db'), COMPANY_DATA_BUDGET_MONTH: '100' } },
    );
    expect(four.code).toBe(4);
    expect(lookups(from)).toEqual([]);
    expect(ledgerTotal(join(dir, 'month.db'))).toBe(cap);
  });
});
