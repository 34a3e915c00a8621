// `company-data mcp` as an MCP client starts it: the built CLI spawned by the SDK's own client over
// real stdio, serving its in-process sandbox; nothing but protocol messages on its stdout. The
// tools, caps, answers and errors, with main() in the test's process: test/mcp/server.test.ts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpClient } from '../helpers/mcp-client.js';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cd-mcp-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('company-data --sandbox mcp', () => {
  it('serves the in-process sandbox to a client over stdio', async () => {
    const { client, transport, stderr } = mcpClient(['--sandbox', 'mcp', '--allow-spend', '3'], {
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      XDG_STATE_HOME: join(dir, 'state'),
    });
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    await client.connect(transport);
    expect(client.getServerVersion()?.name).toBe('company-data');
    const account = await client.callTool({ name: 'account', arguments: {} });
    expect((account.structuredContent as { account: { plan: string } }).account.plan).toBe('pro');
    const result = await client.callTool({ name: 'search', arguments: { query: 'shoes', limit: 2 } });
    expect((result.structuredContent as { rows: unknown[] }).rows).toHaveLength(2);
    await client.close();
    // Anything on stdout that is not a protocol message would have been a parse error here.
    expect(errors).toEqual([]);
    expect(
      stderr()
        .replace(/127\.0\.0\.1:\d+/, '127.0.0.1:PORT')
        .replaceAll(dir, '<dir>'),
    ).toBe(
      [
        'Using the offline sandbox at http://127.0.0.1:PORT (demo key, no real credits).',
        'Sandbox store: <dir>/state/company-data/store.sandbox.db',
        'company-data mcp: serving on stdio; paid tools on, this session may spend up to 3 credits; a call that can cost more than 5 asks the user first.',
        '',
      ].join('\n'),
    );
  });
});
