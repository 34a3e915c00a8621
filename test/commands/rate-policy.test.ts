// A service's RateLimit-Policy paces a batch from its first answer on, also when nothing was asked
// of the service before the batch began (its catalogs came from the cache): the listener asked for
// before the HTTP client existed is attached when the client is made. Counted from the sandbox's
// request log: a run that paces to the policy gets no 429.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { purchase } from '../helpers/purchase.js';
import { answerFront, listenLocal } from '../helpers/server.js';

/** The sandbox behind a front that states its limit in headers only (`me` says nothing of it). */
function policyFront(base: string) {
  return answerFront(base, (path, headers, body) => {
    const { rate_limit_per_second: _limit, ...rest } = body;
    return {
      headers: { ...headers, 'ratelimit-policy': '2;w=1' },
      body: path.startsWith('/api/me') ? rest : body,
    };
  });
}

describe('the service rate policy', () => {
  it('paces a batch whose catalogs come from the cache from the first answer on', async ({
    onTestFinished,
  }) => {
    // The service allows 3 a second and states 2: paced to its policy, `me` and the lookups fit.
    const p = await purchase(onTestFinished, { rateLimit: 3 });
    const front = await listenLocal(policyFront(p.sandbox.url));
    onTestFinished(front.close);
    const domains = p.sandbox.dataset.companies.slice(0, 12).map((c) => c.domain);
    const runOf = async (some: string[], name: string) => {
      const r = await p.run(
        ['enrich', '--input', p.inputOf(some), '--output', join(p.dir, `${name}.csv`), '--concurrency', '4'],
        {},
        front.url,
      );
      expect(r.code, r.stderr).toBe(0);
    };
    // The first run fetches the catalogs (and caches them); the second asks nothing before its
    // first lookup but `me`, whose answer carries the policy.
    await runOf(domains.slice(0, 2), 'first');
    // The sandbox counts its limit over one-second windows: the second run starts in a window of
    // its own, so that only its own requests count against it.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const since = p.sandbox.requests().at(-1)?.seq ?? 0;
    await runOf(domains.slice(2), 'second');
    const lookups = p.sandbox.requests().filter((e) => e.seq > since && e.path.startsWith('/api/domains/'));
    expect(lookups.map((e) => e.status)).toEqual(lookups.map(() => 200));
    expect(lookups).toHaveLength(10);
  }, 30_000);
});
