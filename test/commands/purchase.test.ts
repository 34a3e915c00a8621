// One way to buy (src/spend/): every command that can charge reserves against every cap in force,
// sends domain lookups with max_credits, settles with the charge or as possibly charged, and
// records both in the ledger. Credits are counted from the sandbox's balance, never from the
// tool's own summary. In-process: main() with fake streams against a real sandbox over loopback.

import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Purchase, problemOf, purchase } from '../helpers/purchase.js';
import type { OnTestFinished } from '../helpers/sandbox.js';
import { rewritingFront } from '../helpers/server.js';

describe.concurrent('COMPANY_DATA_BUDGET_MONTH binds every command that can charge', () => {
  const MONTH = { COMPANY_DATA_BUDGET_MONTH: '1' };
  const commands: Array<[string, string[]]> = [
    ['enrich', ['enrich', 'acme-shoes.com', 'globex.io']],
    ['search', ['search', 'shoes', '--limit', '2']],
    ['breakdown', ['breakdown', 'country', 'shoes']],
    ['lookalike', ['lookalike', 'acme-shoes.com']],
    ['api', ['api', 'GET', '/api/domains/acme-shoes.com']],
  ];
  for (const [name, argv] of commands) {
    it(`${name}: the first request fits the month's 1 credit, the next is refused (exit 4) and not sent`, async ({
      onTestFinished,
    }) => {
      const t = await purchase(onTestFinished);
      const first = await t.run(argv.slice(0, name === 'enrich' ? 2 : argv.length), MONTH);
      expect(first.code, first.stderr).toBe(0);
      expect(t.took()).toBe(1);
      const sent = t.sandbox.requests().length;
      const second = await t.run(name === 'enrich' ? ['enrich', 'globex.io'] : argv, MONTH);
      expect(second.code, second.stderr).toBe(4);
      const refusal =
        "--budget-month 1 (this key's spend in this calendar month, UTC, across runs and commands) leaves no room for a request of up to 1 credit";
      if (name === 'lookalike') {
        expect(second.stderr).toBe(
          `warning: ${refusal}: lookalikes of acme-shoes.com not requested\n  Raise --budget-month (or wait for the next month) and run again; every seed is requested again.\n`,
        );
      } else expect(problemOf(second.stderr)).toMatchObject({ code: 'budget_exhausted', detail: refusal });
      expect(
        t.sandbox
          .requests()
          .slice(sent)
          .filter((r) => r.auth !== null),
      ).toEqual([]);
      expect(t.took()).toBe(1);
      expect(await t.ledger()).toEqual({ charged: 1, possibly_charged: 0, calls: 1 });
    });
  }

  it('search --max-rows stops at the page the month has no room for, with the rows it got', async ({
    onTestFinished,
  }) => {
    const t = await purchase(onTestFinished);
    const r = await t.run(['search', '--max-rows', '5000', '-o', 'ndjson'], MONTH);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(1000);
    expect(problemOf(r.stderr).code).toBe('budget_exhausted');
    expect(t.took()).toBe(1);
  });

  it('a batch counts what single commands spent in the same month', async ({ onTestFinished }) => {
    const t = await purchase(onTestFinished);
    expect((await t.run(['search', 'shoes', '--limit', '1'], { COMPANY_DATA_BUDGET_MONTH: '3' })).code).toBe(
      0,
    );
    const domains = t.sandbox.dataset.companies.slice(0, 10).map((c) => c.domain);
    const r = await t.run(['enrich', '--input', t.inputOf(domains), '--output', join(t.dir, 'out.csv')], {
      COMPANY_DATA_BUDGET_MONTH: '3',
    });
    expect(r.code, r.stderr).toBe(4);
    expect(t.took()).toBe(3);
  });
});

describe.concurrent('a price the catalog understates', () => {
  /** A batch over domains whose records all have tech data: profile and tech cost 1 each. */
  function techDomains(t: Purchase, n: number): string[] {
    return t.sandbox.dataset.companies
      .filter((c) => Array.isArray(c.tech) && c.tech.length > 0)
      .slice(0, n)
      .map((c) => c.domain);
  }

  it('in the cache: the refused lookup reads the catalog again, and --budget holds', async ({
    onTestFinished,
  }) => {
    const t = await purchase(onTestFinished);
    expect((await t.run(['products'])).code).toBe(0);
    // The cached catalog says tech is free (the price changed after it was fetched).
    const cache = join(t.dir, 'cache');
    const file = findFile(cache, 'products.json');
    const cached = JSON.parse(readFileSync(file, 'utf8'));
    for (const product of cached.body.products) if (product.id === 'tech') product.credit_units = 0;
    writeFileSync(file, JSON.stringify(cached));
    const domains = techDomains(t, 40);
    const r = await t.run([
      'enrich',
      '--input',
      t.inputOf(domains),
      '--output',
      join(t.dir, 'out.csv'),
      '--products',
      'profile,tech',
      '--budget',
      '30',
      '--concurrency',
      '8',
    ]);
    expect(r.code, r.stderr).toBe(4);
    expect(t.took()).toBeLessThanOrEqual(30);
    // Every lookup carried max_credits: the first at the cached price, the rest at the real one.
    const lookups = t.sandbox.requests().filter((e) => e.path.startsWith('/api/domains/'));
    expect(lookups.every((e) => new URLSearchParams(e.query).has('max_credits'))).toBe(true);
    expect(lookups.filter((e) => e.status === 200).length).toBe(15);
  });

  describe('at the service: its catalog says tech is free, its lookups charge for it', () => {
    /** The test's fixture, and the base URL of a front that understates the tech price. */
    async function understated(onTestFinished: OnTestFinished): Promise<{ t: Purchase; base: string }> {
      const t = await purchase(onTestFinished);
      const proxy = understatingProxy(t.sandbox.url);
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      onTestFinished(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
      return { t, base: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` };
    }

    for (const cap of [
      ['--budget', '5'],
      ['--budget-month', '5'],
    ]) {
      it(`${cap[0]} is not exceeded: the service refuses (not charged), the run stops with exit 4`, async ({
        onTestFinished,
      }) => {
        const { t, base } = await understated(onTestFinished);
        const domains = techDomains(t, 20);
        const r = await t.run(
          [
            'enrich',
            '--input',
            t.inputOf(domains),
            '--output',
            join(t.dir, 'out.csv'),
            '--products',
            'profile,tech',
            ...cap,
          ],
          {},
          base,
        );
        expect(r.code, r.stderr).toBe(4);
        expect(problemOf(r.stderr)).toMatchObject({ code: 'max_credits_exceeded' });
        expect(t.took()).toBe(0);
      });
    }

    it('a single lookup names the price the catalog gives and stops (exit 4)', async ({ onTestFinished }) => {
      const { t, base } = await understated(onTestFinished);
      const r = await t.run(['enrich', techDomains(t, 1)[0], '--products', 'profile,tech'], {}, base);
      expect(r.code, r.stderr).toBe(4);
      expect(problemOf(r.stderr)).toMatchObject({
        code: 'max_credits_exceeded',
        detail:
          'the service prices a lookup of profile,tech above the 1 credit its product catalog publishes; nothing was charged',
      });
      expect(t.took()).toBe(0);
    });
  });
});

describe.concurrent('the ledger records what may have been charged, from every command', () => {
  // Answers slower than --timeout: the service charged them (the sandbox charges on arrival),
  // the client never heard. Only the paid requests are slow: 2.5 s against a 0.2 s timeout, which
  // undici's coarse timers may let run up to about 1.2 s.
  const slow = (t: Purchase, path: string, times = 1) => t.sandbox.faults.add('delay:2500', { path, times });
  const cases: Array<[string, string[], string]> = [
    ['enrich', ['enrich', 'acme-shoes.com'], '/api/domains/'],
    ['search', ['search', 'shoes', '--limit', '2'], '/api/search'],
    ['lookalike', ['lookalike', 'acme-shoes.com'], '/api/lookalike/'],
    ['breakdown', ['breakdown', 'country', 'shoes'], '/api/search'],
    ['api', ['api', 'GET', '/api/domains/acme-shoes.com'], '/api/domains/'],
  ];
  for (const [name, argv, path] of cases) {
    it(`${name}: a timed-out attempt is possibly charged, without a month cap`, async ({
      onTestFinished,
    }) => {
      const t = await purchase(onTestFinished);
      slow(t, path);
      const r = await t.run(['--timeout', '0.2', '--retries', '0', ...argv]);
      expect(r.code, r.stderr).toBe(5);
      expect(problemOf(r.stderr).code).toBe('timeout');
      expect(t.took()).toBe(1);
      expect(await t.ledger()).toEqual({ charged: 0, possibly_charged: 1, calls: 1 });
    });
  }

  it('a batch without --budget-month records its timed-out attempts too', async ({ onTestFinished }) => {
    const t = await purchase(onTestFinished);
    slow(t, '/api/domains/', 6);
    const domains = t.sandbox.dataset.companies.slice(0, 6).map((c) => c.domain);
    const r = await t.run([
      '--timeout',
      '0.2',
      '--retries',
      '0',
      'enrich',
      '--input',
      t.inputOf(domains),
      '--output',
      join(t.dir, 'out.csv'),
    ]);
    expect(r.code, r.stderr).toBe(6);
    expect(t.took()).toBe(6);
    expect(await t.ledger()).toEqual({ charged: 0, possibly_charged: 6, calls: 6 });
  });
});

describe.concurrent('what a run has bought is its own', () => {
  it('store clear while a batch runs is refused (exit 7): the batch never pays twice', async ({
    onTestFinished,
  }) => {
    const t = await purchase(onTestFinished, { latencyMs: 150 });
    const found = t.sandbox.dataset.companies.slice(0, 30).map((c) => c.domain);
    // Every domain twice: the duplicates read back what the run bought.
    const batch = t.run([
      'enrich',
      '--input',
      t.inputOf([...found, ...found]),
      '--output',
      join(t.dir, 'out.csv'),
      '--concurrency',
      '4',
    ]);
    while (!t.sandbox.requests().some((e) => e.path.startsWith('/api/domains/'))) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const clear = await t.run(['store', 'clear', '--yes']);
    expect(clear.code, clear.stderr).toBe(7);
    expect(problemOf(clear.stderr)).toMatchObject({ code: 'store_busy' });
    const done = await batch;
    expect(done.code, done.stderr).toBe(0);
    expect(t.took()).toBe(30);
    expect((await t.run(['store', 'clear', '--yes'])).code).toBe(0);
  });
});

describe.concurrent('a store with damaged pages', () => {
  /** A fixture whose store holds 40 answers, then garbage over every page but the first. */
  async function damagedStore(onTestFinished: OnTestFinished): Promise<{ t: Purchase; path: string }> {
    const t = await purchase(onTestFinished);
    const domains = t.sandbox.dataset.companies.slice(0, 40).map((c) => c.domain);
    // 40 answers fill several pages of the store: garbage over all but the first damages them.
    const r = await t.run(['enrich', '--input', t.inputOf(domains), '--output', join(t.dir, 'out.csv')]);
    expect(r.code, r.stderr).toBe(0);
    expect((await t.run(['spend'])).code).toBe(0);
    const path = join(t.dir, 'store.db');
    // Garbage over every page but the first (the header stays readable: the file opens).
    const size = statSync(path).size;
    const bytes = readFileSync(path);
    bytes.fill(0xa5, 4096, size);
    writeFileSync(path, bytes);
    return { t, path };
  }

  for (const argv of [['store', 'info'], ['store', 'export'], ['spend']]) {
    it(`${argv.join(' ')}: store_unavailable, exit 2, naming the file and the remedy`, async ({
      onTestFinished,
    }) => {
      const { t, path } = await damagedStore(onTestFinished);
      const r = await t.run(argv);
      expect(r.code, r.stderr).toBe(2);
      expect(JSON.parse(r.stderr)).toEqual({
        code: 'store_unavailable',
        status: 0,
        title: 'Cannot use the result store',
        detail: `${path} is not a company-data store (or is damaged)`,
        retryable: false,
        hint: `Move it aside with \`company-data store clear\` (it keeps the old file as ${path}.damaged-<time>), or give another file with --store <path>.`,
      });
    });
  }

  it('store clear moves it aside, and the next command starts a new store', async ({ onTestFinished }) => {
    const { t, path } = await damagedStore(onTestFinished);
    const r = await t.run(['store', 'clear', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    const moved = JSON.parse(r.stdout).moved_to as string;
    expect(moved).toMatch(new RegExp(`^${path}\\.damaged-\\d{8}T\\d{6}Z$`));
    expect(statSync(moved).size).toBeGreaterThan(4096);
    const info = await t.run(['store', 'info']);
    expect(info.code, info.stderr).toBe(0);
    expect(JSON.parse(info.stdout)).toMatchObject({ exists: false, answers: 0 });
  });
});

function findFile(root: string, name: string): string {
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name === name) return join(entry.parentPath, entry.name);
  }
  throw new Error(`no ${name} under ${root}`);
}

/**
 * A service whose product catalog says tech costs nothing while its lookups charge for it: every
 * request is passed to the sandbox, and the products catalog's answer is rewritten on its way back.
 */
function understatingProxy(target: string): Server {
  return rewritingFront(target, (path, catalog) => {
    if (!path.startsWith('/api/products')) return undefined;
    const products = catalog.products as Array<{ id: string; credit_units: number }>;
    return { ...catalog, products: products.map((p) => (p.id === 'tech' ? { ...p, credit_units: 0 } : p)) };
  });
}
