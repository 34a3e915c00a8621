// Partial answers, never lost purchases: an `enrich` stopped part-way by a fault or by a cap that a
// call running beside it used up answers with what it bought, marked incomplete, with its cost,
// even with --no-store (where nothing bought is kept to reuse). Through the built server and the
// SDK's 2.x client; counted through the sandbox's balance. The stops asked for (a client's
// cancel, a closed stdin, SIGTERM): test/e2e/mcp-stop.test.ts.
import type { CallToolResult } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { type Answer, builtServerForTests, validator } from '../helpers/mcp-built.js';

const served = builtServerForTests('cd-mcp-partial-');

/** Showcase domains, all found: each costs 1 credit with the default products. */
const THREE = ['acme-shoes.com', 'globex.io', 'initech.co.uk'];
const OTHER_THREE = ['umbrella-health.de', 'escape-test.com', 'lonely-seed.com'];

function lookups(): number {
  return served.sandbox.requests().filter((r) => r.path.startsWith('/api/domains/')).length;
}

describe.each(['2026-07-28', '2025-11-25'] as const)('partial answers under %s', (protocol) => {
  it('a fault part-way: the domains bought come back, marked incomplete, with their cost', async () => {
    const { client } = await served.start(['--no-store', 'mcp', '--allow-spend', '10'], { protocol });
    const { check } = validator((await client.listTools()).tools);
    const start = served.sandbox.balances().full;
    served.sandbox.faults.add('insufficient_credits', { path: '/api/domains/globex.io', times: 1 });
    try {
      const result = (await client.callTool({
        name: 'enrich',
        arguments: { domains: THREE },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const answer = check('enrich', 'partial', result);
      expect(answer.results.map((r: Answer) => r.domain)).toEqual(['acme-shoes.com']);
      expect(answer.incomplete).toEqual({
        reason: 'insufficient_credits',
        detail: expect.any(String),
        not_done: ['globex.io', 'initech.co.uk'],
      });
      expect(answer.credits.charged).toBe(1);
      expect(result._meta?.['company-data/credits']).toEqual(answer.credits);
      expect((result.content[0] as { text: string }).text).toMatch(
        /^1 domain, 1 found; 1 credit charged\. Stopped before 2 domains \(.+\); those were not looked up\./,
      );
      expect(start - served.sandbox.balances().full).toBe(1);
    } finally {
      served.sandbox.faults.clear();
    }
  });

  it('a cap used up by a call beside it: each answer keeps what it bought, and they add up to the cap', async () => {
    const { client } = await served.start(['mcp', '--allow-spend', '4'], { protocol });
    const { check } = validator((await client.listTools()).tools);
    const start = served.sandbox.balances().full;
    const before = lookups();
    // Slow lookups: the second call passes its check (3 credits fit beside the 1 held) while the
    // first is still buying, and the two then need 6 where the session has 4.
    served.sandbox.faults.add('delay:300', { path: '/api/domains/', times: 100 });
    try {
      const first = client.callTool({ name: 'enrich', arguments: { domains: THREE } });
      while (lookups() === before) await new Promise((resolve) => setTimeout(resolve, 5));
      const second = client.callTool({ name: 'enrich', arguments: { domains: OTHER_THREE } });
      const answers = (await Promise.all([first, second])).map((result) => {
        expect((result as CallToolResult).isError).toBeFalsy();
        return check('enrich', 'beside', result as CallToolResult);
      });
      const bought = answers.reduce((n, a) => n + a.credits.charged, 0);
      expect(bought).toBe(4);
      expect(start - served.sandbox.balances().full).toBe(4);
      expect(answers.reduce((n, a) => n + a.results.length, 0)).toBe(4);
      const stopped = answers.filter((a) => a.incomplete);
      expect(stopped.length).toBeGreaterThan(0);
      for (const answer of stopped) {
        expect(answer.incomplete.reason).toBe('budget_exhausted');
        expect(answer.results.length + answer.incomplete.not_done.length).toBe(3);
      }
    } finally {
      served.sandbox.faults.clear();
    }
  });
});
