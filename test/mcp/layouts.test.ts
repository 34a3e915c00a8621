// The MCP tools against every sandbox layout (src/sandbox/layouts.ts): each tool gives the same
// answer, text and structured content, as on `flat`, and the sandbox's balance falls by the same
// credits. One session per layout, the same calls in the same order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LayoutName } from '../../src/sandbox/layouts.js';
import { startMcp } from '../helpers/mcp-client.js';
import { startTestSandbox } from '../helpers/sandbox.js';

const CALLS: Array<{ name: string; arguments: Record<string, unknown> }> = [
  { name: 'products', arguments: {} },
  { name: 'fields', arguments: { facets: true } },
  { name: 'fields', arguments: { filters: true } },
  { name: 'account', arguments: {} },
  { name: 'enrich', arguments: { domains: ['acme-shoes.com', 'no-such-company.example'] } },
  {
    name: 'enrich',
    arguments: { domains: ['globex.io'], products: ['profile', 'tech'], include: ['company_name', 'tech'] },
  },
  { name: 'search', arguments: { query: 'shoes', limit: 5 } },
  { name: 'search', arguments: { query: 'zzzqqq' } },
  { name: 'breakdown', arguments: { field: 'country', query: 'shoes', limit: 3 } },
  { name: 'lookalike', arguments: { seeds: ['acme-shoes.com'], k: 3 } },
  { name: 'lookalike', arguments: { seeds: ['lonely-seed.com'] } },
  { name: 'spend', arguments: {} },
];

interface Seen {
  answers: unknown[];
  taken: number;
}

async function session(layout: LayoutName): Promise<Seen> {
  const sandbox = await startTestSandbox({ layout });
  const dir = mkdtempSync(join(tmpdir(), 'cd-mcp-layout-'));
  try {
    const { client, errors, exit } = await startMcp(
      ['--base-url', sandbox.url, 'mcp', '--allow-spend', '100'],
      {
        COMPANY_DATA_API_KEY: sandbox.keys.full,
        XDG_CONFIG_HOME: join(dir, 'config'),
        XDG_CACHE_HOME: join(dir, 'cache'),
        COMPANY_DATA_STORE: join(dir, 'store.db'),
      },
    );
    const answers: unknown[] = [];
    for (const call of CALLS) {
      const result = await client.callTool(call);
      answers.push({
        call: call.name,
        isError: result.isError ?? false,
        content: result.content,
        structured: result.structuredContent,
      });
    }
    await client.close();
    expect(await exit).toBe(0);
    expect(errors).toEqual([]);
    return { answers, taken: 1_000_000 - sandbox.balances().full };
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the MCP tools on every sandbox layout', () => {
  it('answer as on flat, and the sandbox takes the same credits', async () => {
    const flat = await session('flat');
    // Something was bought and every answer succeeded, so the comparison is not of empty sessions.
    expect(flat.taken).toBeGreaterThan(0);
    expect(flat.answers.filter((a) => (a as { isError: boolean }).isError)).toEqual([]);
    for (const layout of ['grouped', 'enveloped', 'metered'] as const) {
      const other = await session(layout);
      expect({ layout, ...other }).toEqual({ layout, ...flat });
    }
  });
});
