// --budget counts attempts whose answer never arrived: the service may have charged them (it
// charges when it answers, whether or not the client is still listening).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runPiped } from '../helpers/in-process.js';
import { sandboxAndDirForTest } from '../helpers/sandbox.js';

// Well past the 0.2 s --timeout, and past undici's coarse headers timer (it fires up to about a
// second late), so that no answer arrives in time.
const DELAY_MS = 1800;

/** Until every delayed answer has been given (and charged) by the sandbox. */
async function answersGiven(sandbox: SandboxHandle): Promise<void> {
  const until = Date.now() + DELAY_MS + 5000;
  while (Date.now() < until) {
    const pending = sandbox.requests().filter((e) => e.path.startsWith('/api/domains/') && e.status === null);
    if (pending.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// Side by side, each with a sandbox of its own: both wait on the slow answers.
describe.concurrent('--budget with answers slower than --timeout', () => {
  for (const retries of ['0', '1']) {
    it(`--retries ${retries}: the balance falls by at most the budget, exit 4, charged and possibly charged apart`, async ({
      onTestFinished,
    }) => {
      const { sandbox, dir } = await sandboxAndDirForTest(
        'cd-enrich-budget-unknown-',
        { companies: 200 },
        onTestFinished,
      );
      const domains = sandbox.dataset.companies.slice(0, 20).map((c) => c.domain);
      const input = join(dir, `in-${retries}.csv`);
      writeFileSync(input, `domain\n${domains.join('\n')}\n`);
      sandbox.faults.add(`delay:${DELAY_MS}`, { path: '/api/domains/', times: 100 });
      const before = sandbox.balances().full;
      const r = await runPiped(
        [
          '--base-url',
          sandbox.url,
          '--timeout',
          '0.2',
          '--retries',
          retries,
          'enrich',
          '--input',
          input,
          '--output',
          join(dir, `out-${retries}.csv`),
          '--budget',
          '5',
          '--concurrency',
          '4',
        ],
        {
          env: {
            COMPANY_DATA_API_KEY: sandbox.keys.full,
            XDG_CONFIG_HOME: join(dir, 'config'),
            XDG_CACHE_HOME: join(dir, 'cache'),
            COMPANY_DATA_RETRY_BASE_MS: '10',
            COMPANY_DATA_RETRY_CAP_MS: '50',
          },
        },
      );
      await answersGiven(sandbox);
      const fell = before - sandbox.balances().full;
      expect(r.code, r.stderr).toBe(4);
      expect(fell).toBeGreaterThan(0);
      expect(fell).toBeLessThanOrEqual(5);
      const summary = /([\d,]+) credits? charged, up to ([\d,]+) more possibly charged/.exec(r.stderr);
      expect(summary, r.stderr).not.toBeNull();
      const charged = Number(summary![1]);
      const possibly = Number(summary![2]);
      expect(charged).toBe(0);
      expect(possibly).toBeGreaterThanOrEqual(fell);
      expect(charged + possibly).toBeLessThanOrEqual(5);
      expect(r.stderr).toContain('budget_exhausted');
    });
  }
});
