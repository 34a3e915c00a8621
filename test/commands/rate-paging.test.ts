// --rate beyond batches: `search --all` spaces its pages and a lookalike of many seeds its seed
// requests (all workers sharing one pacer), against a sandbox that allows 5 requests a second per
// key. With --rate 4 the sandbox never answers 429; without --rate the pace is 90% of the limit
// GET /api/me reports (4.5 a second), asked once before the first request.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/sandbox/request-log.js';
import { runPiped } from '../helpers/in-process.js';
import { type OnTestFinished, sandboxAndDirForTest } from '../helpers/sandbox.js';

/**
 * A sandbox of the test's own (so that no other case's requests count against its rate windows),
 * the environment that reaches it, and its keyed requests (the public catalogs are not limited).
 * `search --all` needs 25,000 companies for a segment of several 1,000-row pages; a lookalike
 * needs only its seeds.
 */
async function limited(onTestFinished: OnTestFinished, companies = 25_000) {
  const { sandbox, dir } = await sandboxAndDirForTest(
    'cd-rate-paging-',
    { companies, rateLimit: 5 },
    onTestFinished,
  );
  return {
    sandbox,
    env: {
      COMPANY_DATA_BASE_URL: sandbox.url,
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
    },
    keyed: () => sandbox.requests().filter((r) => r.key_name !== null),
  };
}
const statuses = (log: RequestLogEntry[]) => [...new Set(log.map((e) => e.status))];

// One case at a time, although each waits on its pace: the sandbox answers in this worker's event
// loop, and another case's work there (a page of 1,000 rows, say) would hold requests the pacer
// had spaced out and let them reach the sandbox bunched in one of its one-second windows (a 429
// seen once in a whole run with these cases side by side).
describe('--rate for search --all and lookalike', () => {
  it('search --all --rate 4: every page under the limit, no 429', async ({ onTestFinished }) => {
    const { sandbox, env, keyed } = await limited(onTestFinished);
    const r = await runPiped(['search', '--filter', 'country=US', '--all', '--rate', '4', '-o', 'ndjson'], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    const log = keyed();
    const pages = log.filter((e) => e.path === '/api/search');
    // A segment of several pages, each one a request: more than the limit allows in one second.
    expect(pages.length).toBeGreaterThan(5);
    expect(log.map((e) => e.path)).toEqual(pages.map(() => '/api/search'));
    expect(statuses(log)).toEqual([200]);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(
      sandbox.dataset.companies.filter((c) => c.country === 'US').length,
    );
  });

  it('search --all without --rate asks me once and paces at 90% of its limit: no 429', async ({
    onTestFinished,
  }) => {
    const { env, keyed } = await limited(onTestFinished);
    const r = await runPiped(['-v', 'search', '--filter', 'country=US', '--all', '-o', 'ndjson'], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    const log = keyed();
    expect(log[0].path).toBe('/api/me');
    expect(log.slice(1).every((e) => e.path === '/api/search')).toBe(true);
    expect(statuses(log)).toEqual([200]);
    expect(r.stderr).toContain(
      'pacing: 4.5 requests per second, 90% of the rate limit GET /api/me reports (5 per second); --rate changes it',
    );
  });

  it('lookalike of 12 seeds, 4 at a time, --rate 4: no 429', async ({ onTestFinished }) => {
    const { sandbox, env, keyed } = await limited(onTestFinished, 2000);
    const seeds = sandbox.dataset.companies.slice(100, 112).map((c) => c.domain);
    const r = await runPiped(
      ['lookalike', ...seeds, '-k', '5', '--concurrency', '4', '--rate', '4', '-o', 'csv'],
      {
        env,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const log = keyed();
    expect(log.filter((e) => e.path.startsWith('/api/lookalike/'))).toHaveLength(12);
    expect(statuses(log)).toEqual([200]);
  });

  it('one seed asks nothing of the account and is not paced', async ({ onTestFinished }) => {
    const { env, keyed } = await limited(onTestFinished, 2000);
    const r = await runPiped(['lookalike', 'acme-shoes.com', '-k', '3', '-o', 'csv'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(keyed().map((e) => e.path)).toEqual(['/api/lookalike/acme-shoes.com']);
  });
});
