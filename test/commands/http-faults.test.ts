// Commands against a loopback sandbox with queued faults, in-process (main() with piped streams and
// the real clock): retries, waits and exit codes as a user sees them, with attempts counted in the
// sandbox's own request log.
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { type InProcessResult as RunResult, runPiped } from '../helpers/in-process.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let home: string;

sandboxAndDirForTests('cd-http-faults-', { host: '127.0.0.1', companies: 200 }, (s, d) => {
  sandbox = s;
  home = d;
});

let firstSeq = 0;
beforeEach(() => {
  sandbox.faults.clear();
  firstSeq = sandbox.requests().at(-1)?.seq ?? 0;
});

/** Requests to a path since the test began, in order. */
function attemptsAt(path: string) {
  return sandbox.requests().filter((r) => r.seq > firstSeq && r.path === path);
}

function cli(args: string[], key: string = sandbox.keys.full): Promise<RunResult> {
  return runPiped(['--base-url', sandbox.url, '--retries', '2', ...args], {
    env: {
      COMPANY_DATA_API_KEY: key,
      // Backoff in milliseconds so that three attempts do not take seconds (see src/http/retry.ts).
      COMPANY_DATA_RETRY_BASE_MS: '5',
      COMPANY_DATA_RETRY_CAP_MS: '20',
      COMPANY_DATA_RETRY_FLOOR_MS: '10',
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_CACHE_HOME: join(home, 'cache'),
    },
  });
}

/** The one JSON problem line written to stderr with -o json. */
function problemOf(r: RunResult): { code: string; status: number; detail: string } {
  const line = r.stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .at(-1);
  if (!line) throw new Error(`no problem line in stderr: ${r.stderr}`);
  return JSON.parse(line);
}

describe('company-data me under faults', () => {
  it('retries a 503 and succeeds', async () => {
    sandbox.faults.add('catalog_refresh_in_progress', { path: '/api/me', times: 2 });
    const r = await cli(['me', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ plan: 'pro' });
    expect(attemptsAt('/api/me').map((a) => a.status)).toEqual([503, 503, 200]);
  });

  it('waits at least Retry-After after a 429', async () => {
    sandbox.faults.add('rate_limited', { path: '/api/me' });
    const r = await cli(['me', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(attemptsAt('/api/me').map((a) => a.status)).toEqual([429, 200]);
    // Retry-After is 1 s: the second attempt arrives at least a second after the first did (the
    // sandbox's log holds when each arrived).
    const [first, second] = attemptsAt('/api/me').map((a) => a.at);
    expect(second - first).toBeGreaterThanOrEqual(1000);
  });

  it('attempts a 401 exactly once and exits 3', async () => {
    const r = await cli(['me', '-o', 'json'], 'cd_not_a_real_key');
    expect(r.code).toBe(3);
    expect(problemOf(r).code).toBe('invalid_api_key');
    expect(attemptsAt('/api/me')).toHaveLength(1);
  });

  it('attempts a 400 exactly once and exits 2', async () => {
    sandbox.faults.add('invalid_request', { path: '/api/me', times: 3 });
    const r = await cli(['me', '-o', 'json']);
    expect(r.code).toBe(2);
    expect(problemOf(r).code).toBe('invalid_request');
    expect(attemptsAt('/api/me')).toHaveLength(1);
  });

  it.each([
    ['html502', 'unexpected_response', /HTML page/],
    ['truncate', 'unexpected_response', /cut off|truncated/],
    ['reset', 'network_error', /closed before a complete response/],
  ])('gives up on %s after the retries with a clear message and exit 5', async (fault, code, message) => {
    sandbox.faults.add(fault, { path: '/api/me', times: 3 });
    const r = await cli(['me', '-o', 'json']);
    expect(r.code).toBe(5);
    const problem = problemOf(r);
    expect(problem.code).toBe(code);
    expect(problem.detail).toMatch(message);
    expect(problem.detail).toContain('gave up after 3 attempts');
    expect(attemptsAt('/api/me')).toHaveLength(3);
    expect(r.stdout).toBe('');
  });

  it('times out each attempt of a server that does not answer, then exits 5', async () => {
    // Two attempts, not three: each waits out undici's coarse headers timer (up to about 1 s).
    sandbox.faults.add('delay:2500', { path: '/api/me', times: 2 });
    const r = await cli(['--retries', '1', '--timeout', '0.3', 'me', '-o', 'json']);
    expect(r.code).toBe(5);
    const problem = problemOf(r);
    expect(problem.code).toBe('timeout');
    expect(problem.detail).toContain('within 0.3s');
    expect(attemptsAt('/api/me')).toHaveLength(2);
  });

  it('fails at once when Retry-After is 600 s', async () => {
    sandbox.faults.add('rate_limited:600', { path: '/api/me' });
    const r = await cli(['me', '-o', 'json']);
    expect(r.code).toBe(5);
    const problem = problemOf(r) as { code: string; hint?: string };
    expect(problem.code).toBe('retry_after_too_long');
    expect(problem.hint).toContain('600s');
    expect(attemptsAt('/api/me')).toHaveLength(1);
  });

  it('logs every attempt with -v and never the key', async () => {
    sandbox.faults.add('internal_error', { path: '/api/me' });
    const r = await cli(['-v', 'me', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/api\/me -> 500 in \d+ ms \(attempt 1\/3/);
    expect(r.stderr).toMatch(/-> 200 in \d+ ms \(attempt 2\/3, charged 0\)/);
    expect(r.stderr + r.stdout).not.toContain(sandbox.keys.full);
  });
});

describe('company-data products', () => {
  it('never sends the key to a public endpoint, and retries it too', async () => {
    sandbox.faults.add('html502', { path: '/api/products' });
    const r = await cli(['products', '-o', 'json']);
    expect(r.code).toBe(0);
    const attempts = attemptsAt('/api/products');
    expect(attempts.map((a) => a.status)).toEqual([502, 200]);
    expect(attempts.map((a) => a.auth)).toEqual([null, null]);
  });
});
