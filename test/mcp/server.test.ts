// `company-data mcp` driven by the SDK's own client, with main() in this process: its stdin and
// stdout are the two streams the client writes and reads, line by line as over stdio, against a
// loopback sandbox: every tool called, the caps counted through the sandbox's balance, the answer
// cap, invalid arguments, and a timeout that the ledger keeps as possibly charged. The built
// binary over real stdio (--sandbox): test/e2e/mcp.test.ts.
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import { runPiped } from '../helpers/in-process.js';
import { startMcp } from '../helpers/mcp-client.js';
import { type SandboxHandle, sandboxAndDirForTests } from '../helpers/sandbox.js';

const FREE = ['products', 'fields', 'account', 'spend'];
const PAID = ['enrich', 'search', 'breakdown', 'lookalike'];
const ALL = [...FREE, 'estimate', ...PAID];
const CAP = 100_000;

let sandbox: SandboxHandle;
let dir: string;
let next = 0;
const open: Array<{ client: Client; errors: Error[]; exit: Promise<number> }> = [];

sandboxAndDirForTests('cd-mcp-', { companies: 2000 }, (started, made) => {
  sandbox = started;
  dir = made;
});

afterEach(async () => {
  for (const { client, errors, exit } of open.splice(0)) {
    await client.close();
    // The client closed the server's stdin: the session ends, and main() with 0.
    expect(await exit).toBe(0);
    // Anything on stdout that is not a protocol message would have been a parse error here.
    expect(errors).toEqual([]);
  }
  sandbox.faults.clear();
});

/** A session of its own: config, cache and store in a fresh directory (or the store given). */
function stateOf(store?: string): Record<string, string> {
  const home = join(dir, `s${next++}`);
  return {
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
    COMPANY_DATA_STORE: store ?? join(home, 'store.db'),
  };
}

interface Session {
  client: Client;
}

async function connect(
  args: string[],
  env: Record<string, string> = {},
  global: string[] = ['--base-url', sandbox.url],
  now: () => number = Date.now,
): Promise<Session> {
  const { client, errors, exit } = await startMcp(
    [...global, 'mcp', ...args],
    {
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      ...stateOf(),
      ...env,
    },
    now,
  );
  open.push({ client, errors, exit });
  return { client };
}

type Result = Awaited<ReturnType<Client['callTool']>>;

/** The answer's structured content, read as JSON (its shape is checked by the client already). */
// biome-ignore lint/suspicious/noExplicitAny: a JSON answer, walked by the assertions
type Answer = Record<string, any>;

function structured(result: Result): Answer {
  return result.structuredContent as Answer;
}

function text(result: Result): string {
  return (result.content as Array<{ type: string; text: string }>)[0].text;
}

function balance(): number {
  return sandbox.balances().full;
}

function requestsTo(path: string): number {
  return sandbox.requests().filter((r) => r.path.startsWith(path)).length;
}

describe('read-only (no --allow-spend)', () => {
  it('initializes, lists every tool (the paid ones saying they are off), answers the free ones, and refuses a paid one with how to allow it', async () => {
    const { client } = await connect([]);
    expect(client.getServerVersion()?.name).toBe('company-data');
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(ALL);
    for (const tool of tools) {
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(!PAID.includes(tool.name));
      expect(tool.description?.startsWith('OFF on this server'), tool.name).toBe(!FREE.includes(tool.name));
    }

    const products = await client.callTool({ name: 'products', arguments: {} });
    expect(products.isError).toBeUndefined();
    expect(structured(products).products.map((p: { id: string }) => p.id)).toContain('profile');

    const facets = await client.callTool({ name: 'fields', arguments: { facets: true } });
    const names = structured(facets).fields.map((f: { name: string }) => f.name);
    expect(names).toContain('country');
    expect(structured(facets).fields.every((f: { facet: boolean }) => f.facet)).toBe(true);

    const account = await client.callTool({ name: 'account', arguments: {} });
    expect(structured(account).account).toMatchObject({ plan: 'pro', balance: balance() });

    const spend = await client.callTool({ name: 'spend', arguments: {} });
    expect(structured(spend)).toMatchObject({ since: null, by: 'month', rows: [] });

    const before = requestsTo('/api/search');
    const refused = await client.callTool({ name: 'search', arguments: { query: 'shoes' } });
    expect(refused.isError).toBe(true);
    expect(structured(refused).error.code).toBe('spending_not_allowed');
    expect(text(refused)).toContain('--allow-spend');
    expect(requestsTo('/api/search')).toBe(before);
  });

  it('refuses --confirm-above without --allow-spend, before serving', async () => {
    const { code, stdout, stderr } = await runPiped(
      ['--base-url', sandbox.url, 'mcp', '--confirm-above', '3'],
      {
        env: { COMPANY_DATA_API_KEY: sandbox.keys.full, ...stateOf() },
      },
    );
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(JSON.parse(stderr)).toEqual({
      code: 'usage_error',
      status: 0,
      title: 'Usage error',
      detail: '--confirm-above asks before a paid call, and the paid tools are off without --allow-spend',
      retryable: false,
      hint: 'Add --allow-spend <n> to let the server spend, or drop --confirm-above.',
    });
  });
});

describe('spending (--allow-spend)', () => {
  it('lists every tool with 2020-12 input schemas, estimates, charges each paid call, projects and caps answers, and refuses invalid arguments', async () => {
    const { client } = await connect(['--allow-spend', '100']);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(ALL);
    for (const tool of tools) {
      const paid = ['enrich', 'search', 'breakdown', 'lookalike'].includes(tool.name);
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(!paid);
      // Every input schema compiles as JSON Schema draft 2020-12, in strict mode.
      const ajv = new Ajv2020({ strict: true });
      expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow();
    }

    const estimate = await client.callTool({
      name: 'estimate',
      arguments: { tool: 'enrich', arguments: { domains: ['acme-shoes.com', 'https://www.globex.io/'] } },
    });
    const worst = structured(estimate).worst_case_credits;
    expect(structured(estimate)).toEqual({
      tool: 'enrich',
      requests: 2,
      worst_case_credits: worst,
      caps: { session: { cap: 100, left: 100 }, month: null },
      room: { credits: 100, limited_by: 'session', balance: balance() },
      fits: true,
      confirmation: { needed: false, how: 'none' },
    });
    expect(worst).toBeGreaterThanOrEqual(2);

    let spent = 0;
    const answers: Record<string, Answer> = {};
    for (const [name, args] of [
      ['enrich', { domains: ['acme-shoes.com'], include: ['country'] }],
      ['search', { query: 'shoes', include: ['company_name'], limit: 3 }],
      ['breakdown', { field: 'country', query: 'shoes', limit: 3 }],
      ['lookalike', { seeds: ['acme-shoes.com', 'globex.io'], k: 3 }],
      ['search', { limit: 1000 }],
    ] as const) {
      const start = balance();
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, `${name}: ${text(result)}`).toBeUndefined();
      expect(text(result).length, name).toBeLessThanOrEqual(CAP);
      const credits = structured(result).credits;
      expect(credits.charged, name).toBe(start - balance());
      spent += credits.charged;
      expect(credits.caps.session, name).toEqual({ cap: 100, left: 100 - spent });
      expect(text(result), name).toContain(`${100 - spent} of --allow-spend 100 left this session`);
      const large = name === 'search' && 'limit' in args && args.limit === 1000;
      answers[large ? 'large' : name] = structured(result);
      if (large) answers.largeContent = result.content as Answer;
    }
    expect(spent).toBeGreaterThanOrEqual(4);

    // Projected to the fields asked for.
    expect(Object.keys(answers.enrich.results[0])).toEqual([
      'domain',
      'found',
      'credits_charged',
      'bought_at',
      'country',
    ]);
    expect(answers.search.rows).toHaveLength(3);
    for (const row of answers.search.rows) expect(Object.keys(row)).toEqual(['domain', 'company_name']);
    expect(answers.breakdown.field).toBe('country');
    expect(answers.breakdown.buckets).toHaveLength(3);
    expect(answers.lookalike.results).toHaveLength(3);
    expect(answers.lookalike.seeds.map((s: Answer) => s.status)).toEqual(['found', 'found']);

    // A large search: whole rows within 100,000 characters, and how many more and how to get them.
    const large = answers.large;
    expect(JSON.stringify(large).length).toBeLessThanOrEqual(CAP);
    expect(large.truncated.rows_omitted).toBeGreaterThan(0);
    expect(large.truncated.rows_shown + large.truncated.rows_omitted).toBe(1000);
    expect(large.rows).toHaveLength(large.truncated.rows_shown);
    for (const row of large.rows) expect(typeof row.domain).toBe('string');
    expect(large.truncated.how_to_get_more).toBe(
      `The answer is capped at 100,000 characters: ${large.truncated.rows_omitted} more rows were left out. Ask for fewer fields (include) or fewer rows (limit), or have the user run \`company-data search --limit 1000 -o csv > rows.csv\` to get them all in a file. The whole answer is kept for this session as the resource company-data://answers/1 (resources/read), at no cost.`,
    );
    expect(large.truncated.resource_uri).toBe('company-data://answers/1');
    // The cut answer links to the whole one, which the session gives back without buying it again.
    expect(answers.largeContent[1]).toEqual({
      type: 'resource_link',
      uri: 'company-data://answers/1',
      name: 'search answer 1',
      mimeType: 'application/json',
      description: expect.stringMatching(
        /^The whole answer of a search call at \d{4}-\d\d-\d\dT[\d:]{8}Z, as JSON$/,
      ),
    });
    const beforeRead = balance();
    const { contents } = await client.readResource({ uri: 'company-data://answers/1' });
    const whole = JSON.parse((contents[0] as { text: string }).text);
    expect(whole.rows).toHaveLength(1000);
    expect(whole.rows.slice(0, large.rows.length)).toEqual(large.rows);
    expect(whole.truncated).toBeUndefined();
    expect(balance()).toBe(beforeRead);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['company-data://answers/1']);
    await expect(client.readResource({ uri: 'company-data://answers/9' })).rejects.toThrow(
      'company-data://answers/9: no such answer in this session',
    );

    // Invalid arguments: tool errors with the problem's code, title and remedy; nothing charged.
    const before = balance();
    const empty = await client.callTool({ name: 'enrich', arguments: { domains: [] } });
    expect(empty.isError).toBe(true);
    expect(structured(empty).error).toMatchObject({ code: 'usage_error', title: 'Invalid arguments' });
    expect(structured(empty).error.detail).toBe(
      'enrich: domains: Too small: expected array to have >=1 items',
    );
    expect(structured(empty).error.remedy).toContain('input schema of enrich');
    const wrongType = await client.callTool({ name: 'search', arguments: { limit: 'ten' } });
    expect(structured(wrongType).error.detail).toContain('limit');
    const filter = await client.callTool({ name: 'search', arguments: { filters: { colour: ['red'] } } });
    expect(filter.isError).toBe(true);
    expect(structured(filter).error.code).toBe('usage_error');
    expect(structured(filter).error.detail).toContain('colour');
    const notADomain = await client.callTool({ name: 'enrich', arguments: { domains: ['not a domain'] } });
    expect(structured(notADomain).error.code).toBe('invalid_domain');
    const facet = await client.callTool({ name: 'breakdown', arguments: { field: 'company_name' } });
    expect(facet.isError).toBe(true);
    expect(balance()).toBe(before);
  });

  it('refuses calls past --allow-spend, at once or after, as tool errors naming the cap, counted through the balance', async () => {
    const { client } = await connect(['--allow-spend', '2']);
    const start = balance();
    const searches = requestsTo('/api/search');
    // Three at once against a cap of two: the session's one purse lets exactly two through.
    const results = await Promise.all(
      [1, 2, 3].map(() => client.callTool({ name: 'search', arguments: { query: 'shoes', limit: 1 } })),
    );
    const refusals = results.filter((r) => r.isError);
    expect(refusals).toHaveLength(1);
    expect(requestsTo('/api/search') - searches).toBe(2);
    const refused = refusals[0];
    expect(structured(refused).error.code).toBe('budget_exhausted');
    expect(structured(refused).caps).toEqual({ session: { cap: 2, left: 0 }, month: null });
    expect(text(refused)).toContain('--allow-spend 2 leaves no room for a request of up to 1 credit');
    expect(text(refused)).toContain('do not retry');
    expect(start - balance()).toBe(2);
    const again = await client.callTool({ name: 'breakdown', arguments: { field: 'country' } });
    expect(structured(again).error.code).toBe('budget_exhausted');
    expect(requestsTo('/api/search') - searches).toBe(2);
  });

  it('refuses a call past COMPANY_DATA_BUDGET_MONTH', async () => {
    const { client } = await connect(['--allow-spend', '10'], { COMPANY_DATA_BUDGET_MONTH: '1' });
    const start = balance();
    const ok = await client.callTool({ name: 'breakdown', arguments: { field: 'country' } });
    expect(ok.isError).toBeUndefined();
    expect(structured(ok).credits.caps.month).toEqual({ cap: 1, left: 0 });
    const refused = await client.callTool({ name: 'breakdown', arguments: { field: 'country' } });
    expect(refused.isError).toBe(true);
    expect(structured(refused).error.code).toBe('budget_exhausted');
    expect(text(refused)).toContain("more than the 0 credits the month's cap (--budget-month 1) leaves");
    expect(text(refused)).toContain('do not retry');
    expect(start - balance()).toBe(1);
  });

  it('refuses a call the balance cannot pay with insufficient_credits, saying not to retry', async () => {
    const { client } = await connect(['--allow-spend', '5'], { COMPANY_DATA_API_KEY: sandbox.keys.empty });
    const refused = await client.callTool({ name: 'lookalike', arguments: { seeds: ['acme-shoes.com'] } });
    expect(refused.isError).toBe(true);
    expect(structured(refused).error).toMatchObject({ code: 'insufficient_credits', status: 403 });
    expect(structured(refused).caps).toEqual({ session: { cap: 5, left: 5 }, month: null });
    expect(text(refused)).toContain('do not retry');
  });

  it('records a timed-out call as possibly charged in the ledger', async () => {
    const state = stateOf();
    const { client } = await connect(['--allow-spend', '5'], state, [
      '--base-url',
      sandbox.url,
      '--timeout',
      '1',
      '--retries',
      '0',
    ]);
    sandbox.faults.add('delay:2500', { path: '/api/search', times: 1 });
    const result = await client.callTool({ name: 'search', arguments: { query: 'shoes' } });
    expect(result.isError).toBe(true);
    expect(structured(result).error.code).toBe('timeout');
    expect(structured(result).caps.session).toEqual({ cap: 5, left: 4 });
    const spend = await runPiped(['spend', '-o', 'json'], { env: state });
    expect(JSON.parse(spend.stdout).total).toMatchObject({ charged: 0, possibly_charged: 1 });
  });

  it('refuses an expired confirmation token, buying nothing', async () => {
    let skew = 0;
    const { client } = await connect(
      ['--allow-spend', '10', '--confirm-above', '0'],
      {},
      undefined,
      () => Date.now() + skew,
    );
    const start = balance();
    const asked = await client.callTool({ name: 'breakdown', arguments: { field: 'country' } });
    expect(structured(asked).error.code).toBe('confirmation_required');
    const { token, expires_at } = structured(asked).confirmation;
    skew = Date.parse(expires_at) - Date.now();
    const expired = await client.callTool({
      name: 'breakdown',
      arguments: { field: 'country', confirmation: token },
    });
    expect(expired.isError).toBe(true);
    expect(structured(expired).error.code).toBe('confirmation_required');
    expect(structured(expired).error.detail).toContain(
      'the confirmation token expired (tokens last 10 minutes)',
    );
    expect(balance()).toBe(start);
    // The fresh token it carries buys.
    const fresh = structured(expired).confirmation.token;
    const bought = await client.callTool({
      name: 'breakdown',
      arguments: { field: 'country', confirmation: fresh },
    });
    expect(bought.isError, text(bought)).toBeUndefined();
    expect(start - balance()).toBe(1);
  });
});
