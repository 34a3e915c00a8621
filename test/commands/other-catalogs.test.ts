// The catalogs and the account in a second plausible layout (test/helpers/other-layout.ts): every
// command that reads them works as it does on the sandbox's own layout. What a catalog does not
// say (tech's facet flag, every field's capabilities) is sent for the service to decide; what it
// clearly refuses (a value outside the values it lists, a field marked as no filter) is refused
// before anything is sent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lines, serviceEnvironment } from '../helpers/command-cases.js';
import { type InProcessResult, runInProcess } from '../helpers/in-process.js';
import { startOtherLayout } from '../helpers/other-layout.js';
import { startTestSandbox } from '../helpers/sandbox.js';

/** main() against a fresh sandbox, directly or behind the other layout, with its own HOME. */
async function runOn(layout: 'sandbox' | 'other', argv: string[], tty = false): Promise<InProcessResult> {
  const sandbox = await startTestSandbox();
  const front = layout === 'other' ? await startOtherLayout(sandbox.url) : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'cd-other-layout-'));
  const base = front?.url ?? sandbox.url;
  try {
    const r = await runInProcess(argv, { tty, env: serviceEnvironment(dir, base) });
    const named = (text: string) => text.replaceAll(base, 'BASE').replaceAll(new URL(base).host, 'HOST');
    return { code: r.code, stdout: named(r.stdout), stderr: named(r.stderr) };
  } finally {
    await front?.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the other layout: the same output as the sandbox layout', () => {
  const same: Array<[string, string[], boolean]> = [
    ['search --filter, piped', ['search', '--filter', 'country=us', '--limit', '3'], false],
    [
      'search --filters with every way of giving values',
      [
        'search',
        '--filters',
        '{"site_category":["fashion"],"employee_range":["1-10","11-50"],"primary_platform":["Shopify"],"tech":["klaviyo"]}',
        '--limit',
        '3',
      ],
      true,
    ],
    [
      'search --include, on a terminal',
      ['search', 'shoes', '--include', 'company_name,country,tech', '--limit', '3'],
      true,
    ],
    ['lookalike --filter', ['lookalike', 'acme-shoes.com', '--filter', 'country=US', '-k', '3'], true],
    ['breakdown of a facet named `breakdown: true`', ['breakdown', 'country', 'shoes'], true],
    ['breakdown of a facet named `facetable: "yes"`, piped', ['breakdown', 'employee_range'], false],
  ];
  it.each(same)('%s', async (_name, argv, tty) => {
    const [plain, other] = await Promise.all([runOn('sandbox', argv, tty), runOn('other', argv, tty)]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(other).toEqual(plain);
  });
});

describe('the other layout: what the catalog does not say goes to the service', () => {
  it('a breakdown of tech (no facet flag) is sent, and the service refuses it', async () => {
    const r = await runOn('other', ['breakdown', 'tech'], true);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: lines(
        'error: Invalid request (invalid_request, HTTP 400)',
        '  breakdown "tech" is not a facet; facets are country, site_category, employee_range, primary_platform',
        '  Do not retry unchanged; fix the request first.',
      ),
    });
  });

  it('--include of a lead field (no capabilities listed) is sent, and the service refuses it', async () => {
    const r = await runOn('other', ['search', '--include', 'domain,lead_email'], true);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: lines(
        'error: Field not available for this capability (field_not_available_for_capability, HTTP 400)',
        '  lead_email (product leads) is not available from search; request it from /api/domains with products=leads',
        '  That field is only available from enrichment: use `company-data enrich --products <its product>`.',
      ),
    });
  });
});

describe('the other layout: what the catalog clearly refuses is refused locally', () => {
  it('a value outside the values given beside the filter name', async () => {
    const r = await runOn('other', ['search', '--filter', 'country=XX'], true);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: lines(
        'error: Usage error (usage_error)',
        '  unknown value "XX" for filter `country` (did you mean `MX`?)',
        '  Values of country: US, GB, DE, FR, CA, AU, NL, ES, IT, SE, CH, BE, AT, DK, NO, IE, PL, JP, BR, IN, NZ, FI, PT, SG, MX.',
      ),
    });
  });

  it('a field marked `filter: false`', async () => {
    const r = await runOn('other', ['search', '--filter', 'company_name=Acme'], true);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: lines(
        'error: Usage error (usage_error)',
        '  field `company_name` cannot be used as a filter',
        '  Filters: country, site_category, employee_range, primary_platform, tech (see `company-data fields`).',
      ),
    });
  });
});

describe('the other layout: fields, products and doctor', () => {
  it('fields --filters lists the five filters, however each is given', async () => {
    const r = await runOn('other', ['fields', '--filters'], true);
    expect(r).toEqual({
      code: 0,
      stdout: lines(
        '┌──────────────────┬─────────┬───────────┬───────┬─────────┬──────────────┬───────┐',
        '│ name             │ product │ filter    │ facet │ credits │ capabilities │ plans │',
        '├──────────────────┼─────────┼───────────┼───────┼─────────┼──────────────┼───────┤',
        '│ country          │ profile │ enum (25) │ yes   │ 1       │ —            │       │',
        '│ site_category    │ profile │ enum (16) │ yes   │ 1       │ —            │       │',
        '│ employee_range   │ profile │ enum (6)  │ yes   │ 1       │ —            │       │',
        '│ primary_platform │ tech    │ enum (10) │ yes   │ 1       │ —            │       │',
        '│ tech             │ tech    │ enum (54) │ —     │ 1       │ —            │       │',
        '└──────────────────┴─────────┴───────────┴───────┴─────────┴──────────────┴───────┘',
      ),
      stderr: '',
    });
  });

  it('fields --facets lists the facets named in three ways', async () => {
    const r = await runOn('other', ['fields', '--facets', '-o', 'csv'], false);
    expect(r).toEqual({
      code: 0,
      stdout: lines(
        'name,product,type,filter,value_source,values,facet,credit_units,capabilities,plans,description',
        "country,profile,string,country,enum,US;GB;DE;FR;CA;AU;NL;ES;IT;SE;CH;BE;AT;DK;NO;IE;PL;JP;BR;IN;NZ;FI;PT;SG;MX,true,1,,,ISO 3166-1 alpha-2 country of the company's headquarters",
        'site_category,profile,string,site_category,enum,fashion;electronics;home_garden;beauty;sports;food_drink;b2b_software;travel;health;toys;jewelry;pets;automotive;media;education;finance,true,1,,,Main category of the website',
        'employee_range,profile,string,employee_range,enum,1-10;11-50;51-200;201-1000;1001-5000;5000+,true,1,,,"Number of employees, as a range"',
        'primary_platform,tech,string,primary_platform,enum,shopify;woocommerce;magento;bigcommerce;salesforce_commerce;custom;prestashop;shopware;wix;squarespace,true,1,,,Commerce or site platform the website runs on',
      ),
      stderr: '',
    });
  });

  it('products: kinds as the catalog says them, none invented', async () => {
    const table = await runOn('other', ['products'], true);
    expect(table).toEqual({
      code: 0,
      stdout: lines(
        '┌─────────┬──────────────────────────────────┬────────┬─────────┬──────────────────────────────────┐',
        '│ id      │ description                      │ credit │ kind    │ fields                           │',
        '│         │                                  │ units  │         │                                  │',
        '├─────────┼──────────────────────────────────┼────────┼─────────┼──────────────────────────────────┤',
        '│ profile │ Company profile: name, country,  │ 1      │ default │ domain, company_name, country,   │',
        '│         │ category, size, founding year    │        │         │ site_category, employee_range,   │',
        '│         │                                  │        │         │ founded_year                     │',
        '├─────────┼──────────────────────────────────┼────────┼─────────┼──────────────────────────────────┤',
        '│ tech    │ Technology: the commerce         │ 1      │ —       │ primary_platform, tech,          │',
        '│         │ platform and the technologies    │        │         │ tech_count                       │',
        '│         │ detected on the site             │        │         │                                  │',
        '├─────────┼──────────────────────────────────┼────────┼─────────┼──────────────────────────────────┤',
        '│ leads   │ Lead add-on: a named decision    │ 5      │ add-on  │ lead_name, lead_title,           │',
        '│         │ maker with title and e-mail      │        │         │ lead_email                       │',
        '│         │ address                          │        │         │                                  │',
        '└─────────┴──────────────────────────────────┴────────┴─────────┴──────────────────────────────────┘',
      ),
      stderr: '',
    });
    const json = await runOn('other', ['products', '-o', 'json'], false);
    expect(json.code).toBe(0);
    // The catalog's own members kept; `default` and `add_on` only where the catalog says them.
    expect(
      JSON.parse(json.stdout).map((p: Record<string, unknown>) => [
        p.id,
        p.credit_units,
        p.default,
        p.add_on,
        'default' in p,
        'add_on' in p,
      ]),
    ).toEqual([
      ['profile', 1, true, undefined, true, false],
      ['tech', 1, undefined, undefined, false, false],
      ['leads', 5, undefined, true, false, true],
    ]);
  });

  it('me reads the plan and the balance from the account envelope', async () => {
    const r = await runOn('other', ['me', '-o', 'json'], false);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      plan: 'pro',
      // Under the contract's name, in the place of the member it was read from.
      balance: 1_000_000,
      key_name: 'full',
    });
  });

  it('doctor shows the plan and the balance from the account envelope', async () => {
    const r = await runOn('other', ['doctor'], true);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter((line) => /^. (key|auth header|contract):/.test(line))).toEqual([
      '✓ contract: version 2026-08-26',
      '✓ key: valid (from environment, plan pro, balance 1,000,000)',
      '✓ auth header: bearer accepted',
    ]);
  });
});
