// A found domain answer in a layout the client does not know (its fields as a list of name/value
// pairs, which no reader of src/api/domains.ts takes): never written as blank cells. The first
// such answer stops a batch before it buys more (exit 5), the answer is kept in a file whose path
// is printed, and the message says what was asked, what came back and how to report it. The single
// lookup and the MCP tool say the same. Credits are counted from the sandbox's balance.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { lines } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { startMcp } from '../helpers/mcp-client.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';
import { listenLocal, rewritingFront } from '../helpers/server.js';

/** Every field of a found record moved into `attributes: [{ name, value }]`. */
function asPairs(path: string, body: Record<string, unknown>): Record<string, unknown> | undefined {
  if (!path.startsWith('/api/domains/') || body.found !== true) return undefined;
  const { found, domain, credits, ...fields } = body;
  return {
    found,
    domain,
    attributes: Object.entries(fields).map(([name, value]) => ({ name, value })),
    credits,
  };
}

let sandbox: SandboxHandle;
let front: { url: string; close: () => Promise<void> };
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  front = await listenLocal(rewritingFront(sandbox.url, asPairs));
});
afterAll(async () => {
  await front.close();
  await sandbox.close();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cd-unreadable-'));
  return () => rmSync(dir, { recursive: true, force: true });
});

function env(): Record<string, string> {
  return {
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    COMPANY_DATA_STORE: join(dir, 'store.db'),
    COMPANY_DATA_BASE_URL: front.url,
    COMPANY_DATA_API_KEY: sandbox.keys.full,
    NO_COLOR: '1',
  };
}

const taken = (before: number) => before - sandbox.balances().full;
const lookupsSent = (from: number) =>
  sandbox.requests().filter((r) => r.seq > from && r.path.startsWith('/api/domains/')).length;
const lastSeq = () => sandbox.requests().at(-1)?.seq ?? 0;

/** The one file kept for the answer, and its contents. */
function kept(): { path: string; content: Record<string, unknown> } {
  const folder = join(dir, 'cache', 'company-data', 'unreadable');
  const files = readdirSync(folder);
  expect(files).toHaveLength(1);
  const path = join(folder, files[0]);
  return { path, content: JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown> };
}

const DETAIL = (path: string) =>
  `GET /api/domains/acme-shoes.com found the company, but the fields asked for (company_name, country, tech) are not in it; the answer holds found, domain, attributes, credits (asked: company_name, country, tech). Nothing was written for it and nothing more was bought. The answer is saved in ${path}.`;
const REMEDY =
  'company-data does not know this layout of the service: report it to the company-data maintainers with the saved file (README, "Troubleshooting"), and run `company-data doctor` to see what it recognised.';

describe('a found answer whose fields cannot be read', () => {
  it('stops a batch after that one answer: exit 5, no output file, the answer kept, the charge in the ledger', async () => {
    const input = join(dir, 'in.csv');
    writeFileSync(input, 'domain\nacme-shoes.com\nglobex.io\numbrella-health.de\ninitech.co.uk\n');
    const output = join(dir, 'out.csv');
    const before = sandbox.balances().full;
    const from = lastSeq();
    const r = await runInProcess(
      [
        'enrich',
        '--input',
        input,
        '--output',
        output,
        '--concurrency',
        '1',
        '--products',
        'profile,tech',
        '--include',
        'company_name,country,tech',
      ],
      { env: env() },
    );
    const file = kept();
    expect(r.code).toBe(5);
    expect(r.stdout).toBe('');
    const balance = sandbox.balances().full.toLocaleString('en-US');
    expect(r.stderr).toBe(
      lines(
        `2026-11-24T12:00:00Z Stopped after 0 of ~4 rows (aborted: unreadable_answer). Enriched: 0 rows, 0 unique domains (0 found, 0 not found), 0 errors, 2 credits charged, balance ${balance}, 0.0s`,
        JSON.stringify({
          code: 'unreadable_answer',
          status: 0,
          title: 'Answer in an unknown layout',
          detail: DETAIL(file.path),
          retryable: false,
          hint: REMEDY,
        }),
      ),
    );
    expect(existsSync(output)).toBe(false);
    // One lookup sent, bought at 2 (profile and tech), and nothing after it.
    expect(lookupsSent(from)).toBe(1);
    expect(taken(before)).toBe(2);
    expect(file.content).toMatchObject({
      endpoint: 'GET /api/domains/acme-shoes.com',
      asked: ['company_name', 'country', 'tech'],
      missing: ['company_name', 'country', 'tech'],
      body: { found: true, domain: 'acme-shoes.com' },
    });
    // The ledger holds what the sandbox took: the answer was paid for, even if unreadable.
    const spend = await runInProcess(['spend', '-o', 'json'], { env: env() });
    expect(JSON.parse(spend.stdout).total).toEqual({ charged: 2, possibly_charged: 0, calls: 1 });
  });

  it('a single lookup says the same on a terminal and writes no blank row', async () => {
    const before = sandbox.balances().full;
    const r = await runInProcess(
      [
        'enrich',
        'acme-shoes.com',
        '--products',
        'profile,tech',
        '--include',
        'company_name,country,tech',
        '-o',
        'csv',
      ],
      { env: env(), tty: true },
    );
    const file = kept();
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 5,
      stdout: '',
      stderr: lines(
        'error: Answer in an unknown layout (unreadable_answer)',
        `  ${DETAIL(file.path)}`,
        `  ${REMEDY}`,
      ),
    });
    expect(taken(before)).toBe(2);
  });

  it('the MCP enrich tool says the same and returns no record', async () => {
    const { client, exit } = await startMcp(['mcp', '--allow-spend', '10'], env());
    const result = await client.callTool({
      name: 'enrich',
      arguments: {
        domains: ['acme-shoes.com'],
        products: ['profile', 'tech'],
        include: ['company_name', 'country', 'tech'],
      },
    });
    await client.close();
    expect(await exit).toBe(0);
    const file = kept();
    expect(result.isError).toBe(true);
    expect((result.structuredContent as { error: Record<string, unknown> }).error).toMatchObject({
      code: 'unreadable_answer',
      detail: DETAIL(file.path),
    });
  });
});
