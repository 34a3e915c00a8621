// --dry-run of search (with --all too), breakdown and lookalike (issue 46): what would be sent, the
// worst case against the caps and the balance, and nothing bought: the sandbox receives only the
// free catalog and GET /api/me, its balance does not move, and the ledger stays empty.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogCacheDir } from '../../src/api/catalogs.js';
import { KEYS, runCase } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { startTestSandbox } from '../helpers/sandbox.js';

const FREE_ONLY = ['GET /api/fields no key -> 200', 'GET /api/me bearer:full -> 200'];

async function dryRun(argv: string[], tty = false, env: Record<string, string> = {}) {
  const r = await runCase({
    name: argv.join(' '),
    argv,
    tty,
    env,
    wantCode: 0,
    wantStdout: '',
    wantStderr: '',
  });
  return { code: r.code, stdout: r.stdout, stderr: r.stderr, requests: r.requests };
}

describe('--dry-run buys nothing and prints the worst case', () => {
  it('search on a terminal: the request, one credit at most, the balance that covers it', async () => {
    const r = await dryRun(['search', 'shoes', '--filter', 'country=US', '--limit', '5', '--dry-run'], true);
    expect(r.code).toBe(0);
    expect(r.requests).toEqual(FREE_ONLY);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatchInlineSnapshot(`
      "Dry run: nothing was sent or charged
      ┌───────────────────────────┬────────────────────────────────────────────────────────────────┐
      │ field                     │ value                                                          │
      ├───────────────────────────┼────────────────────────────────────────────────────────────────┤
      │ request                   │ GET /api/search?query=shoes&filters={"country":["US"]}&limit=5 │
      │ request_count             │ 1                                                              │
      │ worst_case_per_request    │ 1                                                              │
      │ worst_case_credits        │ 1                                                              │
      │ balance                   │ 1000000                                                        │
      │ balance_covers_worst_case │ yes                                                            │
      └───────────────────────────┴────────────────────────────────────────────────────────────────┘
      "
    `);
  });

  it('search --all piped: every page the exclusion limit allows, held against --budget', async () => {
    const r = await dryRun(['search', 'shoes', '--all', '--budget', '5', '--dry-run']);
    expect(r.requests).toEqual(FREE_ONLY);
    expect(JSON.parse(r.stdout)).toEqual({
      request: 'GET /api/search?query=shoes&limit=1000',
      next_requests: 'up to 20 more pages, each a POST /api/search excluding the companies already received',
      request_count: 21,
      worst_case_per_request: 1,
      worst_case_credits: 21,
      budget: 5,
      caps_cover_worst_case: false,
      at_most_charged: 5,
      balance: 1_000_000,
      balance_covers_worst_case: true,
    });
  });

  it('search --max-rows with exclusions: a POST, its pages counted from --max-rows', async () => {
    const r = await dryRun([
      'search',
      'shoes',
      '--max-rows',
      '2500',
      '--exclude-domain',
      'acme-shoes.com',
      '--dry-run',
    ]);
    expect(r.requests).toEqual(FREE_ONLY);
    expect(JSON.parse(r.stdout)).toMatchObject({
      request: 'POST /api/search {"query":"shoes","limit":1000,"exclude_domains":["acme-shoes.com"]}',
      request_count: 3,
      worst_case_credits: 3,
    });
  });

  it('breakdown with --budget-month: the month left, from the ledger', async () => {
    const r = await dryRun(['breakdown', 'country', 'shoes', '--budget-month', '100', '--dry-run']);
    expect(r.requests).toEqual(FREE_ONLY);
    expect(JSON.parse(r.stdout)).toEqual({
      request: 'GET /api/search?query=shoes&breakdown=country',
      request_count: 1,
      worst_case_per_request: 1,
      worst_case_credits: 1,
      budget_month: 100,
      budget_month_left: 100,
      caps_cover_worst_case: true,
      at_most_charged: 1,
      balance: 1_000_000,
      balance_covers_worst_case: true,
    });
  });

  it('lookalike with several seeds: one request per seed', async () => {
    const r = await dryRun([
      'lookalike',
      'acme-shoes.com',
      'globex.io',
      '--evidence',
      '--dry-run',
      '-o',
      'ndjson',
    ]);
    expect(r.requests).toEqual(FREE_ONLY);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      request_1: 'GET /api/lookalike/acme-shoes.com?k=12&include_evidence=true',
      request_2: 'GET /api/lookalike/globex.io?k=12&include_evidence=true',
      request_count: 2,
      worst_case_credits: 2,
    });
  });

  it('the balance and the ledger after a dry run: unchanged, empty', async () => {
    const r = await runCase({
      name: 'me after a dry run',
      argv: ['me'],
      tty: false,
      before: [
        ['search', 'shoes', '--all', '--dry-run'],
        ['lookalike', 'acme-shoes.com', '--dry-run'],
        ['breakdown', 'country', '--dry-run'],
      ],
      wantCode: 0,
      wantStdout: '',
      wantStderr: '',
    });
    expect(JSON.parse(r.stdout).balance).toBe(1_000_000);
    const spend = await runCase({
      name: 'spend after a dry run',
      argv: ['spend'],
      tty: false,
      before: [['search', 'shoes', '--dry-run']],
      wantCode: 0,
      wantStdout: '',
      wantStderr: '',
    });
    expect(JSON.parse(spend.stdout)).toMatchObject({ rows: [], total: { charged: 0, calls: 0 } });
  });

  it('holds each request at the largest charge seen for its endpoint and size, as the command would', async () => {
    const sandbox = await startTestSandbox();
    const dir = mkdtempSync(join(tmpdir(), 'cd-dry-prices-'));
    try {
      // What earlier runs learnt of this service (src/spend/prices.ts): a 5-row search cost 3.
      const cache = join(dir, 'cache', 'company-data');
      mkdirSync(catalogCacheDir(cache, sandbox.url), { recursive: true });
      writeFileSync(
        join(catalogCacheDir(cache, sandbox.url), 'prices.json'),
        JSON.stringify({ 'search:5': 3 }),
      );
      const env = {
        HOME: dir,
        XDG_CONFIG_HOME: join(dir, 'config'),
        XDG_CACHE_HOME: join(dir, 'cache'),
        COMPANY_DATA_BASE_URL: sandbox.url,
        COMPANY_DATA_API_KEY: KEYS.full,
      };
      const five = await runInProcess(
        ['search', 'shoes', '--limit', '5', '--dry-run', '--budget-month', '7'],
        { env },
      );
      expect(JSON.parse(five.stdout)).toMatchObject({
        worst_case_per_request: 3,
        worst_case_credits: 3,
        budget_month_left: 7,
        at_most_charged: 3,
      });
      const ten = await runInProcess(['search', 'shoes', '--limit', '10', '--dry-run'], { env });
      expect(JSON.parse(ten.stdout)).toMatchObject({ worst_case_per_request: 1, worst_case_credits: 1 });
    } finally {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
