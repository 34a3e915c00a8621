// Pacing a batch (--rate, src/pace.ts) against a sandbox that allows 50 requests a second per key
// (a fixed one-second window, src/sandbox/rate-limit.ts): the real binary stays under the limit
// instead of reacting to 429s, with the rate given or taken from GET /api/me.
//
// Why no 429 comes at --rate 50, the limit itself: the pacer grants at most 50 turns in any
// 1,025 ms, so a fixed window of the sandbox can only see a 51st when one request reaches it more
// than 25 ms later, relative to the one 50 turns before it, than that one did (a stalled event
// loop at either end). The counts are asserted, never the time taken.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { beforeEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { nextRateWindow, sandboxAndDirForTests } from '../helpers/sandbox.js';
import { listenLocal } from '../helpers/server.js';

let sandbox: SandboxHandle;
let dir: string;
sandboxAndDirForTests('cd-enrich-rate-', { companies: 2000, rateLimit: 50 }, (s, d) => {
  sandbox = s;
  dir = d;
});

const env = () => ({
  COMPANY_DATA_API_KEY: sandbox.keys.full,
  XDG_CONFIG_HOME: join(dir, 'config'),
  XDG_CACHE_HOME: join(dir, 'cache'),
  COMPANY_DATA_RETRY_BASE_MS: '10',
  COMPANY_DATA_RETRY_CAP_MS: '50',
  COMPANY_DATA_RETRY_FLOOR_MS: '10',
});

/** The requests the sandbox logged from `seq` on, with a key (the public catalogs are not limited). */
const since = (seq: number) => sandbox.requests().filter((r) => r.seq > seq && r.key_name !== null);
const lastSeq = () => sandbox.requests().at(-1)?.seq ?? 0;
/** Each of these domains looked up once, answered 200; nothing else in `log`. */
function expectLookups(log: ReturnType<typeof since>, rows: string[]): void {
  expect(log.map((e) => e.path).sort()).toEqual(rows.map((d) => `/api/domains/${d}`).sort());
  expect(log.filter((e) => e.status !== 200)).toEqual([]);
}

const domains = (from: number, count: number) =>
  sandbox.dataset.companies.slice(from, from + count).map((c) => c.domain);

/**
 * Enriches these domains (written to `name.csv`) into `name-out.csv` and checks that the run
 * succeeded with every row found; returns its stderr and the requests the sandbox logged meanwhile.
 */
async function batch(
  name: string,
  rows: string[],
  args: string[],
  timeoutMs = 60_000,
  baseUrl = sandbox.url,
) {
  const input = join(dir, `${name}.csv`);
  writeFileSync(input, `domain\n${rows.join('\n')}\n`);
  const output = join(dir, `${name}-out.csv`);
  const start = lastSeq();
  const r = await runCli(['--base-url', baseUrl, 'enrich', '--input', input, '--output', output, ...args], {
    env: env(),
    timeoutMs,
  });
  expect(r.code, r.stderr).toBe(0);
  const out = parse(readFileSync(output), { columns: true }) as Array<Record<string, string>>;
  expect(out.map((row) => row.found)).toEqual(rows.map(() => 'true'));
  return { stderr: r.stderr, log: since(start) };
}

describe('enrich --input --rate', () => {
  // Each case starts in a rate window of its own: the last requests of the one before cannot count
  // against it.
  beforeEach(nextRateWindow);

  // 100 rows at 50 a second take two seconds, so at least one window is full and the run crosses
  // the windows' edges: enough to show that no window ever gets a 51st request.
  it("100 rows at --rate 50, the limit itself: not one 429 in the sandbox's request log", async () => {
    const rows = domains(0, 100);
    const { log } = await batch('paced', rows, ['--rate', '50', '--concurrency', '8'], 60_000);
    expect(log.filter((e) => e.status === 429)).toEqual([]);
    // Every lookup asked once and answered; --rate given: GET /api/me is not asked.
    expectLookups(log, rows);
    // No fixed window of the sandbox held more than the limit.
    const perWindow = new Map<number, number>();
    for (const e of log)
      perWindow.set(Math.floor(e.at / 1000), (perWindow.get(Math.floor(e.at / 1000)) ?? 0) + 1);
    expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(50);
  }, 90_000);

  it('without --rate paces at 90% of the limit GET /api/me reports: asked once, before the first lookup', async () => {
    // 100 rows at 45 a second: paced over three windows, never refused.
    const rows = domains(150, 100);
    const { stderr, log } = await batch('default', rows, ['--concurrency', '4', '-v']);
    expect(stderr).toContain(
      'pacing: 45 requests per second, 90% of the rate limit GET /api/me reports (50 per second); --rate changes it\n',
    );
    expect(log[0]).toMatchObject({ path: '/api/me', status: 200 });
    expectLookups(log.slice(1), rows);
  }, 90_000);

  it('--rate 0 turns pacing off without asking GET /api/me; a dry run asks it only for the balance', async () => {
    const rows = domains(400, 20);
    const off = await batch('off', rows, ['--rate', '0', '-v']);
    expect(off.stderr).not.toContain('pacing:');
    expectLookups(off.log, rows);

    const dry = lastSeq();
    const r = await runCli(
      [
        '--base-url',
        sandbox.url,
        'enrich',
        '--input',
        join(dir, 'off.csv'),
        '--output',
        join(dir, 'dry.csv'),
        '--dry-run',
      ],
      { env: env() },
    );
    expect(r.code, r.stderr).toBe(0);
    // Its one request with the key is the balance it shows (src/batch/dry-run.ts); nothing for a rate.
    expect(since(dry).map((e) => e.path)).toEqual(['/api/me']);
  }, 90_000);

  it('a GET /api/me that fails means no pacing, not a failed run', async () => {
    sandbox.faults.add('internal_error', { path: '/api/me', times: 2 });
    const rows = domains(500, 20);
    const { stderr, log } = await batch('me-failed', rows, ['--concurrency', '4', '-v', '--retries', '1']);
    expect(stderr).toContain('pacing: off; GET /api/me failed (internal_error)\n');
    expect(log.filter((e) => e.path === '/api/me').map((e) => [e.status, e.fault])).toEqual([
      [500, 'internal_error'],
      [500, 'internal_error'],
    ]);
    expectLookups(
      log.filter((e) => e.path !== '/api/me'),
      rows,
    );
  }, 60_000);
});

describe("a pause the service's RateLimit headers ask for", () => {
  it('holds the lookups waiting for a slot until the window resets, and the process lives through it to the end', async ({
    onTestFinished,
  }) => {
    // The sandbox behind a front whose answer to the first lookup says: nothing left in this
    // window (someone else used the key), it resets in 2 s. Nothing is retried, nothing else
    // sleeps: the run has only its lookups waiting out the pause for their slot.
    let first = true;
    const front = await listenLocal(
      createServer((req, res) => {
        const target = new URL(sandbox.url);
        const onward = request(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (answer) => {
            const headers = { ...answer.headers };
            if (first && req.url?.startsWith('/api/domains/')) {
              first = false;
              headers['ratelimit-policy'] = '"key";q=100;w=1';
              headers.ratelimit = '"key";r=0;t=2';
            }
            res.writeHead(answer.statusCode ?? 502, headers);
            answer.pipe(res);
          },
        );
        onward.on('error', () => res.destroy());
        req.pipe(onward);
      }),
    );
    onTestFinished(front.close);
    const rows = domains(600, 5);
    // A pause nothing kept the process alive through would end it early, without a result.
    const { log } = await batch('held', rows, ['--concurrency', '1', '--rate', '0'], 60_000, front.url);
    expectLookups(log, rows);
    // The other four waited for the reset: none left sooner than 2 s after the first arrived
    // (less the rounding of two clocks). A lower bound: a slow machine only adds to it.
    const [head, ...rest] = log;
    expect(rest.filter((e) => e.at - head.at < 1_950)).toEqual([]);
  }, 60_000);
});
