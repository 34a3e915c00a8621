// `company-data enrich <domain...>`: main() in-process, piped, against a loopback sandbox over HTTP.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runPiped } from '../helpers/in-process.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let home: string;

sandboxAndDirForTests('cd-enrich-lookups-', { companies: 2000 }, (s, d) => {
  sandbox = s;
  home = d;
});

function env(key: string | undefined = sandbox.keys.full) {
  return {
    COMPANY_DATA_API_KEY: key,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
  };
}

function enrich(args: string[], key?: string) {
  return runPiped(['--base-url', sandbox.url, ...args], { env: env(key) });
}

const domainRequests = () => sandbox.requests().filter((r) => r.path.startsWith('/api/domains/'));

describe('enrich <domain...>', () => {
  it('looks up a URL form as its domain and prints the record as JSON when piped', async () => {
    const before = sandbox.balances().full;
    const r = await enrich(['enrich', 'https://www.Acme-Shoes.com/about']);
    expect(r.stderr).toBe('');
    expect(r.code, r.stderr).toBe(0);
    const { results, credits } = JSON.parse(r.stdout);
    expect(credits).toMatchObject({ charged: 1 });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      domain: 'acme-shoes.com',
      found: true,
      company_name: 'Acme Shoes',
      country: 'US',
    });
    expect(domainRequests().at(-1)?.path).toBe('/api/domains/acme-shoes.com');
    expect(before - sandbox.balances().full).toBe(1);
  });

  it('says "no record" on stderr for a missing domain, charges nothing and exits 0', async () => {
    const before = sandbox.balances().full;
    const r = await enrich(['enrich', 'no-such-company.example']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('no record for no-such-company.example; nothing charged');
    expect(JSON.parse(r.stdout)).toMatchObject({
      results: [{ domain: 'no-such-company.example', found: false, credits_charged: 0 }],
      credits: { charged: 0 },
    });
    expect(sandbox.balances().full).toBe(before);
  });

  it('prints nothing on stdout for a missing domain in table format', async () => {
    const r = await enrich(['-o', 'table', 'enrich', 'no-such-company.example']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('no record for no-such-company.example');
  });

  it('shows one row per domain for several, with the products chosen, and the charge on stderr', async () => {
    const before = sandbox.balances().full;
    const r = await enrich([
      '-o',
      'csv',
      'enrich',
      'acme-shoes.com',
      'GLOBEX.IO',
      'no-such-company.example',
      'acme-shoes.com',
      '--products',
      'profile,tech',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0].split(',').slice(0, 3)).toEqual(['domain', 'found', 'company_name']);
    expect(lines[0]).toContain('primary_platform');
    expect(lines.slice(1).map((l) => l.split(',').slice(0, 2).join(','))).toEqual([
      'acme-shoes.com,true',
      'globex.io,true',
      'no-such-company.example,false',
    ]);
    // acme: profile + tech; globex has no tech data, so tech is free; the repeat is not asked again.
    expect(before - sandbox.balances().full).toBe(3);
  });

  it('shows the credits charged and the balance left on stderr in table format', async () => {
    const r = await enrich(['-o', 'table', 'enrich', 'globex.io']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Globex Corporation');
    const balance = new Intl.NumberFormat('en-US').format(sandbox.balances().full);
    expect(r.stderr).toContain(`Credits: charged 1, balance ${balance}`);
  });

  it('keeps escape sequences from the server off the terminal', async () => {
    const r = await enrich(['-o', 'table', 'enrich', 'escape-test.com']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('\x1b');
    expect(r.stdout).not.toContain('\x07');
  });

  it('refuses an input that is not a domain before sending anything, naming it', async () => {
    const before = domainRequests().length;
    const r = await enrich(['enrich', 'acme-shoes.com', 'not a domain']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('not a domain');
    expect(r.stderr).toContain('invalid_domain');
    expect(r.stdout).toBe('');
    expect(domainRequests().length).toBe(before);
  });

  it.each([
    [['--products', 'profle'], 'invalid_product', 'did you mean `profile`?'],
    [['--include', 'company_nam'], 'invalid_field', 'did you mean `company_name`?'],
    [['--include', 'company_name,tech'], 'field_not_in_product', '--products profile,tech'],
    [['--products', 'profile,tech', '--include', 'company_name'], 'product_without_visible_fields', 'tech'],
    [['--include', 'lead_email'], 'field_not_in_product', 'leads'],
  ])('checks %j against the catalogs before spending (%s)', async (flags, code, text) => {
    const before = domainRequests().length;
    const r = await enrich(['enrich', 'acme-shoes.com', ...flags]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(code);
    expect(r.stderr).toContain(text);
    expect(domainRequests().length).toBe(before);
  });

  it('stops with exit 4 before any lookup when --max-credits is below the products cost', async () => {
    const before = domainRequests().length;
    const r = await enrich(['enrich', 'acme-shoes.com', '--products', 'profile,leads', '--max-credits', '3']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain('max_credits_exceeded');
    expect(r.stderr).toContain('up to 6 credits');
    expect(domainRequests().length).toBe(before);
  });

  it('sends --max-credits with the lookup and accepts the leads add-on with enough headroom', async () => {
    const r = await enrich(['enrich', 'acme-shoes.com', '--products', 'profile,leads', '--max-credits', '6']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).results[0]).toMatchObject({ lead_name: 'Jane Doe' });
    expect(domainRequests().at(-1)?.query).toContain('max_credits=6');
  });

  it('exits 3 with the key message when the key is refused', async () => {
    const r = await enrich(['enrich', 'acme-shoes.com'], 'cd_not_a_real_key');
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('invalid_api_key');
    expect(r.stderr).not.toContain('cd_not_a_real_key');
  });

  it('refuses batch-only options without --input', async () => {
    const r = await enrich(['enrich', 'acme-shoes.com', '--budget', '5']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('--budget applies to batches');
  });
});

describe('enrich reads other plausible response shapes', () => {
  let server: Server;
  let base: string;
  const bodies: Record<string, unknown> = {
    '/api/domains/nested.com': {
      found: true,
      data: { domain: 'nested.com', company_name: 'Nested Ltd' },
      credits: { charged: 1 },
    },
    '/api/domains/company.com': { company: { company_name: 'Company Inc', country: 'FR' } },
    '/api/domains/gone.com': { code: 'domain_not_found' },
    '/api/domains/weird.com': ['not', 'an', 'object'],
    // The catalogs a lookup's worst case (its max_credits) is read from.
    '/api/products': {
      products: [
        { id: 'profile', fields: ['domain', 'company_name', 'country'], credit_units: 1, default: true },
      ],
    },
    '/api/fields': { fields: [] },
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const body = bodies[(req.url ?? '').split('?')[0]];
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/json', 'x-credits-remaining': '41' });
      res.end(JSON.stringify(body ?? { code: 'not_found', status: 404, title: 'Not found' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const run = (args: string[]) => runPiped(['--base-url', base, ...args], { env: env('k') });

  it('a record nested under data or company, found inferred, not-found from the code', async () => {
    const r = await run(['-o', 'ndjson', 'enrich', 'nested.com', 'company.com', 'gone.com']);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    // Where the service did not say what it charged, a found answer counts its whole hold (the
    // default selection's worst case, 1 credit) and a missing one nothing (the spec's rule).
    expect(rows).toEqual([
      { domain: 'nested.com', found: true, company_name: 'Nested Ltd', credits_charged: 1, bought_at: null },
      {
        domain: 'company.com',
        found: true,
        company_name: 'Company Inc',
        country: 'FR',
        credits_charged: 1,
        bought_at: null,
      },
      { domain: 'gone.com', found: false, credits_charged: 0, bought_at: null },
    ]);
  });

  it('a body that is not an object is a clear problem, not a crash', async () => {
    const r = await run(['enrich', 'weird.com']);
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toContain('unexpected_response');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
