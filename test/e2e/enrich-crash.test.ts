// Crash safety of batch enrichment: SIGKILL at several points, then a re-run, must end with the
// output an uninterrupted run writes, and pay again only for what never reached the result store.
// SIGINT drains, keeps every answer in the store, exits 130 and prints the command that resumes.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { type RunResult, runCli, startCli } from '../helpers/cli.js';
import { storedDomains } from '../helpers/store.js';

let sandbox: SandboxHandle;
let dir: string;
let input: string;

beforeAll(async () => {
  // Latency and a low concurrency stretch a run over about a second, so kills land mid-run.
  sandbox = await startSandbox({ port: 0, companies: 2000, latencyMs: 30 });
  dir = mkdtempSync(join(tmpdir(), 'cd-enrich-crash-'));
  const found = sandbox.dataset.companies.slice(50, 95).map((c) => c.domain);
  const missing = Array.from({ length: 15 }, (_, i) => `missing-${i}.example`);
  const unique = [...found, ...missing];
  // A fixed shuffle with duplicates spread through the file.
  const rows: string[] = [];
  for (let i = 0; i < 96; i++) rows.push(unique[(i * 37) % unique.length]);
  rows.splice(40, 0, 'not a domain');
  input = join(dir, 'in.csv');
  writeFileSync(input, `name,domain\n${rows.map((d, i) => `row ${i},${d}`).join('\n')}\n`);
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Each scenario has a store of its own: what one run bought must not serve another scenario. */
const env = (store: string) => ({
  COMPANY_DATA_STORE: join(dir, store),
  COMPANY_DATA_API_KEY: sandbox.keys.full,
  XDG_CONFIG_HOME: join(dir, 'config'),
  XDG_CACHE_HOME: join(dir, 'cache'),
});
const args = (output: string) => [
  '--base-url',
  sandbox.url,
  'enrich',
  '--input',
  input,
  '--output',
  output,
  '--concurrency',
  '2',
];

const domainRequests = () => sandbox.requests().filter((r) => r.path.startsWith('/api/domains/'));
const requestedSince = (from: number) =>
  domainRequests()
    .slice(from)
    .map((r) => decodeURIComponent(r.path.slice('/api/domains/'.length)));

/** Starts the binary; `signalAfter` sends a signal once the run has made that many lookups. */
function runUntil(
  argv: string[],
  store: string,
  signalAfter?: { requests: number; signal: NodeJS.Signals },
): Promise<RunResult> {
  const from = domainRequests().length;
  return startCli(argv, {
    env: env(store),
    input: 'ignore',
    timeoutMs: 40_000,
    signalWhen: signalAfter && {
      when: () => domainRequests().length - from >= signalAfter.requests,
      signal: signalAfter.signal,
    },
  }).done;
}

let uninterrupted: Buffer;
let uninterruptedCharge: number;
/** What each domain cost when bought, from the uninterrupted output (its first row). */
const costOf = new Map<string, number>();

describe('crash safety', () => {
  it('an uninterrupted run, for reference', async () => {
    const before = sandbox.balances().full;
    const r = await runCli(args(join(dir, 'reference.csv')), { env: env('reference.db') });
    expect(r.code, r.stderr).toBe(6); // one invalid row
    uninterruptedCharge = before - sandbox.balances().full;
    uninterrupted = readFileSync(join(dir, 'reference.csv'));
    const lines = uninterrupted.toString('utf8').trimEnd().split('\n');
    const header = lines[0].split(',');
    for (const line of lines.slice(1)) {
      const cells = line.split(',');
      const domain = cells[1];
      if (!costOf.has(domain)) costOf.set(domain, Number(cells[header.indexOf('credits_charged')]));
    }
    expect(uninterruptedCharge).toBe(45);
  });

  it('SIGKILL at several points, then a re-run: same bytes, nothing stored is paid twice', async () => {
    const output = join(dir, 'crashed.csv');
    const store = join(dir, 'crashed.db');
    const before = sandbox.balances().full;
    let lostCredits = 0;
    let survived = 0;
    // 48 lookups and the 2 in flight at each kill: fewer than the 60 domains, so every kill lands
    // before the end.
    for (const requests of [24, 16, 8]) {
      const already = storedDomains(store);
      const from = domainRequests().length;
      const r = await runUntil(args(output), 'crashed.db', { requests, signal: 'SIGKILL' });
      expect(r.signal, `${requests}: ${r.code} ${r.stderr}`).toBe('SIGKILL');
      expect(existsSync(output)).toBe(false); // never a half-written output
      const requested = requestedSince(from);
      for (const domain of requested) expect(already.has(domain)).toBe(false);
      const after = storedDomains(store);
      survived += after.size - already.size;
      // Answers still in flight when the process died are bought again.
      for (const domain of requested) if (!after.has(domain)) lostCredits += costOf.get(domain) ?? 0;
    }
    expect(survived).toBeGreaterThan(0);

    const already = storedDomains(store);
    const from = domainRequests().length;
    const r = await runUntil(args(output), 'crashed.db');
    expect(r.code, r.stderr).toBe(6);
    for (const domain of requestedSince(from)) expect(already.has(domain)).toBe(false);
    expect(readFileSync(output).equals(uninterrupted)).toBe(true);
    expect(before - sandbox.balances().full).toBe(uninterruptedCharge + lostCredits);
  });

  it('SIGINT drains, keeps every answer, exits 130 and prints the command that resumes', async () => {
    const output = join(dir, 'interrupted.csv');
    const store = join(dir, 'interrupted.db');
    const before = sandbox.balances().full;
    const from = domainRequests().length;
    const r = await runUntil(args(output), 'interrupted.db', { requests: 20, signal: 'SIGINT' });
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toContain('interrupted');
    const resumeLine = r.stderr.split('\n').find((line) => line.includes('Resume with: '));
    expect(resumeLine).toBeDefined();
    expect(resumeLine).toContain(`company-data ${args(output).join(' ')}`);
    expect(existsSync(output)).toBe(false);
    // Every lookup sent before the interrupt finished and reached the store: none is lost.
    const requested = requestedSince(from);
    const kept = storedDomains(store);
    for (const domain of requested) expect(kept.has(domain)).toBe(true);

    const resumed = await runUntil(args(output), 'interrupted.db');
    expect(resumed.code, resumed.stderr).toBe(6);
    for (const domain of requestedSince(from + requested.length)) expect(kept.has(domain)).toBe(false);
    expect(readFileSync(output).equals(uninterrupted)).toBe(true);
    expect(before - sandbox.balances().full).toBe(uninterruptedCharge);
  });
});
