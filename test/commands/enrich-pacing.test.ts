// A batch slows down when the service (or a gateway in front of it) says it is overloaded: a
// Retry-After longer than the client sleeps stops the batch with the time to come back, and 503s
// from a gateway's rate limiter lower the batch's rate (src/pace.ts) while every row is kept.
// The command, run in-process, talks to a loopback front server that forwards to a sandbox.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runPiped } from '../helpers/in-process.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { forwardTo, listenLocal } from '../helpers/server.js';

let sandbox: SandboxHandle;
let home: string;
sandboxAndDirForTests('cd-enrich-pacing-', { companies: 2000 }, (s, d) => {
  sandbox = s;
  home = d;
});

interface Arrival {
  at: number;
  path: string;
  status: number;
}

/** What the front does with a lookup: 'pass' forwards it; a function may answer it itself. */
let answer: (res: ServerResponse, arrival: Arrival) => boolean = () => false;
let arrivals: Arrival[] = [];
let front: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (!path.startsWith('/api/domains/')) return forwardTo(sandbox.url, req, res);
    const arrival: Arrival = { at: performance.now(), path, status: 200 };
    arrivals.push(arrival);
    if (!answer(res, arrival)) forwardTo(sandbox.url, req, res);
  });
  front = await listenLocal(server);
});

afterAll(async () => {
  await front.close();
});

const env = () => ({
  COMPANY_DATA_STORE: join(home, 'store.db'),
  COMPANY_DATA_API_KEY: sandbox.keys.full,
  XDG_CONFIG_HOME: join(home, 'config'),
  XDG_CACHE_HOME: join(home, 'cache'),
  COMPANY_DATA_RETRY_BASE_MS: '50',
  COMPANY_DATA_RETRY_CAP_MS: '500',
  COMPANY_DATA_RETRY_FLOOR_MS: '200',
});

function enrich(name: string, domains: string[], concurrency: number, extra: string[] = []) {
  const input = join(home, `${name}.csv`);
  writeFileSync(input, `domain\n${domains.join('\n')}\n`);
  const args = [
    '--base-url',
    front.url,
    'enrich',
    '--input',
    input,
    '--output',
    join(home, `${name}-out.csv`),
  ];
  return runPiped([...args, '--concurrency', String(concurrency), ...extra], { env: env() });
}

describe('enrich --input when the service asks to wait', () => {
  it('stops at a Retry-After of 900 s, names the time to retry and the command, and resumes without buying again', async () => {
    const domains = sandbox.dataset.companies.slice(0, 60).map((c) => c.domain);
    arrivals = [];
    let limitedAt = -1;
    answer = (res, arrival) => {
      if (arrivals.length !== 20) return false;
      limitedAt = arrivals.length;
      arrival.status = 429;
      res.writeHead(429, { 'content-type': 'application/problem+json', 'retry-after': '900' });
      res.end(JSON.stringify({ title: 'Too many requests', status: 429, code: 'rate_limited' }));
      return true;
    };
    const first = await enrich('limited', domains, 4);
    expect(limitedAt).toBe(20);
    // After the 429, only the requests already on their way (at most concurrency - 1) arrive.
    expect(arrivals.length - limitedAt).toBeLessThanOrEqual(3);
    expect(first.code, first.stderr).toBe(5);
    expect(first.stderr).toContain('retry_after_too_long');
    expect(first.stderr).toMatch(/retry after \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: company-data /);
    expect(first.stderr).toContain('company-data --base-url');
    const bought = new Set(arrivals.filter((a) => a.status === 200).map((a) => a.path));

    answer = () => false;
    arrivals = [];
    const second = await enrich('limited', domains, 4);
    expect(second.code, second.stderr).toBe(0);
    expect(arrivals.filter((a) => bought.has(a.path))).toEqual([]);
    expect(arrivals.length).toBe(domains.length - bought.size);
    const rows = parse(readFileSync(join(home, 'limited-out.csv'))) as string[][];
    expect(rows.length).toBe(domains.length + 1);
  }, 90_000);

  it("behind a gateway's limiter (HTML 503, no Retry-After) keeps every row, buys each domain once, and counts no refusal as possibly charged", async () => {
    const domains = sandbox.dataset.companies.slice(100, 160).map((c) => c.domain);
    arrivals = [];
    // nginx limit_req: 100 requests a second, a burst of 4, the rest answered 503 with a page.
    const rate = 100 / 1000;
    let tokens = 4;
    let last = performance.now();
    answer = (res, arrival) => {
      tokens = Math.min(4, tokens + (arrival.at - last) * rate);
      last = arrival.at;
      if (tokens >= 1) {
        tokens -= 1;
        return false;
      }
      arrival.status = 503;
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end(
        '<html><head><title>503 Service Temporarily Unavailable</title></head><body>nginx</body></html>',
      );
      return true;
    };
    const log = sandbox.requests().at(-1)?.seq ?? 0;
    const ledger = async () => {
      const spend = await runPiped(['spend', '-o', 'json'], { env: env() });
      expect(spend.code, spend.stderr).toBe(0);
      return JSON.parse(spend.stdout).total as { charged: number; possibly_charged: number };
    };
    const before = await ledger();
    // A budget of exactly what the rows cost, and one retry: a refusal counted as possibly
    // charged would leave rows without room (exit 4), one counted against --retries would fail
    // its row (exit 6).
    const r = await enrich('gateway', domains, 8, ['--budget', String(domains.length), '--retries', '1']);
    answer = () => false;
    expect(r.code, r.stderr).toBe(0);
    const refused = arrivals.filter((a) => a.status === 503);
    // The gateway did refuse: without refusals this test would show nothing.
    expect(refused.length).toBeGreaterThan(0);
    const rows = parse(readFileSync(join(home, 'gateway-out.csv')), { columns: true }) as Array<
      Record<string, string>
    >;
    expect(rows.map((row) => [row.domain, row.found, row.error_code])).toEqual(
      domains.map((d) => [d, 'true', '']),
    );
    // Each domain reached the service once, and was charged once.
    const bought = sandbox
      .requests()
      .filter((e) => e.seq > log && e.path.startsWith('/api/domains/'))
      .map((e) => [e.path, e.status]);
    expect(bought.sort()).toEqual(domains.map((d) => [`/api/domains/${d}`, 200]).sort());
    expect(rows.map((row) => row.credits_charged)).toEqual(domains.map(() => '1'));
    expect(r.stderr).toContain(`${domains.length} credits charged`);
    expect(r.stderr).not.toContain('possibly charged');
    // The spend ledger: every credit charged, none possibly charged.
    const after = await ledger();
    expect([after.charged - before.charged, after.possibly_charged - before.possibly_charged]).toEqual([
      domains.length,
      0,
    ]);
  }, 90_000);
});
