// A batch slows down when the service (or a gateway in front of it) says it is overloaded: a
// Retry-After longer than the client sleeps stops the batch with the time to come back, and 503s
// from a gateway's rate limiter slow every worker instead of being retried request by request.
// The real binary talks to a loopback front server that forwards to a sandbox.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
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

function enrich(name: string, domains: string[], concurrency: number) {
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
  return runCli([...args, '--concurrency', String(concurrency)], { env: env(), timeoutMs: 60_000 });
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

  it("slows the whole batch on a gateway's 503 pages instead of retrying request by request", async () => {
    const domains = sandbox.dataset.companies.slice(100, 180).map((c) => c.domain);
    arrivals = [];
    // nginx limit_req: 20 requests a second, a burst of 4, the rest answered 503 with a page.
    const rate = 20 / 1000;
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
    const r = await enrich('gateway', domains, 8);
    expect(r.signal, r.stderr).toBeNull();
    expect([0, 6], r.stderr).toContain(r.code);
    answer = () => false;
    const rows = parse(readFileSync(join(home, 'gateway-out.csv')), { columns: true }) as Array<
      Record<string, string>
    >;
    const failed = rows.filter((row) => row.error_code !== '').length;
    expect(failed, r.stderr).toBeLessThanOrEqual(2);
    expect([0, 6]).toContain(r.code);
    // After the first 503, only what was already on its way arrives during the pause.
    const firstRefusal = arrivals.find((a) => a.status === 503)!;
    const during = arrivals.filter((a) => a.at > firstRefusal.at && a.at < firstRefusal.at + 150);
    expect(during.length).toBeLessThanOrEqual(8);
  }, 90_000);
});
