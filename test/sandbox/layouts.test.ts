// The sandbox's layouts (src/sandbox/layouts.ts) over real HTTP: each follows the rules the spec
// fixes (found at the top level, nothing charged for a missing domain, problem+json, the error
// catalog as published) and chooses differently where it is open; the balance falls by exactly
// what each answer reports in its credit headers (and in `metered`, in its body), whatever the
// layout prices.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAYOUT_NAMES, type LayoutName } from '../../src/sandbox/layouts.js';
import { type CallResult, call, type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

const HEADERS: Record<LayoutName, [string, string]> = {
  flat: ['x-credits-charged', 'x-credits-remaining'],
  grouped: ['x-credits-used', 'x-credits-balance'],
  enveloped: ['x-credit-cost', 'x-credit-balance'],
  metered: ['x-usage-cost', 'x-account-balance'],
};

const sandboxes = new Map<LayoutName, SandboxHandle>();
beforeAll(async () => {
  for (const layout of LAYOUT_NAMES) sandboxes.set(layout, await startTestSandbox({ layout }));
});
afterAll(async () => {
  for (const sandbox of sandboxes.values()) await sandbox.close();
});

/** Every answer's charge and balance as its headers say, checked against the sandbox's balance. */
async function charged(
  layout: LayoutName,
  path: string,
  query: Record<string, string> = {},
): Promise<CallResult> {
  const sandbox = sandboxes.get(layout)!;
  const before = sandbox.balances().full;
  const answer = await call(sandbox.url, path, { key: sandbox.keys.full, query });
  const [cost, left] = HEADERS[layout];
  const taken = before - sandbox.balances().full;
  expect({ layout, path, charged: answer.headers[cost], remaining: answer.headers[left] }).toEqual({
    layout,
    path,
    charged: String(taken),
    remaining: String(sandbox.balances().full),
  });
  // The account is never charged: its body carries no usage.
  if (layout === 'metered' && path !== '/api/me')
    expect(answer.json?.usage).toEqual({ cost: taken, balance: sandbox.balances().full });
  return answer;
}

describe.each(LAYOUT_NAMES)('layout %s', (layout) => {
  it('a found record costs what the products returned; a missing domain costs nothing and says found false', async () => {
    const found = await charged(layout, '/api/domains/acme-shoes.com', { products: 'profile,tech' });
    expect(found.status).toBe(200);
    expect(found.json?.found).toBe(true);
    expect(found.headers[HEADERS[layout][0]]).toBe('2');
    const missing = await charged(layout, '/api/domains/no-such-company.example');
    expect(missing.json).toMatchObject({ found: false });
    expect(missing.headers[HEADERS[layout][0]]).toBe('0');
  });

  it('searches, breakdowns and lookalikes are charged as their headers say', async () => {
    const page = await charged(layout, '/api/search', { query: 'shoes', limit: '1000' });
    const rows = (page.json?.rows ?? page.json?.hits ?? page.json?.data) as unknown[];
    expect(rows.length).toBe({ flat: 125, grouped: 10, enveloped: 100, metered: 100 }[layout]);
    // metered prices a search by rows: a credit for every 50 started.
    expect(page.headers[HEADERS[layout][0]]).toBe(layout === 'metered' ? '2' : '1');
    const empty = await charged(layout, '/api/search', { query: 'zzzqqq' });
    expect(empty.headers[HEADERS[layout][0]]).toBe('0');
    await charged(layout, '/api/search', { query: 'shoes', breakdown: 'country' });
    const lookalike = await charged(layout, '/api/lookalike/acme-shoes.com', { k: '3' });
    expect(lookalike.json?.found).toBe(true);
    const none = await charged(layout, '/api/lookalike/lonely-seed.com');
    expect(none.json).toMatchObject({ found: false, code: 'lookalike_not_available' });
    await charged(layout, '/api/me');
  });

  it('problems and the error catalog keep the spec’s shapes', async () => {
    const sandbox = sandboxes.get(layout)!;
    const problem = await call(sandbox.url, '/api/domains/acme-shoes.com', {
      key: sandbox.keys.full,
      query: { include: 'company_nme' },
    });
    expect(problem.status).toBe(400);
    expect(problem.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(problem.json).toMatchObject({ code: 'invalid_field', status: 400 });
    const errors = await call(sandbox.url, '/api/errors');
    expect(Object.keys(errors.json ?? {})).toEqual(['contract_version', 'content_type', 'errors']);
  });
});

it('the request log counts each request once, on every layout', () => {
  for (const [layout, sandbox] of sandboxes) {
    const logged = sandbox.requests().filter((r) => r.path.startsWith('/api/'));
    expect({ layout, statuses: logged.every((r) => r.status !== null) }).toEqual({ layout, statuses: true });
    expect({ layout, count: logged.length }).toEqual({ layout, count: 10 });
  }
});
