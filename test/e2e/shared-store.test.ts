// One PostgreSQL store shared by "hosts": processes with no local state in common (their own
// XDG_STATE_HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME and working folder), against one sandbox whose
// balance counts every credit. A real PostgreSQL server (test/helpers/postgres.ts) and real
// processes: row locks across sessions, a SIGKILLed host and a stopped server cannot be played
// in-process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { hostIn } from '../helpers/hosts.js';
import { type Postgres, postgresMissing, startPostgres } from '../helpers/postgres.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { listenLocal, overlappingFront } from '../helpers/server.js';

let sandbox: SandboxHandle;
let dir: string;
// 10 ms a lookup. Hosts that must run at once reach it through a front that holds their first
// lookups until both are under way (overlappingFront): they overlap whatever their size.
sandboxAndDirForTests('cd-shared-store-', { companies: 3000, latencyMs: 10 }, (s, d) => {
  sandbox = s;
  dir = d;
});

const missing = postgresMissing();
let server: Postgres;
let databases = 0;
beforeAll(async () => {
  if (!missing) server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

/** A host of its own (test/helpers/hosts.ts), the shared store, the service at `base`. */
const host = (name: string, store: string, base = sandbox.url) =>
  hostIn(join(dir, name), store, base, sandbox.keys.full);

const companies = (from: number, to: number) =>
  sandbox.dataset.companies.slice(from, to).map((c) => c.domain);
const balance = () => sandbox.balances().full;
const lookupsSent = () => sandbox.requests().filter((r) => r.path.startsWith('/api/domains/')).length;
const column = (path: string, name: string): string[] => {
  const [header, ...rows] = parse(readFileSync(path)) as string[][];
  return rows.map((row) => row[header.indexOf(name)]);
};
const sum = (cells: string[]) => cells.reduce((total, cell) => total + Number(cell || 0), 0);

async function newStore(): Promise<string> {
  return server.createDatabase(`shared_${++databases}`);
}

/**
 * Runs `body` with the service at `base`: a front that holds the first lookups until two hosts of
 * --concurrency `concurrency` are under way at the same moment (overlappingFront).
 */
async function atOnce<T>(concurrency: number, body: (base: string) => Promise<T>): Promise<T> {
  const front = overlappingFront(sandbox.url);
  const listening = await listenLocal(front.server);
  front.hold(concurrency);
  try {
    return await body(listening.url);
  } finally {
    await listening.close();
  }
}

// Processes on a loaded 2-core machine: each case gets a minute.
describe.runIf(!missing)('a PostgreSQL store shared by hosts', { timeout: 60_000 }, () => {
  it('three hosts over overlapping inputs pay once per distinct domain; a later host re-buys nothing', () =>
    atOnce(8, async (base) => {
      const store = await newStore();
      const a = host('a1', store, base);
      const b = host('b1', store, base);
      // 100 domains each, 50 in common, met in opposite orders at once: the hosts meet head on.
      const aIn = a.input('in.csv', companies(0, 100));
      const bIn = b.input('in.csv', companies(50, 150).reverse());
      const before = balance();
      const [ra, rb] = await Promise.all([
        runCli(['-q', 'enrich', '--input', aIn, '--output', 'out.csv', '--rate', '0'], {
          env: a.env,
          cwd: a.cwd,
        }),
        runCli(['-q', 'enrich', '--input', bIn, '--output', 'out.csv', '--rate', '0'], {
          env: b.env,
          cwd: b.cwd,
        }),
      ]);
      expect([ra.code, ra.stderr, rb.code, rb.stderr]).toEqual([0, '', 0, '']);
      expect(before - balance()).toBe(150);
      // What each host's output says it paid adds up to what the service charged.
      expect(
        sum(column(join(a.cwd, 'out.csv'), 'credits_charged')) +
          sum(column(join(b.cwd, 'out.csv'), 'credits_charged')),
      ).toBe(150);

      // Through the same front (answers are stored per service), open by now.
      const c = host('c1', store, base);
      const cIn = c.input('in.csv', companies(0, 150));
      const sent = lookupsSent();
      const rc = await runCli(['-q', 'enrich', '--input', cIn, '--output', 'out.csv'], {
        env: c.env,
        cwd: c.cwd,
      });
      expect([rc.code, rc.stderr]).toEqual([0, '']);
      expect(lookupsSent()).toBe(sent);
      expect(before - balance()).toBe(150);
      expect(column(join(c.cwd, 'out.csv'), 'credits_charged').every((cell) => cell === '0')).toBe(true);

      // The shared ledger, read from a fourth host: what the service charged.
      const d = host('d1', store, base);
      const spend = await runCli(['spend', '-o', 'json'], { env: d.env, cwd: d.cwd });
      expect(spend.code, spend.stderr).toBe(0);
      expect(JSON.parse(spend.stdout).total).toEqual({ charged: 150, possibly_charged: 0, calls: 150 });
    }));

  it('two hosts at once under one --budget-month stay within it together', async () => {
    const store = await newStore();
    const capped = ['-q', 'enrich', '--output', 'out.csv', '--rate', '0', '--budget-month', '60'];
    const before = balance();
    // 100 domains each, more than the cap: each would stop for it alone.
    const [ra, rb] = await atOnce(8, (base) => {
      const a = host('a2', store, base);
      const b = host('b2', store, base);
      const aIn = a.input('in.csv', companies(1000, 1100));
      const bIn = b.input('in.csv', companies(1100, 1200));
      return Promise.all([
        runCli([...capped, '--input', aIn], { env: a.env, cwd: a.cwd }),
        runCli([...capped, '--input', bIn], { env: b.env, cwd: b.cwd }),
      ]);
    });
    // Every lookup costs 1 credit: together they buy exactly up to the cap, and both stop for it.
    expect(before - balance()).toBe(60);
    expect([ra.code, rb.code]).toEqual([4, 4]);
    expect(ra.stderr).toContain('--budget-month 60');
    expect(rb.stderr).toContain('--budget-month 60');
  });

  it('a host killed with SIGKILL has its claims taken over at once: the total stays within the distinct domains plus its requests in flight', async () => {
    const store = await newStore();
    const a = host('a3', store);
    const b = host('b3', store);
    const domains = companies(2000, 2150);
    const aIn = a.input('in.csv', domains);
    const bIn = b.input('in.csv', domains);
    const concurrency = 16;
    const before = balance();
    const sent = lookupsSent();
    const killed = startCli(
      [
        '-q',
        'enrich',
        '--input',
        aIn,
        '--output',
        'out.csv',
        '--rate',
        '0',
        '--concurrency',
        String(concurrency),
      ],
      { env: a.env, cwd: a.cwd, input: 'ignore', stdout: 'ignore' },
    );
    for (let waited = 0; lookupsSent() < sent + 40 && waited < 30_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    killed.child.kill('SIGKILL');
    expect((await killed.done).signal).toBe('SIGKILL');
    const killedBought = before - balance();
    expect(killedBought).toBeGreaterThan(0);

    // The lease the killed host's last claims run to, by the database's clock.
    const database = new URL(store).pathname.slice(1);
    const dbNow = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';
    const leaseEnd = Number(
      (await server.admin('SELECT max(expires_at) AS at FROM company_data.claims', [], database))[0].at,
    );
    expect(leaseEnd).toBeGreaterThan(0);
    const rb = await runCli(['-q', 'enrich', '--input', bIn, '--output', 'out.csv', '--rate', '0'], {
      env: b.env,
      cwd: b.cwd,
    });
    expect([rb.code, rb.stderr]).toEqual([0, '']);
    // Taken over at once (the killed host's session is gone): the run ended before that lease did.
    const endedAt = Number((await server.admin(`SELECT ${dbNow} AS at`, [], database))[0].at);
    expect(endedAt).toBeLessThan(leaseEnd);
    const total = before - balance();
    expect(total).toBeGreaterThanOrEqual(domains.length);
    expect(total).toBeLessThanOrEqual(domains.length + concurrency);
    expect(column(join(b.cwd, 'out.csv'), 'found').every((cell) => cell === 'true')).toBe(true);
  });

  // A write the database holds up (a lock of an administrator's, a slow disk) must hold the buying
  // up too: an answer bought and not yet kept is paid again after a kill. Six connections, so that
  // claims still find one while the saves wait on theirs.
  it('a save the database holds up stops the buying: killed then, at most --concurrency answers are bought again', async () => {
    const store = await newStore();
    const a = host('a6', store);
    const domains = companies(2700, 2900);
    const input = a.input('in.csv', domains);
    const concurrency = 4;
    const argv = ['-q', 'enrich', '--input', input, '--output', 'out.csv', '--rate', '0'];
    argv.push('--concurrency', String(concurrency));
    const env = { ...a.env, COMPANY_DATA_STORE_CONNECTIONS: '6' };
    const before = balance();
    const sent = lookupsSent();
    const running = startCli(argv, { env, cwd: a.cwd, input: 'ignore', stdout: 'ignore' });
    for (let waited = 0; lookupsSent() < sent + 40 && waited < 30_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const locker = new pg.Client({ connectionString: store });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE company_data.answers IN EXCLUSIVE MODE');
      const atLock = lookupsSent();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // Each slot sends at most once more: its next answer waits for the lock, and so does it.
      expect(lookupsSent() - atLock).toBeLessThanOrEqual(concurrency);
      running.child.kill('SIGKILL');
      expect((await running.done).signal).toBe('SIGKILL');
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    const resumed = await runCli(argv, { env: a.env, cwd: a.cwd });
    expect([resumed.code, resumed.stderr]).toEqual([0, '']);
    // Every domain once, and again only the answers the killed run had not kept: one a slot.
    const total = before - balance();
    expect(total).toBeGreaterThanOrEqual(domains.length);
    expect(total).toBeLessThanOrEqual(domains.length + concurrency);
  });

  it('the server stopped mid-run: exit 5 with the resume command; after a restart the resume completes, paying once', async () => {
    const store = await newStore();
    const a = host('a4', store);
    const domains = companies(2500, 2650);
    const input = a.input('in.csv', domains);
    const argv = ['enrich', '--input', input, '--output', 'out.csv', '--rate', '0', '--concurrency', '8'];
    const before = balance();
    const sent = lookupsSent();
    const running = runCli(['-q', ...argv], { env: a.env, cwd: a.cwd });
    for (let waited = 0; lookupsSent() < sent + 60 && waited < 30_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Half a second a lookup from now on: the run is still buying while the server stops.
    sandbox.faults.add('delay:500', { path: '/api/domains/', times: domains.length });
    await server.halt();
    const lost = await running;
    await server.restart();
    sandbox.faults.clear();
    expect(lost.code, lost.stderr).toBe(5);
    // The problem is the last line; before it, at most the warning that a settle in flight could
    // not reach the ledger (the database went away under it).
    const lines = lost.stderr.trimEnd().split('\n');
    expect(
      lines.slice(0, -1).every((line) => line.startsWith('warning: the spend ledger could not record')),
    ).toBe(true);
    expect(JSON.parse(lines.at(-1)!).code).toBe('store_lost');
    expect(JSON.parse(lines.at(-1)!).hint).toBe(
      `Once the database is reachable again, resume with: company-data -q ${argv.join(' ')}`,
    );
    expect(lost.stderr).not.toContain(server.password);
    const paidBefore = before - balance();

    const resumed = await runCli(['-q', ...argv], { env: a.env, cwd: a.cwd });
    expect([resumed.code, resumed.stderr]).toEqual([0, '']);
    const total = before - balance();
    // What was stored is never bought again; only the answers in flight when the server went
    // away (at most the concurrency) can be.
    expect(total).toBeGreaterThanOrEqual(domains.length);
    expect(total).toBeLessThanOrEqual(domains.length + 8);
    expect(paidBefore).toBeLessThan(domains.length);
    expect(column(join(a.cwd, 'out.csv'), 'found').filter((cell) => cell === 'true')).toHaveLength(
      domains.length,
    );
  });
});
