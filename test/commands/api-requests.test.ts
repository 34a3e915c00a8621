// `company-data api`: raw requests in-process (main() piped) against the sandbox, checked with the
// sandbox's own request log.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type InProcessResult as RunResult, runPiped } from '../helpers/in-process.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let home: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  home = mkdtempSync(join(tmpdir(), 'cd-e2e-api-'));
});

afterAll(async () => {
  await sandbox?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

let logStart = 0;
beforeEach(() => {
  logStart = sandbox.requests().length;
});

/** Requests the sandbox received since the test began. */
const sent = () => sandbox.requests().slice(logStart);

function api(args: string[], options: { key?: string; input?: string } = {}): Promise<RunResult> {
  const dir = mkdtempSync(join(home, 'run-'));
  return runPiped(['--base-url', sandbox.url, 'api', ...args], {
    input: options.input,
    env: {
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      COMPANY_DATA_API_KEY: options.key ?? sandbox.keys.full,
      COMPANY_DATA_RETRY_BASE_MS: '1',
    },
  });
}

describe('successful calls', () => {
  it('GET /api/me prints the account JSON and sends the key', async () => {
    const r = await api(['GET', '/api/me']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ plan: 'pro', key_name: 'full' });
    expect(sent()).toEqual([expect.objectContaining({ method: 'GET', path: '/api/me', auth: 'bearer' })]);
  });

  it('sends --query parameters, and a path relative to /api/ with its own query string', async () => {
    const r = await api([
      'get',
      'domains/acme-shoes.com?include=domain,tech',
      '--query',
      'products=profile,tech',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      found: true,
      domain: 'acme-shoes.com',
      credits: { charged: 2 },
    });
    // The catalogs first: the lookup carries max_credits, the worst case of its products.
    const entry = sent().find((e) => e.path.startsWith('/api/domains/'))!;
    expect(sent().map((e) => e.path)).toEqual([
      '/api/products',
      '/api/fields',
      '/api/domains/acme-shoes.com',
    ]);
    expect(entry).toMatchObject({ method: 'GET', path: '/api/domains/acme-shoes.com', key_name: 'full' });
    expect(new URLSearchParams(entry.query).get('products')).toBe('profile,tech');
    expect(new URLSearchParams(entry.query).get('include')).toBe('domain,tech');
    expect(new URLSearchParams(entry.query).get('max_credits')).toBe('2');
  });

  it('POSTs a --body @file with exclude_domains as JSON, and the exclusion holds', async () => {
    const search = { query: 'shoes', limit: 5, include: 'domain' };
    const first = await api(['POST', '/api/search', '--body', JSON.stringify(search)]);
    expect(first.code).toBe(0);
    const domains = (JSON.parse(first.stdout).rows as Array<{ domain: string }>).map((row) => row.domain);
    expect(domains.length).toBeGreaterThan(1);

    const file = join(home, 'search.json');
    writeFileSync(file, JSON.stringify({ ...search, exclude_domains: [`https://www.${domains[0]}/x`] }));
    logStart = sandbox.requests().length;
    const r = await api(['POST', '/api/search', '--body', `@${file}`]);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout).rows as Array<{ domain: string }>;
    expect(rows.map((row) => row.domain)).not.toContain(domains[0]);
    expect(rows.map((row) => row.domain)).toContain(domains[1]);
    expect(sent()).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/api/search',
        content_type: 'application/json',
        status: 200,
      }),
    ]);
  });

  it('reads --body @- from stdin', async () => {
    const r = await api(['POST', 'search', '--body', '@-'], { input: '{"query":"coffee","limit":1}' });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).rows).toHaveLength(1);
  });

  it('never sends the key to a public catalog path, nor with --no-auth', async () => {
    const products = await api(['GET', '/api/products']);
    expect(products.code).toBe(0);
    expect(JSON.parse(products.stdout).products.map((p: { id: string }) => p.id)).toContain('leads');
    const noAuth = await api(['GET', '/api/me', '--no-auth']);
    expect(noAuth.code).toBe(3);
    expect(sent().map((e) => [e.path, e.auth])).toEqual([
      ['/api/products', null],
      ['/api/me', null],
    ]);
  });

  it('reports credits on stderr in table format and logs the request with --verbose, never the key', async () => {
    const r = await runPiped(
      ['--base-url', sandbox.url, '-o', 'table', '-v', 'api', 'GET', '/api/domains/acme-shoes.com'],
      { env: { COMPANY_DATA_API_KEY: sandbox.keys.full, XDG_CONFIG_HOME: join(home, 'none') } },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ found: true });
    expect(r.stderr).toMatch(
      /http: GET http:\/\/127\.0\.0\.1:\d+\/api\/domains\/acme-shoes\.com\?max_credits=1 -> 200/,
    );
    expect(r.stderr).toMatch(/^Credits: charged 1, balance [\d,]+$/m);
    expect(r.stdout + r.stderr).not.toContain(sandbox.keys.full);
  });
});

describe('failures', () => {
  it('a 400 problem exits 2 with the code on stderr and nothing on stdout', async () => {
    const r = await api(['GET', '/api/search', '--query', 'limit=5000', '-o', 'json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr.trim().split('\n').pop()!)).toMatchObject({
      code: 'invalid_request',
      status: 400,
    });
    expect(sent()).toHaveLength(1);
  });

  it('an invalid key exits 3', async () => {
    const r = await api(['GET', '/api/me'], { key: 'cd_wrong_key_000000000' });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('invalid_api_key');
    expect(r.stderr).not.toContain('cd_wrong_key_000000000');
  });

  it.each([
    [['GET', '/_sandbox/requests'], /must start with \/api\//],
    [['GET', '/api/../_sandbox/requests'], /must not contain .* segments/],
    [['GET', '/api/%2e%2e/_sandbox/requests'], /must not contain .* segments/],
    [['GET', `http://127.0.0.1:1/api/me`], /is a URL/],
    [['POST', '/api/search', '--body', '{"query":'], /--body is not valid JSON/],
    [['POST', '/api/search', '--body', '@/nonexistent/body.json'], /cannot read --body file/],
    [['GET', '/api/me', '--body', '{}'], /GET request cannot carry --body/],
    [['GET', '/api/me', '--query', 'a=1', '--query', 'a=2'], /given twice/],
    [['FETCH', '/api/me'], /method must be one of GET, POST/],
  ])('%j is refused before anything is sent (exit 2)', async (args, message) => {
    const r = await api(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(sent()).toEqual([]);
  });
});
