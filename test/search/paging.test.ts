// The paging loop against services the sandbox does not imitate: one that ignores exclusions, one
// that reports no total, one that sends no credit header, one that charges more than expected.
// Each page answer is a function of the request, so the loop's requests are what is checked.
import { describe, expect, it } from 'vitest';
import type { Row } from '../../src/api/search.js';
import { fetchPages } from '../../src/search/paging.js';
import { Purse } from '../../src/spend/purse.js';
import type { ApiResponse, Context, Credits, RequestOptions } from '../../src/types.js';

interface SentPage {
  method: string;
  limit: unknown;
  excluded: number;
}

type Answer = (req: { limit: number; exclude: Set<string> }) => { body: unknown; credits?: Credits };

/** A context whose client answers every search with `answer`, and the pages it was asked for. */
function fakeService(answer: Answer): { ctx: Context; sent: SentPage[] } {
  const sent: SentPage[] = [];
  const client = {
    async request<T>(options: RequestOptions): Promise<ApiResponse<T>> {
      const body = (options.body ?? {}) as { limit?: number; exclude_domains?: string[] };
      const limit = Number(options.method === 'POST' ? body.limit : options.query?.limit);
      const exclude = new Set(body.exclude_domains ?? []);
      sent.push({ method: options.method, limit, excluded: exclude.size });
      const { body: data, credits = { charged: 1 } } = answer({ limit, exclude });
      return { status: 200, data: data as T, headers: {}, credits, attempts: 1 };
    },
    lastCredits: {},
    close: async () => {},
  };
  // No base URL: no price is learnt or kept across runs (src/spend/prices.ts).
  return { ctx: { client, config: {} } as unknown as Context, sent };
}

/** A run's caps without a ledger: --budget only. */
function purse(budget?: number): Purse {
  return new Purse({ runCap: budget, baseUrl: 'test', keyId: 'test', command: 'search', now: Date.now });
}

/** A segment of `size` companies, answered like the contract says (total after exclusions). */
function segment(size: number): Answer {
  const all = Array.from({ length: size }, (_, i) => `c${i}.com`);
  return ({ limit, exclude }) => {
    const left = all.filter((d) => !exclude.has(d));
    return { body: { total: left.length, rows: left.slice(0, limit).map((domain) => ({ domain })) } };
  };
}

function collect(): { rows: Row[]; sink: { start(): void; rows(r: Row[]): void } } {
  const rows: Row[] = [];
  return { rows, sink: { start() {}, rows: (r) => rows.push(...r) } };
}

describe('fetchPages', () => {
  it('pages through a segment, a GET first and then POSTs with every domain received', async () => {
    const { ctx, sent } = fakeService(segment(2500));
    const out = collect();
    const outcome = await fetchPages(ctx, { filters: {} }, out.sink, { purse: purse() });
    expect(out.rows).toHaveLength(2500);
    expect(new Set(out.rows.map((r) => r.domain)).size).toBe(2500);
    expect(sent).toEqual([
      { method: 'GET', limit: 1000, excluded: 0 },
      { method: 'POST', limit: 1000, excluded: 1000 },
      { method: 'POST', limit: 1000, excluded: 2000 },
    ]);
    expect(outcome).toMatchObject({
      reason: 'complete',
      fetched: 2500,
      pages: 3,
      total: 2500,
      notFetched: 0,
    });
    expect(outcome.charged).toBe(3);
  });

  it('stops when a service that ignores exclusions sends nothing new', async () => {
    const all = Array.from({ length: 1000 }, (_, i) => ({ domain: `c${i}.com` }));
    const { ctx, sent } = fakeService(() => ({ body: { total: 5000, rows: all } }));
    const out = collect();
    const outcome = await fetchPages(ctx, { filters: {} }, out.sink, { purse: purse() });
    expect(out.rows).toHaveLength(1000);
    expect(sent).toHaveLength(2);
    expect(outcome).toMatchObject({ reason: 'no_new_rows', fetched: 1000, pages: 2, notFetched: 4000 });
  });

  it('without a total, a page shorter than asked is no end: the run ends on the empty page that follows', async () => {
    const counted = segment(1500);
    const { ctx, sent } = fakeService((req) => {
      const { rows } = counted(req).body as { rows: Row[] };
      return { body: { rows } };
    });
    const out = collect();
    const outcome = await fetchPages(ctx, { filters: {} }, out.sink, { purse: purse() });
    expect(out.rows).toHaveLength(1500);
    expect(sent).toHaveLength(3);
    expect(outcome.reason).toBe('complete');
    expect([outcome.total, outcome.notFetched]).toEqual([undefined, undefined]);
  });

  it('counts a page without a credit header at its expected cost', async () => {
    const counted = segment(3000);
    const { ctx, sent } = fakeService((req) => ({ body: counted(req).body, credits: {} }));
    const outcome = await fetchPages(ctx, { filters: {} }, collect().sink, { purse: purse(2) });
    expect(sent).toHaveLength(2);
    expect(outcome).toMatchObject({ reason: 'budget', fetched: 2000, charged: 2, nextPageCost: 1 });
  });

  it('expects the next page to cost the most a page has cost', async () => {
    const counted = segment(5000);
    let page = 0;
    const { ctx, sent } = fakeService((req) => {
      page++;
      return { body: counted(req).body, credits: { charged: page === 1 ? 1 : 3, remaining: 100 - page } };
    });
    // 1 + 3 = 4 spent; a third page expected at 3 would make 7 > 6.
    const outcome = await fetchPages(ctx, { filters: {} }, collect().sink, { purse: purse(6) });
    expect(sent).toHaveLength(2);
    expect(outcome).toMatchObject({ reason: 'budget', charged: 4, nextPageCost: 3, balance: 98 });
  });

  it('never writes a domain the user excluded, even from a service that sends it', async () => {
    const { ctx } = fakeService(() => ({
      body: { total: 2, rows: [{ domain: 'mine.com' }, { domain: 'new.com' }] },
    }));
    const out = collect();
    const outcome = await fetchPages(ctx, { filters: {}, excludeDomains: ['mine.com'] }, out.sink, {
      purse: purse(),
    });
    expect(out.rows).toEqual([{ domain: 'new.com' }]);
    expect(outcome.reason).toBe('complete');
  });
});
