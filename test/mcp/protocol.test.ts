// The built server (dist/) under the SDK's 2.x client at every protocol version it serves:
// 2026-07-28 opens with server/discover, 2025-11-25 and 2025-06-18 with initialize. Every tool is
// listed (the paid ones too on a read-only server, saying how to turn them on), every input schema
// compiles as JSON Schema 2020-12, and every answer, success or tool error, validates against its
// tool's outputSchema. Then the raw wire: -32700, -32600, -32602, and server/discover's answer.
import type { CallToolResult } from '@modelcontextprotocol/client';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { startCli } from '../helpers/cli.js';
import { type Answer, builtServerForTests, PROTOCOLS, validator } from '../helpers/mcp-built.js';

const TOOLS = [
  'products',
  'fields',
  'account',
  'spend',
  'estimate',
  'enrich',
  'search',
  'breakdown',
  'lookalike',
];
const PAID = ['enrich', 'search', 'breakdown', 'lookalike'];

const served = builtServerForTests('cd-mcp-protocol-');

describe.each(PROTOCOLS)('protocol %s', (protocol) => {
  it('opens as the version says, lists every tool, and every answer validates against its outputSchema', async () => {
    const session = await served.start(['mcp', '--allow-spend', '10', '--confirm-above', '3'], { protocol });
    const { client, sent } = session;
    expect(sent[0]).toBe(protocol === '2026-07-28' ? 'server/discover' : 'initialize');
    expect(client.getNegotiatedProtocolVersion()).toBe(protocol);
    expect(client.getServerVersion()?.name).toBe('company-data');
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toContain('estimate tells what a call');

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    const strict = new Ajv2020({ strict: true });
    for (const tool of tools) {
      expect(() => strict.compile(tool.inputSchema), tool.name).not.toThrow();
      const paid = PAID.includes(tool.name);
      expect(tool.annotations, tool.name).toMatchObject({
        readOnlyHint: !paid,
        openWorldHint: !['spend', 'estimate'].includes(tool.name),
      });
      if (paid) {
        expect(tool.description, tool.name).toContain(' Price: ');
        expect(tool.description, tool.name).toContain('Call estimate first');
        expect(tool.description, tool.name).toContain(
          'This session may spend 10 credits in all (--allow-spend)',
        );
        expect(tool.description, tool.name).toContain(
          'above 3 credits asks the user first (--confirm-above)',
        );
      }
    }
    expect(tools.find((t) => t.name === 'enrich')?.description).toContain(
      'Price: per domain found, the credit units of each product asked for that returns data (profile 1 credit (default), tech 1 credit, leads 5 credits); with the default products at most 1 credit per domain.',
    );

    const answers = validator(tools);
    const call = async (name: string, args: Record<string, unknown>, label = name) => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      return { result, answer: answers.check(name, label, result) };
    };
    await call('products', {});
    await call('fields', { facets: true });
    await call('account', {});
    await call('spend', {});
    const fits = await call(
      'estimate',
      { tool: 'lookalike', arguments: { seeds: ['acme-shoes.com'] } },
      'estimate: fits',
    );
    expect(fits.answer).toMatchObject({ fits: true, confirmation: { needed: false, how: 'none' } });
    const tooMuch = await call(
      'estimate',
      { tool: 'enrich', arguments: { domains: Array.from({ length: 11 }, (_, i) => `d${i}.com`) } },
      'estimate: does not fit',
    );
    expect(tooMuch.answer).toMatchObject({
      fits: false,
      would_fit: { count: 10 },
      room: { limited_by: 'session' },
    });
    const start = served.sandbox.balances().full;
    let charged = 0;
    for (const [name, args] of [
      ['enrich', { domains: ['acme-shoes.com'], include: ['country'] }],
      ['search', { query: 'shoes', limit: 2 }],
      ['breakdown', { field: 'country', limit: 2 }],
      ['lookalike', { seeds: ['globex.io'], k: 2 }],
    ] as const) {
      const { result, answer } = await call(name, args);
      expect(result.isError, name).toBeFalsy();
      expect(result._meta?.['company-data/credits'], name).toEqual(answer.credits);
      charged += answer.credits.charged;
    }
    // An answer cut at 100,000 characters links to the whole one, kept for the session.
    const large = await call('search', { limit: 1000 }, 'search: cut');
    charged += large.answer.credits.charged;
    expect(start - served.sandbox.balances().full).toBe(charged);
    const link = large.result.content.find((block) => block.type === 'resource_link');
    expect(link).toMatchObject({ uri: large.answer.truncated.resource_uri, mimeType: 'application/json' });
    const read = await client.readResource({ uri: large.answer.truncated.resource_uri });
    expect(JSON.parse((read.contents[0] as { text: string }).text).rows).toHaveLength(1000);
    expect(start - served.sandbox.balances().full).toBe(charged);
    // Tool errors validate too: invalid arguments, a call above --confirm-above, one that does not fit.
    const invalid = await call('search', { limit: 'ten' }, 'invalid arguments');
    expect(invalid.answer.error.code).toBe('usage_error');
    const confirm = await call(
      'enrich',
      { domains: ['umbrella-health.de', 'initech.co.uk', 'a.com', 'b.com'] },
      'confirmation',
    );
    expect(confirm.answer.error.code).toBe('confirmation_required');
    expect(confirm.result._meta?.['company-data/credits']).toEqual({ charged: 0 });
    const over = await call(
      'lookalike',
      { seeds: ['acme-shoes.com', 'globex.io', 'initech.co.uk', 'x.com', 'y.com', 'z.com'] },
      'over',
    );
    expect(over.answer.error.code).toBe('budget_exhausted');
    expect(answers.seen).toHaveLength(14);
  });

  it('sends progress for a call with a progressToken', async () => {
    const { client } = await served.start(['mcp', '--allow-spend', '5'], { protocol });
    const seen: Array<{ progress: number; total?: number }> = [];
    const result = (await client.callTool(
      { name: 'enrich', arguments: { domains: ['acme-shoes.com', 'globex.io'] } },
      { onprogress: ({ progress, total }) => seen.push({ progress, total }) },
    )) as CallToolResult;
    expect(result.isError).toBeFalsy();
    // One before each domain (src/ops/enrich.ts).
    expect(seen).toEqual([0, 1].map((progress) => ({ progress, total: 2 })));
  });

  it('read-only: lists the paid tools saying how to turn them on, and refuses them with that advice', async () => {
    const session = await served.start(['mcp'], { protocol });
    const { client } = session;
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    for (const tool of tools.filter((t) => [...PAID, 'estimate'].includes(t.name))) {
      expect(tool.description, tool.name).toMatch(/^OFF on this server, which was started read-only: /);
      expect(tool.description, tool.name).toContain('--allow-spend 50');
    }
    const answers = validator(tools);
    const before = served.sandbox.requests().length;
    for (const name of [...PAID, 'estimate']) {
      const result = (await client.callTool({ name, arguments: {} })) as CallToolResult;
      expect(result.isError, name).toBe(true);
      const answer = answers.check(name, name, result);
      expect(answer.error.code, name).toBe('spending_not_allowed');
      expect(answer.error.remedy, name).toContain('--allow-spend 50');
    }
    expect(served.sandbox.requests().length).toBe(before);
  });
});

/** The built server over raw stdio: lines written, answers read as they come. */
async function raw(args: string[], lines: string[], answers: number): Promise<Answer[]> {
  const started = startCli(['--base-url', served.sandbox.url, ...args], { input: 'open', env: served.env() });
  for (const line of lines) started.child.stdin?.write(`${line}\n`);
  await new Promise<void>((resolve) => {
    const check = () => {
      if (started.output().stdout.split('\n').filter(Boolean).length >= answers) {
        started.child.stdout?.off('data', check);
        resolve();
      }
    };
    started.child.stdout?.on('data', check);
    check();
  });
  started.child.stdin?.end();
  const { code, stdout } = await started.done;
  expect(code).toBe(0);
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

describe('the wire', () => {
  it('2025: -32700 for a line cut off, -32600 for JSON that is no message, -32602 for malformed params', async () => {
    const answers = await raw(
      ['mcp'],
      [
        INITIALIZE,
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"account","argu',
        '[1,2]',
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"account","arguments":"{}"}}',
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}',
        '{"jsonrpc":"2.0","id":4,"method":"tools/call"}',
        '{"jsonrpc":"2.0","id":5,"method":"server/discover"}',
      ],
      7,
    );
    const byId = (id: unknown) => answers.filter((a) => a.id === id);
    expect(byId(0)[0].result.protocolVersion).toBe('2025-11-25');
    expect(byId(null).map((a) => a.error.code)).toEqual([-32700, -32600]);
    for (const id of [2, 3, 4]) expect(byId(id)[0].error.code, `id ${id}`).toBe(-32602);
    // A connection opened with initialize is a 2025 one for its life.
    expect(byId(5)[0].error.code).toBe(-32601);
  });

  it('2026-07-28: server/discover answers, and malformed params are -32602', async () => {
    const answers = await raw(
      ['mcp', '--allow-spend', '5'],
      [
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: ENVELOPE } }),
        JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { _meta: ENVELOPE, name: 5 } }),
        JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { _meta: ENVELOPE, name: 'account', arguments: 'x' },
        }),
        '{"jsonrpc":"2.0","id":4,"method":',
      ],
      4,
    );
    const byId = (id: unknown): Answer => answers.find((a) => a.id === id) ?? {};
    expect(byId(1).result).toMatchObject({
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: { listChanged: false } },
    });
    expect(byId(1).result.instructions).toContain('estimate');
    expect(byId(2).error.code).toBe(-32602);
    expect(byId(3).error.code).toBe(-32602);
    expect(byId(null).error.code).toBe(-32700);
  });
});
