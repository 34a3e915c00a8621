// Reuse with expiry, on an injected clock: a found answer is reused for 30 days, a "no record"
// answer for 7, --max-age and --not-found-max-age change them, --refresh buys again, and a failure
// is never stored. The same batch runs in process at chosen instants against one store, and the
// sandbox's request log tells what was bought each time; the outputs are compared whole.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { FIXED_NOW, runInProcess } from '../helpers/in-process.js';
import { startTestSandbox } from '../helpers/sandbox.js';

const DAY = 86_400_000;
let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 200 });
  dir = mkdtempSync(join(tmpdir(), 'cd-store-expiry-'));
  writeFileSync(join(dir, 'in.csv'), 'domain\nacme-shoes.com\nno-record.example\nglobex.io\n');
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = (store: string) => ({
  COMPANY_DATA_BASE_URL: sandbox.url,
  COMPANY_DATA_API_KEY: sandbox.keys.full,
  COMPANY_DATA_STORE: join(dir, store),
  XDG_CONFIG_HOME: join(dir, 'config'),
  XDG_CACHE_HOME: join(dir, 'cache'),
  COMPANY_DATA_RETRY_BASE_MS: '1',
  COMPANY_DATA_RETRY_CAP_MS: '2',
});

/** One batch at `at` (ms after FIXED_NOW): its stdout, exit code and the domains it bought. */
async function batchAt(at: number, store: string, extra: string[] = []) {
  const from = sandbox.requests().length;
  const r = await runInProcess(
    ['--retries', '0', '-q', 'enrich', '--input', join(dir, 'in.csv'), '--products', 'profile', ...extra],
    { env: env(store), now: () => FIXED_NOW + at },
  );
  const bought = sandbox
    .requests()
    .slice(from)
    .filter((e) => e.path.startsWith('/api/domains/'))
    .map((e) => decodeURIComponent(e.path.slice('/api/domains/'.length)));
  return { ...r, bought };
}

const HEADER =
  'domain,found,cd_domain,company_name,country,site_category,employee_range,founded_year,credits_charged,bought_at,error_code,error_detail';
const acme = (charged: number, boughtAt: string) =>
  `acme-shoes.com,true,acme-shoes.com,Acme Shoes,US,fashion,51-200,2009,${charged},${boughtAt},,`;
const globex = (charged: number, boughtAt: string) =>
  `globex.io,true,globex.io,Globex Corporation,US,b2b_software,1001-5000,1989,${charged},${boughtAt},,`;
const none = (boughtAt: string) => `no-record.example,false,,,,,,,0,${boughtAt},,`;
const T0 = '2026-11-24T12:00:00Z';

describe('answers reused from the store, with their age limits', () => {
  it('found answers for 30 days, "no record" for 7; each bought again once older', async () => {
    const first = await batchAt(0, 'ages.db');
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe(`${HEADER}\n${acme(1, '')}\n${none('')}\n${globex(1, '')}\n`);
    expect(first.bought).toEqual(
      expect.arrayContaining(['acme-shoes.com', 'no-record.example', 'globex.io']),
    );
    expect(first.bought).toHaveLength(3);

    // Six days on: everything comes from the store, at no cost, with its purchase time.
    const sixDays = await batchAt(6 * DAY, 'ages.db');
    expect(sixDays.bought).toEqual([]);
    expect(sixDays.stdout).toBe(`${HEADER}\n${acme(0, T0)}\n${none(T0)}\n${globex(0, T0)}\n`);

    // Eight days on: the "no record" answer has expired and is asked again; found ones are not.
    const eightDays = await batchAt(8 * DAY, 'ages.db');
    expect(eightDays.bought).toEqual(['no-record.example']);
    expect(eightDays.stdout).toBe(`${HEADER}\n${acme(0, T0)}\n${none('')}\n${globex(0, T0)}\n`);

    // Thirty-one days on: the found answers are bought again; the "no record" one is 23 days old.
    const month = await batchAt(31 * DAY, 'ages.db');
    expect(month.bought.sort()).toEqual(['acme-shoes.com', 'globex.io', 'no-record.example']);
    expect(month.stdout).toBe(`${HEADER}\n${acme(1, '')}\n${none('')}\n${globex(1, '')}\n`);
  });

  it('--max-age and --not-found-max-age set the limits; --refresh buys everything again', async () => {
    await batchAt(0, 'flags.db');
    const young = await batchAt(2 * DAY, 'flags.db', ['--max-age', '1d', '--not-found-max-age', '3d']);
    expect(young.bought.sort()).toEqual(['acme-shoes.com', 'globex.io']);
    const later = '2026-11-26T12:00:00Z';
    expect(young.stdout).toBe(`${HEADER}\n${acme(1, '')}\n${none(T0)}\n${globex(1, '')}\n`);

    const refreshed = await batchAt(3 * DAY, 'flags.db', ['--refresh']);
    expect(refreshed.bought.sort()).toEqual(['acme-shoes.com', 'globex.io', 'no-record.example']);
    expect(refreshed.stdout).toBe(`${HEADER}\n${acme(1, '')}\n${none('')}\n${globex(1, '')}\n`);
    // What --refresh bought is what the next run reuses.
    const after = await batchAt(3 * DAY + 1000, 'flags.db');
    expect(after.bought).toEqual([]);
    expect(after.stdout).toContain(acme(0, '2026-11-27T12:00:00Z'));
    expect(young.stdout).not.toContain(later);
  });

  it('never stores a failure: the next run asks again', async () => {
    sandbox.faults.add('internal_error', { path: '/api/domains/globex.io', times: 1 });
    const failed = await batchAt(0, 'failures.db');
    expect(failed.code).toBe(6);
    expect(failed.stdout.split('\n')[3]).toBe(
      'globex.io,,,,,,,,0,,internal_error,fault injected by the sandbox (internal_error)',
    );
    const next = await batchAt(1000, 'failures.db');
    expect(next.bought).toEqual(['globex.io']);
    expect(next.code).toBe(0);
  });

  it('a single lookup says on stderr that its answer came from the store, and how old it is', async () => {
    const args = ['enrich', 'acme-shoes.com', '--products', 'profile'];
    const first = await runInProcess(args, { env: env('single.db'), now: () => FIXED_NOW, tty: true });
    expect(first.code).toBe(0);
    const again = await runInProcess(args, {
      env: env('single.db'),
      now: () => FIXED_NOW + 3 * DAY,
      tty: true,
    });
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(
      'acme-shoes.com: from the store, bought 3 days ago; --refresh buys it again\nCredits: charged 0\n',
    );
    expect(again.stdout).toBe(first.stdout);
    const piped = await runInProcess([...args, '-o', 'ndjson'], {
      env: env('single.db'),
      now: () => FIXED_NOW + 3 * DAY,
    });
    expect(piped.stdout).toBe(
      '{"domain":"acme-shoes.com","found":true,"company_name":"Acme Shoes","country":"US","site_category":"fashion","employee_range":"51-200","founded_year":2009,"credits_charged":0,"bought_at":"2026-11-24T12:00:00Z"}\n',
    );
  });
});
