// A person in the loop before credits are spent, through the built server (dist/) and the SDK's
// 2.x client, under 2026-07-28 (input_required) and 2025-11-25 (elicitation/create): an accepted
// confirmation buys, a declined one buys nothing; without elicitation, a call without the token
// buys nothing, one with it buys once, and a token reused, altered or issued for another call buys
// nothing; a call whose worst case does not fit what is left buys nothing and says what would
// fit. Every purchase is counted through the sandbox's balance and its requests.
import type { CallToolResult } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import {
  type Answer,
  type BuiltOptions,
  type BuiltSession,
  builtServerForTests,
  type ProtocolVersion,
  validator,
} from '../helpers/mcp-built.js';

const served = builtServerForTests('cd-mcp-confirm-');

/** Three showcase domains, all found: each costs 1 credit with the default products. */
const THREE = ['acme-shoes.com', 'globex.io', 'initech.co.uk'];

async function start(
  protocol: ProtocolVersion,
  args: string[],
  answer?: BuiltOptions['answer'],
): Promise<BuiltSession> {
  const session = await served.start(['mcp', ...args], { protocol, answer });
  // Every answer of the session is checked against the outputSchema its tool was listed with.
  const { tools } = await session.client.listTools();
  check = validator(tools).check;
  const callTool = session.client.callTool.bind(session.client);
  session.client.callTool = (async (...args: Parameters<typeof callTool>) => {
    const result = (await callTool(...args)) as CallToolResult;
    nameOf.set(result, args[0].name);
    return result;
  }) as typeof callTool;
  return session;
}

/** The checker of the session under test: every answer is checked against its outputSchema. */
let check: ReturnType<typeof validator>['check'] | undefined;

function structured(result: CallToolResult): Answer {
  expect(check, 'tools listed before calls').toBeDefined();
  return check?.(nameOf.get(result) ?? '', 'answer', result) ?? {};
}

/** The tool each result came from. */
const nameOf = new WeakMap<CallToolResult, string>();

function text(result: CallToolResult): string {
  return (result.content as Array<{ type: string; text: string }>)[0].text;
}

function balance(): number {
  return served.sandbox.balances().full;
}

function lookups(): number {
  return served.sandbox.requests().filter((r) => r.path.startsWith('/api/domains/')).length;
}

describe.each(['2026-07-28', '2025-11-25'] as const)('confirmation under %s', (protocol) => {
  it('with elicitation: an accepted confirmation buys once, a declined or dismissed one buys nothing', async () => {
    const answers = [
      { action: 'decline' as const },
      { action: 'cancel' as const },
      { action: 'accept' as const, content: { confirm: false } },
      { action: 'accept' as const, content: { confirm: true } },
    ];
    const session = await start(protocol, ['--allow-spend', '20', '--confirm-above', '2'], () => {
      const next = answers.shift();
      if (!next) throw new Error('asked more often than the test answers');
      return next;
    });
    const { client, questions } = session;
    expect(client.getNegotiatedProtocolVersion()).toBe(protocol);
    const start0 = balance();
    const sent0 = lookups();
    for (const expected of [
      'The user declined: enrich 3 domains',
      'The user dismissed the question: enrich 3 domains',
      'The user declined: enrich 3 domains',
    ]) {
      const refused = (await client.callTool({
        name: 'enrich',
        arguments: { domains: THREE },
      })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(structured(refused).error.code).toBe('confirmation_declined');
      expect(structured(refused).error.detail).toContain(expected);
      expect(refused._meta?.['company-data/credits']).toEqual({ charged: 0 });
    }
    expect(balance()).toBe(start0);
    expect(lookups()).toBe(sent0);

    const bought = (await client.callTool({
      name: 'enrich',
      arguments: { domains: THREE },
    })) as CallToolResult;
    expect(bought.isError, text(bought)).toBeFalsy();
    expect(structured(bought).credits.charged).toBe(3);
    expect(start0 - balance()).toBe(3);
    expect(lookups() - sent0).toBe(3);
    expect(bought._meta?.['company-data/credits']).toEqual(structured(bought).credits);

    // One question per call, saying what it buys, the worst case and what is left.
    expect(questions).toHaveLength(4);
    expect(questions[0]).toMatchObject({
      mode: 'form',
      message:
        'An AI agent asks company-data to enrich 3 domains (acme-shoes.com, globex.io, initech.co.uk) with the default products: up to 3 credits (3 requests of up to 1 credit). 20 of --allow-spend 20 left this session; the balance is ' +
        `${start0.toLocaleString('en-US')} credits. Spend up to 3 credits?`,
      requestedSchema: {
        type: 'object',
        properties: { confirm: { type: 'boolean', title: 'Spend up to 3 credits' } },
        required: ['confirm'],
      },
    });

    // At or below --confirm-above nothing is asked.
    const cheap = (await client.callTool({
      name: 'enrich',
      arguments: { domains: ['umbrella-health.de'] },
    })) as CallToolResult;
    expect(cheap.isError).toBeFalsy();
    expect(questions).toHaveLength(4);

    // estimate says the call will ask, and issues no token a client that can ask could use instead.
    const estimate = (await client.callTool({
      name: 'estimate',
      arguments: { tool: 'enrich', arguments: { domains: THREE } },
    })) as CallToolResult;
    expect(structured(estimate).confirmation).toEqual({ needed: true, how: 'elicitation' });
    expect(questions).toHaveLength(4);
  });

  it('without elicitation: no token buys nothing, a valid token buys once, a reused or altered one buys nothing', async () => {
    const { client } = await start(protocol, ['--allow-spend', '20', '--confirm-above', '1']);
    const start0 = balance();
    const sent0 = lookups();
    const call = { name: 'enrich', arguments: { domains: THREE, include: ['country'] } };

    const asked = (await client.callTool(call)) as CallToolResult;
    expect(asked.isError).toBe(true);
    expect(structured(asked).error.code).toBe('confirmation_required');
    expect(structured(asked).error.detail).toBe(
      'enrich 3 domains (acme-shoes.com, globex.io, initech.co.uk) with the default products: up to 3 credits (3 requests of up to 1 credit), above --confirm-above 1; nothing was sent',
    );
    const { token, worst_case_credits, tool } = structured(asked).confirmation;
    expect({ tool, worst_case_credits }).toEqual({ tool: 'enrich', worst_case_credits: 3 });
    expect(text(asked)).toContain(`"confirmation": "${token}"`);
    expect(text(asked)).toContain("Never confirm on the user's behalf.");
    expect(balance()).toBe(start0);
    expect(lookups()).toBe(sent0);

    // The token of another call (one domain less) does not buy this one.
    const other = (await client.callTool({
      name: 'enrich',
      arguments: { domains: THREE.slice(0, 2), include: ['country'], confirmation: token },
    })) as CallToolResult;
    expect(structured(other).error.code).toBe('confirmation_required');
    expect(structured(other).error.detail).toContain('the confirmation token was issued for another call');
    // An altered token does not either.
    const [body, mac] = token.split('.');
    const altered = `${body}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`;
    const forged = (await client.callTool({
      name: 'enrich',
      arguments: { ...call.arguments, confirmation: altered },
    })) as CallToolResult;
    expect(structured(forged).error.code).toBe('confirmation_required');
    expect(structured(forged).error.detail).toContain('the confirmation token was altered');
    expect(balance()).toBe(start0);
    expect(lookups()).toBe(sent0);

    // The token buys the call it was issued for (arguments in another order, a domain as a URL).
    const bought = (await client.callTool({
      name: 'enrich',
      arguments: {
        include: ['country'],
        domains: ['https://www.acme-shoes.com/', ...THREE.slice(1)],
        confirmation: token,
      },
    })) as CallToolResult;
    expect(bought.isError, text(bought)).toBeFalsy();
    expect(start0 - balance()).toBe(3);
    expect(lookups() - sent0).toBe(3);

    // Once.
    const again = (await client.callTool({
      name: 'enrich',
      arguments: { ...call.arguments, confirmation: token },
    })) as CallToolResult;
    expect(structured(again).error.code).toBe('confirmation_required');
    expect(structured(again).error.detail).toContain('the confirmation token was used already');
    expect(start0 - balance()).toBe(3);
    expect(lookups() - sent0).toBe(3);
  });

  it('estimate issues the token a client without elicitation carries', async () => {
    const { client } = await start(protocol, ['--allow-spend', '20', '--confirm-above', '0']);
    const start0 = balance();
    const estimate = (await client.callTool({
      name: 'estimate',
      arguments: { tool: 'search', arguments: { query: 'shoes', limit: 3 } },
    })) as CallToolResult;
    const { confirmation } = structured(estimate);
    expect(confirmation).toMatchObject({ needed: true, how: 'token' });
    const bought = (await client.callTool({
      name: 'search',
      arguments: { query: 'shoes', limit: 3, confirmation: confirmation.token },
    })) as CallToolResult;
    expect(bought.isError, text(bought)).toBeFalsy();
    expect(start0 - balance()).toBe(1);
  });

  it('refuses a call whose worst case does not fit what is left, saying what would fit', async () => {
    const { client } = await start(protocol, ['--allow-spend', '2']);
    const start0 = balance();
    const sent0 = lookups();
    const refused = (await client.callTool({
      name: 'enrich',
      arguments: { domains: THREE },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(structured(refused).error).toMatchObject({
      code: 'budget_exhausted',
      title: 'Call does not fit what is left',
      detail:
        "enrich 3 domains (acme-shoes.com, globex.io, initech.co.uk) with the default products: up to 3 credits (3 requests of up to 1 credit), more than the 2 credits this session's cap (--allow-spend 2) leaves; nothing was sent",
    });
    expect(structured(refused).error.remedy).toMatch(
      /^The first 2 domains fit \(acme-shoes\.com, globex\.io\), up to 2 credits: call enrich with those, or tell the user; do not retry as is/,
    );
    expect(structured(refused).would_fit).toEqual({
      count: 2,
      arguments: { domains: ['acme-shoes.com', 'globex.io'] },
    });
    expect(balance()).toBe(start0);
    expect(lookups()).toBe(sent0);

    // What would fit does.
    const fits = (await client.callTool({
      name: 'enrich',
      arguments: structured(refused).would_fit.arguments,
    })) as CallToolResult;
    expect(fits.isError, text(fits)).toBeFalsy();
    expect(start0 - balance()).toBe(2);

    // Now nothing fits, and the search says so before sending.
    const searches = served.sandbox.requests().filter((r) => r.path === '/api/search').length;
    const none = (await client.callTool({ name: 'search', arguments: { query: 'shoes' } })) as CallToolResult;
    expect(structured(none).error.code).toBe('budget_exhausted');
    expect(structured(none).would_fit).toEqual({ count: 0, arguments: null });
    expect(structured(none).error.remedy).toMatch(
      /^Nothing fits: one request can cost up to 1 credit and 0 credits are left: do not retry/,
    );
    expect(served.sandbox.requests().filter((r) => r.path === '/api/search').length).toBe(searches);
  });
});
