// Fail closed with money: where the client is unsure, it assumes the dearer case. Each case is a
// way the purchase path once gave way: a charge the answer reports that cannot be right, `api`
// deciding what is free from the raw path, a month cap that belonged to the base URL as typed, a
// store emptied between runs, an answered error counted as possibly charged. Credits are counted
// from the sandbox's balance; the lying answers and the normalising server are small fronts here.
import { truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Purchase, problemOf, purchase } from '../helpers/purchase.js';
import type { OnTestFinished } from '../helpers/sandbox.js';
import { type AnswerRewrite, answerFront, listenLocal } from '../helpers/server.js';

/** A front of `p`'s sandbox for this test: its URL, closed when the test ends. */
async function through(
  p: Purchase,
  onTestFinished: OnTestFinished,
  rewrite?: AnswerRewrite,
  route?: (path: string) => string,
): Promise<{ url: string }> {
  const started = await listenLocal(answerFront(p.sandbox.url, rewrite, route));
  onTestFinished(started.close);
  return started;
}

const found =
  (n: number, offset = 0) =>
  (sandbox: { dataset: { companies: Array<{ domain: string }> } }) =>
    sandbox.dataset.companies.slice(offset, offset + n).map((c) => c.domain);

/** The body's charge set to `charge`; the headers as the sandbox sent them (it charged 1). */
const bodyCharge =
  (charge: unknown): AnswerRewrite =>
  (path, _headers, body) =>
    path.startsWith('/api/domains/') && body.found === true
      ? { body: { ...body, credits: { ...(body.credits as object), charged: charge } } }
      : undefined;

describe.concurrent('a charge the answer reports is read the safe way', () => {
  it.for([
    ['negative', -5],
    ['zero, while the header says 1', 0],
  ] as const)(
    'a body reporting a %s charge cannot lift --budget or the month cap',
    async ([, charge], { onTestFinished }) => {
      const p = await purchase(onTestFinished);
      const lying = await through(p, onTestFinished, bodyCharge(charge));
      const input = p.inputOf(found(100)(p.sandbox));
      const r = await p.run(
        [
          'enrich',
          '--input',
          input,
          '--output',
          join(p.dir, 'out.csv'),
          '--budget',
          '10',
          '--budget-month',
          '20',
        ],
        {},
        lying.url,
      );
      expect(r.code, r.stderr).toBe(4);
      expect(problemOf(r.stderr).code).toBe('budget_exhausted');
      expect(p.took()).toBe(10);
      const ledger = await p.ledger();
      expect(ledger.charged + ledger.possibly_charged).toBe(10);
    },
  );

  it('a header and a body that disagree: the larger counts, and -v says so', async ({ onTestFinished }) => {
    const p = await purchase(onTestFinished);
    const lying = await through(p, onTestFinished, (path, headers, body) =>
      path.startsWith('/api/domains/')
        ? { headers: { ...headers, 'x-credits-charged': '0' }, body }
        : undefined,
    );
    const r = await p.run(['-v', 'enrich', 'acme-shoes.com', '-o', 'json'], {}, lying.url);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'the answer reports different charges (body credits.charged 1, header x-credits-charged 0): 1 credit counted',
    );
    expect(JSON.parse(r.stdout).results[0].credits_charged).toBe(1);
    expect(p.took()).toBe(1);
    expect(await p.ledger()).toEqual({ charged: 1, possibly_charged: 0, calls: 1 });
  });

  it('a found answer whose charge is not a number is possibly charged at its hold', async ({
    onTestFinished,
  }) => {
    const p = await purchase(onTestFinished);
    const lying = await through(p, onTestFinished, (path, headers, body) =>
      path.startsWith('/api/domains/')
        ? {
            headers: { ...headers, 'x-credits-charged': 'n/a' },
            body: { ...body, credits: { charged: 'n/a' } },
          }
        : undefined,
    );
    const r = await p.run(['enrich', 'acme-shoes.com', '-o', 'json'], {}, lying.url);
    expect(r.code, r.stderr).toBe(0);
    expect(p.took()).toBe(1);
    expect(await p.ledger()).toEqual({ charged: 0, possibly_charged: 1, calls: 1 });
  });

  it('a balance that falls by more than the ledger recorded is told at the end of a batch', async ({
    onTestFinished,
  }) => {
    const p = await purchase(onTestFinished);
    // Both figures lie (0), the balance header tells the truth.
    const lying = await through(p, onTestFinished, (path, headers, body) =>
      path.startsWith('/api/domains/')
        ? { headers: { ...headers, 'x-credits-charged': '0' }, body: { ...body, credits: { charged: 0 } } }
        : undefined,
    );
    const input = p.inputOf(found(5)(p.sandbox));
    const r = await p.run(
      ['enrich', '--input', input, '--output', join(p.dir, 'out.csv'), '--concurrency', '1'],
      {},
      lying.url,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(p.took()).toBe(5);
    // The first answer's own charge is before the first balance seen: 4 of the 5 are told.
    expect(r.stderr).toContain(
      'warning: the balance the service reported fell by 4 credits more than this run recorded as charged or possibly charged: credits not accounted for',
    );
  });
});

/** The sandbox's credit headers under other names, and no charge in the body. */
const renamed =
  (charged: string, remaining: string): AnswerRewrite =>
  (path, headers, body) => {
    if (!path.startsWith('/api/domains/')) return undefined;
    const { 'x-credits-charged': c, 'x-credits-remaining': r, ...rest } = headers;
    const { charged: _charged, ...credits } = (body.credits ?? {}) as Record<string, unknown>;
    return { headers: { ...rest, [charged]: c, [remaining]: r }, body: { ...body, credits } };
  };

describe.concurrent('credit figures under other names', () => {
  it('headers named by meaning are read: --budget counts what the service took', async ({
    onTestFinished,
  }) => {
    const p = await purchase(onTestFinished);
    const other = await through(p, onTestFinished, renamed('X-Usage-Cost', 'X-Account-Balance'));
    const input = p.inputOf(found(40)(p.sandbox));
    const argv = [
      'enrich',
      '--input',
      input,
      '--output',
      join(p.dir, 'out.csv'),
      '--products',
      'profile,leads',
    ];
    const r = await p.run([...argv, '--budget', '100'], {}, other.url);
    // Each lookup holds 6 (profile and leads) and costs what it found: the budget counts what the
    // service said, not the holds (read as charged, it stopped after 16 lookups, "96 credits").
    expect([0, 4, 6], r.stderr).toContain(r.code);
    expect(p.took()).toBeLessThanOrEqual(100);
    const ledger = await p.ledger();
    expect({ charged: ledger.charged, possibly_charged: ledger.possibly_charged }).toEqual({
      charged: p.took(),
      possibly_charged: 0,
    });
    expect(p.sandbox.requests().filter((e) => e.path.startsWith('/api/domains/')).length).toBeGreaterThan(16);
  });

  it('names nothing recognises are read from the profile setting', async ({ onTestFinished }) => {
    const p = await purchase(onTestFinished);
    const other = await through(p, onTestFinished, renamed('X-Units', 'X-Wallet'));
    const r = await p.run(
      ['enrich', 'acme-shoes.com', '--products', 'profile,leads', '-o', 'json'],
      {
        COMPANY_DATA_CREDITS_CHARGED_HEADER: 'X-Units',
        COMPANY_DATA_CREDITS_REMAINING_HEADER: 'x-wallet',
      },
      other.url,
    );
    expect(r.code, r.stderr).toBe(0);
    const { credits } = JSON.parse(r.stdout);
    expect(credits).toEqual({ charged: p.took(), remaining: p.sandbox.balances().full });
    expect(await p.ledger()).toEqual({ charged: p.took(), possibly_charged: 0, calls: 1 });
  });
});

/** Lower case, `//` collapsed, percent-escapes decoded: as many web servers read a path. */
const normalising = (url: string) => {
  const [path, query = ''] = url.split(/\?(.*)/s, 2);
  const normal = decodeURIComponent(path)
    .toLowerCase()
    .replace(/\/{2,}/g, '/')
    .replace(/\/$/, '');
  return query ? `${normal}?${query}` : normal;
};

describe.concurrent('api fails closed', () => {
  it('a max_credits the caps cannot back is refused before sending, however it is spelt', async ({
    onTestFinished,
  }) => {
    const p = await purchase(onTestFinished);
    for (const spelling of ['%2010', '0010', '+10']) {
      const r = await p.run(
        ['api', 'GET', `/api/domains/acme-shoes.com?products=profile,leads&max_credits=${spelling}`],
        { COMPANY_DATA_BUDGET_MONTH: '2' },
      );
      expect(r.code, r.stderr).toBe(4);
      expect(problemOf(r.stderr)).toMatchObject({
        code: 'budget_exhausted',
        detail: 'max_credits=10 is more than the caps leave (2 credits): nothing was sent',
      });
    }
    expect(p.took()).toBe(0);
    expect(p.sandbox.requests().filter((e) => e.path.startsWith('/api/domains/'))).toEqual([]);
  });

  it('every path a normalising server reads as paid is bought under the month cap', async ({
    onTestFinished,
  }) => {
    const p = await purchase(onTestFinished);
    const lenient = await through(p, onTestFinished, undefined, normalising);
    const requests: string[][] = [
      ['api', 'GET', '/api//domains/globex.io'],
      ['api', 'GET', '/api/DOMAINS/acme-shoes.com'],
      ['api', 'GET', '/api/%64omains/initech.com'],
      ['api', 'GET', '/api/search//?query=shoes'],
      ['api', 'POST', '/api//search', '--body', '{"query":"shoes","limit":2}'],
      ['api', 'GET', '/api/LOOKALIKE/acme-shoes.com'],
      ['api', 'DELETE', '/api/search'],
    ];
    const codes: number[] = [];
    for (const argv of requests)
      codes.push((await p.run(argv, { COMPANY_DATA_BUDGET_MONTH: '2' }, lenient.url)).code);
    expect(p.took()).toBeLessThanOrEqual(2);
    expect(p.took()).toBeGreaterThan(0);
    expect(codes.filter((c) => c === 4).length).toBeGreaterThan(0);
    const ledger = await p.ledger();
    expect(ledger.charged + ledger.possibly_charged).toBeGreaterThanOrEqual(p.took());
  });

  it('the catalogs and the account stay free, however their path is spelt', async ({ onTestFinished }) => {
    const p = await purchase(onTestFinished);
    const lenient = await through(p, onTestFinished, undefined, normalising);
    for (const path of ['/api/me', '/api/ME/', 'products', '/api//fields', '/api/%65rrors']) {
      const r = await p.run(['api', 'GET', path], { COMPANY_DATA_BUDGET_MONTH: '0' }, lenient.url);
      expect(r.code, `${path}: ${r.stderr}`).toBe(0);
    }
    expect(await p.ledger()).toEqual({ charged: 0, possibly_charged: 0, calls: 0 });
  });
});

describe.concurrent('the account is the key', () => {
  it('a month cap holds through every spelling of the base URL, and spend shows one row per key', async ({
    onTestFinished,
  }) => {
    const p = await purchase(onTestFinished);
    const port = new URL(p.sandbox.url).port;
    const spellings = [
      `http://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      `HTTP://127.0.0.1:${port}`,
      `http://127.0.0.1:${port}/.`,
      `http://127.0.0.1:0${port}`,
    ];
    for (const base of spellings) {
      for (let i = 0; i < 3; i++) {
        const r = await p.run(
          ['search', 'shoes', '--limit', '1', '-o', 'json'],
          { COMPANY_DATA_BUDGET_MONTH: '2' },
          base,
        );
        expect([0, 4], `${base}: ${r.stderr}`).toContain(r.code);
      }
    }
    expect(p.took()).toBe(2);
    const byKey = await p.run(['spend', '--by', 'key', '-o', 'json']);
    const rows = JSON.parse(byKey.stdout).rows as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ charged: 2, possibly_charged: 0, calls: 2 });
  });
});

describe.concurrent('a lost ledger is not a new month', () => {
  it('a store cut to 0 bytes refuses a month cap until store clear --ledger', async ({ onTestFinished }) => {
    const p = await purchase(onTestFinished);
    const month = { COMPANY_DATA_BUDGET_MONTH: '30' };
    const search = ['search', 'shoes', '--limit', '1', '-o', 'json'];
    expect((await p.run(search, month)).code).toBe(0);
    truncateSync(join(p.dir, 'store.db'), 0);
    const refused = await p.run(search, month);
    expect(refused.code, refused.stderr).toBe(2);
    expect(problemOf(refused.stderr)).toMatchObject({ code: 'usage_error' });
    expect(problemOf(refused.stderr).detail).toContain(
      `the store ${join(p.dir, 'store.db')} was found empty on `,
    );
    expect(refused.stderr).toContain('company-data store clear --ledger');
    // A command without a cap opens it meanwhile: the mark stays.
    expect((await p.run(['spend', '-o', 'json'])).code).toBe(0);
    expect((await p.run(search, month)).code).toBe(2);
    expect(p.took()).toBe(1);
    expect((await p.run(['store', 'clear', '--ledger', '--yes'])).code).toBe(0);
    const afresh = await p.run(search, month);
    expect(afresh.code, afresh.stderr).toBe(0);
    expect(p.took()).toBe(2);
  });

  it('a store this run creates is fine under a cap', async ({ onTestFinished }) => {
    const p = await purchase(onTestFinished);
    const r = await p.run(['search', 'shoes', '--limit', '1', '-o', 'json'], {
      COMPANY_DATA_BUDGET_MONTH: '30',
    });
    expect(r.code, r.stderr).toBe(0);
  });
});

describe.concurrent('an answered error costs nothing', () => {
  it('a batch with a wrong key exits 3 and records nothing as possibly charged', async ({
    onTestFinished,
  }) => {
    const p = await purchase(onTestFinished);
    // Every lookup answered 401 a little later, so several are in flight when the first comes back.
    p.sandbox.faults.add('delay:200', { path: '/api/domains/', times: 100 });
    const input = p.inputOf(found(40)(p.sandbox));
    const r = await p.run(
      ['enrich', '--input', input, '--output', join(p.dir, 'out.csv'), '--concurrency', '8', '--rate', '0'],
      { COMPANY_DATA_API_KEY: 'cd_wrong_key' },
    );
    expect(r.code, r.stderr).toBe(3);
    const lookups = p.sandbox.requests().filter((e) => e.path.startsWith('/api/domains/'));
    expect(lookups.length).toBeGreaterThan(1);
    expect(lookups.every((e) => e.status === 401)).toBe(true);
    expect(r.stderr).not.toContain('possibly charged');
    const byKey = await p.run(['spend', '--by', 'key', '-o', 'json'], {
      COMPANY_DATA_API_KEY: 'cd_wrong_key',
    });
    expect(JSON.parse(byKey.stdout).total).toEqual({ charged: 0, possibly_charged: 0, calls: 0 });
  });
});

describe.concurrent('prices the spec does not publish', () => {
  it('a search holds the largest charge seen for its endpoint and size, across runs', async ({
    onTestFinished,
  }) => {
    const p = await purchase(onTestFinished);
    // A service that prices searches by rows: 3 credits for a page of 2.
    const dearer = await through(p, onTestFinished, (path, headers, body) =>
      path.startsWith('/api/search')
        ? { headers: { ...headers, 'x-credits-charged': '3' }, body }
        : undefined,
    );
    const search = ['search', 'shoes', '--limit', '2', '-o', 'json'];
    const first = await p.run(search, { COMPANY_DATA_BUDGET_MONTH: '5' }, dearer.url);
    expect(first.code, first.stderr).toBe(0);
    expect(await p.ledger()).toEqual({ charged: 3, possibly_charged: 0, calls: 1 });
    // 3 of the month's 5 are spent: a second page of 2 would hold 3, and is refused before sending.
    const sent = p.sandbox.requests().length;
    const second = await p.run(search, { COMPANY_DATA_BUDGET_MONTH: '5' }, dearer.url);
    expect(second.code, second.stderr).toBe(4);
    expect(problemOf(second.stderr).code).toBe('budget_exhausted');
    expect(p.sandbox.requests().length).toBe(sent);
    // Another size has not been seen: it is held at the contract's 1 credit.
    const other = await p.run(
      ['search', 'shoes', '--limit', '1', '-o', 'json'],
      { COMPANY_DATA_BUDGET_MONTH: '5' },
      dearer.url,
    );
    expect(other.code, other.stderr).toBe(0);
  });
});
