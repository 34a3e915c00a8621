import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Lookups } from '../../src/batch/lookup.js';
import { runStoreOf } from '../../src/batch/run-store.js';
import { createScheduler, PROGRESS_MS, type Slot } from '../../src/batch/scheduler.js';
import { createPacer } from '../../src/pace.js';
import { Problem } from '../../src/problem.js';
import { Purse } from '../../src/spend/purse.js';
import { freshnessAt } from '../../src/store/location.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import type { ApiResponse, Client, RequestOptions } from '../../src/types.js';

/** A clock the test moves by hand, so pauses are checked without waiting or timing. */
function manualClock() {
  let t = 1_000_000;
  const timers: Array<{ at: number; fn: () => void }> = [];
  return {
    now: () => t,
    setTimer(fn: () => void, ms: number) {
      timers.push({ at: t + ms, fn });
      return {};
    },
    advance(ms: number) {
      t += ms;
      for (const timer of timers.splice(0)) {
        if (timer.at <= t) timer.fn();
        else timers.push(timer);
      }
    },
    pendingTimers: () => timers.length,
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A scheduler whose requests are paced at `rate` a second, on a clock the test moves. */
function pacedScheduler(rate: number, concurrency: number) {
  const clock = manualClock();
  const pacer = createPacer(rate, { now: clock.now, setTimer: clock.setTimer, clearTimer: () => {} });
  const scheduler = createScheduler({ concurrency, now: clock.now, setTimer: clock.setTimer, pacer });
  return { clock, scheduler, pacer, start: clock.now() };
}

describe('createScheduler', () => {
  it('never has more than the limit in flight and serves waiters in order', async () => {
    const s = createScheduler({ concurrency: 2 });
    const got: number[] = [];
    const slots: Slot[] = [];
    for (let i = 0; i < 5; i++)
      s.acquire().then((slot) => {
        got.push(i);
        slots.push(slot!);
      });
    await flush();
    expect(got).toEqual([0, 1]);
    expect(s.inFlight).toBe(2);
    expect(s.waiting).toBe(3);
    await s.release(slots[0], 'success');
    await flush();
    expect(got).toEqual([0, 1, 2]);
    expect(s.inFlight).toBe(2);
  });

  it('ignores a second release of the same slot', async () => {
    const s = createScheduler({ concurrency: 1 });
    const a = (await s.acquire())!;
    await s.release(a, 'success');
    await s.release(a, 'success');
    expect(s.inFlight).toBe(0);
  });

  it('a 429 with Retry-After pauses every worker and the pacer for that long, and keeps the rate', async () => {
    const { clock, scheduler: s, pacer } = pacedScheduler(10, 8);
    const held = await Promise.all(Array.from({ length: 8 }, () => s.acquire()));
    s.rateLimited(2);
    expect(s.pausedUntil).toBe(clock.now() + 2000);
    expect(pacer.rate).toBe(10);
    expect(s.rateLimitCuts).toBe(0);
    // The limiter saw more than the pacer let through in a window: the margin doubles, once per
    // pause however many requests bring the same 429.
    expect(pacer.windowMs).toBe(1050);
    s.rateLimited(2);
    expect(pacer.windowMs).toBe(1050);
    expect(s.limit).toBe(8);
    for (const slot of held) await s.release(slot!, 'failure');
    let started = 0;
    for (let i = 0; i < 6; i++) s.acquire().then(() => started++);
    await flush();
    expect(started).toBe(0); // paused, although slots are free
    clock.advance(1999);
    await flush();
    expect(started).toBe(0);
    clock.advance(1);
    await flush();
    expect(started).toBe(6); // the concurrency is not cut: the rate is
  });

  it('a refusal without Retry-After cuts the rate once for the requests on their way, and pauses nobody', async () => {
    const { scheduler: s, pacer } = pacedScheduler(100, 16);
    const held = await Promise.all(Array.from({ length: 8 }, () => s.acquire()));
    // Eight requests on their way see the same gateway's refusal: one cut.
    for (let i = 0; i < 8; i++) s.overloaded(undefined, 503);
    s.rateLimited(undefined);
    expect(pacer.rate).toBeCloseTo(70, 9);
    expect(s.rateLimitCuts).toBe(1);
    expect(s.pausedUntil).toBe(0);
    expect(s.tryAcquire()).toBeDefined();
    let resumed = false;
    s.resumed().then(() => {
      resumed = true;
    });
    await flush();
    expect(resumed).toBe(true);
    for (const slot of held) await s.release(slot!, 'success');
  });

  it('a 503 with Retry-After pauses every worker for it; a 502 or 504 without one changes nothing', () => {
    const { clock, scheduler: s, pacer } = pacedScheduler(100, 4);
    s.overloaded(undefined, 502);
    s.overloaded(undefined, 504);
    expect([pacer.rate, s.rateLimitCuts, s.pausedUntil]).toEqual([100, 0, 0]);
    s.overloaded(3, 503);
    expect(s.pausedUntil).toBe(clock.now() + 3000);
    expect(s.tryAcquire()).toBeUndefined();
    expect(pacer.rate).toBe(100);
  });

  it('answers raise a cut rate again, additively', async () => {
    const { clock, scheduler: s, pacer } = pacedScheduler(100, 4);
    s.overloaded();
    expect(pacer.rate).toBeCloseTo(70, 9);
    clock.advance(1000);
    await s.release((await s.acquire())!, 'success');
    // 5 % of the rate cut (100) for each second.
    expect(pacer.rate).toBeCloseTo(75, 9);
  });

  it('paces refusals while the run makes progress: an answer in the last 30 s', async () => {
    const { clock, scheduler: s } = pacedScheduler(10, 4);
    expect(s.pacesRefusals()).toBe(true);
    clock.advance(PROGRESS_MS);
    expect(s.pacesRefusals()).toBe(false);
    await s.release((await s.acquire())!, 'success');
    expect(s.pacesRefusals()).toBe(true);
    await s.release((await s.acquire())!, 'failure');
    expect(s.pacesRefusals()).toBe(true);
    s.stop();
    expect(s.pacesRefusals()).toBe(false);
  });

  it('without a pacer a refusal cuts nothing, and a Retry-After still pauses', () => {
    const clock = manualClock();
    const s = createScheduler({ concurrency: 2, now: clock.now, setTimer: clock.setTimer });
    s.overloaded();
    expect(s.rateLimitCuts).toBe(0);
    expect(s.pausedUntil).toBe(0);
    s.rateLimited(1);
    expect(s.pausedUntil).toBe(clock.now() + 1000);
  });

  it('counts consecutive failures and resets on a success', async () => {
    const s = createScheduler({ concurrency: 1 });
    for (let i = 0; i < 3; i++) await s.release((await s.acquire())!, 'failure');
    expect(s.consecutiveFailures).toBe(3);
    await s.release((await s.acquire())!, 'success');
    expect(s.consecutiveFailures).toBe(0);
  });

  it('holds the requests waiting for their turn in --rate for a pause, then spaces them from its end', async () => {
    const { clock, scheduler: s, start } = pacedScheduler(4, 8);
    const sent: number[] = [];
    for (let i = 0; i < 6; i++) {
      await s.acquire();
      const paced = s.pace();
      if (paced) paced.then(() => sent.push(clock.now() - start));
      else sent.push(clock.now() - start);
    }
    // The first went at once; a 429 then holds the rest for its Retry-After of 2 s: then one
    // every 250 ms (up to 50 ms early) from the end of the pause.
    expect(sent).toEqual([0]);
    s.rateLimited(2);
    for (let ms = 0; ms < 3000; ms += 10) {
      clock.advance(10);
      await flush();
    }
    expect(sent).toEqual([0, 2000, 2200, 2450, 2700]);
  });

  it("keeps one pause for the slots and the rate: a RateLimit header's pause holds the slots, a Retry-After holds the turns", async () => {
    const { clock, scheduler: s, pacer } = pacedScheduler(50, 2);
    // Someone else used the key up: nothing left until the window resets in 2 s.
    pacer.observe({ quota: 50, windowSeconds: 1, remaining: 0, resetSeconds: 2 });
    expect(s.pausedUntil).toBe(clock.now() + 2000);
    expect(s.tryAcquire()).toBeUndefined();
    let started = 0;
    s.acquire().then(() => started++);
    clock.advance(1999);
    await flush();
    expect(started).toBe(0);
    clock.advance(1);
    await flush();
    expect([started, s.pausedUntil]).toEqual([1, 0]);
    expect(pacer.take()).toBeUndefined();
    // A Retry-After the scheduler was told of is the pacer's hold: the next turn waits for it.
    s.rateLimited(1);
    expect(pacer.hold.until).toBe(clock.now() + 1000);
    expect(s.pausedUntil).toBe(clock.now() + 1000);
    let turned = false;
    s.pace()!.then(() => {
      turned = true;
    });
    clock.advance(999);
    await flush();
    expect(turned).toBe(false);
    clock.advance(1);
    await flush();
    expect([turned, s.pausedUntil]).toEqual([true, 0]);
  });

  it('a stop clears the timer that ends a pause, so a stopped run waits for nothing', async () => {
    const clock = manualClock();
    const armed: unknown[] = [];
    const cleared: unknown[] = [];
    const s = createScheduler({
      concurrency: 1,
      now: clock.now,
      setTimer: (fn, ms) => {
        const timer = clock.setTimer(fn, ms);
        armed.push(timer);
        return timer;
      },
      clearTimer: (timer) => cleared.push(timer),
    });
    s.rateLimited(60);
    const waiter = s.acquire();
    expect(armed).toHaveLength(1);
    s.stop();
    expect(cleared).toEqual(armed);
    expect(await waiter).toBeNull();
  });

  it('releases the requests waiting for their turn in --rate when it stops', async () => {
    const { scheduler: s } = pacedScheduler(0.1, 4);
    expect(s.pace()).toBeUndefined();
    let released = 0;
    for (let i = 0; i < 3; i++) s.pace()!.then(() => released++);
    s.stop();
    await flush();
    expect(released).toBe(3);
    expect(s.pace()).toBeUndefined();
  });

  it('after stop, waiters and new acquirers get null while in-flight work drains', async () => {
    const s = createScheduler({ concurrency: 1 });
    const first = (await s.acquire())!;
    const waiter = s.acquire();
    s.stop();
    expect(await waiter).toBeNull();
    expect(await s.acquire()).toBeNull();
    let idle = false;
    s.idle().then(() => {
      idle = true;
    });
    await flush();
    expect(idle).toBe(false);
    await s.release(first, 'success');
    await flush();
    expect(idle).toBe(true);
  });
});

/**
 * The dispatcher on top of the scheduler and the budget, with a stand-in client whose answers
 * arrive on later turns of the event loop in a random order, so many lookups overlap.
 */
describe('Lookups', () => {
  // A real store on a scratch file; each Lookups gets a scope of its own, so nothing is reused
  // from one case (or one fast-check run) to the next.
  let dir: string;
  let store: SqliteStore;
  let scopes = 0;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cd-lookups-'));
    store = await openSqliteStore(join(dir, 'store.db'));
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  async function runStore() {
    const keyId = `scope-${scopes++}`;
    const scope = await store.scopeId({
      baseUrl: 'stub',
      keyId,
      products: undefined,
      include: undefined,
      maxCredits: undefined,
    });
    const run = await store.beginRun(keyId, '', Date.now());
    if ('busy' in run) throw new Error('a run of its own cannot be busy');
    return runStoreOf(store, scope, freshnessAt(Date.now(), {}, run.id), run, Date.now);
  }

  type Answer = { charged: number } | { problem: Problem };

  function stubClient(answer: (domain: string, call: number) => Answer) {
    const calls: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    let charged = 0;
    const client: Client = {
      lastCredits: {},
      async close() {},
      async request<T>(options: RequestOptions): Promise<ApiResponse<T>> {
        const domain = decodeURIComponent(options.path.slice('/api/domains/'.length));
        calls.push(domain);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          for (let i = Math.floor(Math.random() * 4); i >= 0; i--) await flush();
          const outcome = answer(domain, calls.length);
          if ('problem' in outcome) {
            if (outcome.problem.status === 429) await options.onRetry?.(outcome.problem, 1, 0);
            throw outcome.problem;
          }
          charged += outcome.charged;
          const data = {
            found: outcome.charged > 0,
            domain,
            company_name: domain,
            credits: { charged: outcome.charged },
          };
          return {
            status: 200,
            data: data as T,
            headers: {},
            credits: { charged: outcome.charged },
            attempts: 1,
          };
        } finally {
          inFlight--;
        }
      },
    };
    return { client, calls, stats: () => ({ maxInFlight, charged }) };
  }

  /** A purse with a run's --budget only, and no ledger. */
  function purseFor(budget: number | undefined): Purse {
    return new Purse({ runCap: budget, baseUrl: 'test', keyId: 'test', command: 'enrich', now: Date.now });
  }

  async function lookups(
    client: Client,
    options: { budget?: number; concurrency?: number; worstCase?: number } = {},
  ) {
    const scheduler = createScheduler({ concurrency: options.concurrency ?? 8 });
    return {
      scheduler,
      lookups: new Lookups({
        client,
        query: {},
        worstCase: options.worstCase ?? 2,
        resultFields: ['domain', 'company_name'],
        purse: purseFor(options.budget),
        scheduler,
        store: await runStore(),
        maxConsecutiveFailures: 5,
      }),
    };
  }

  it('never lets the charges pass the budget, whatever the overlap and the costs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 16 }),
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 60 }),
        async (budget, concurrency, costs) => {
          const stub = stubClient((domain) => ({ charged: costs[Number(domain.split('.')[0].slice(1))] }));
          const { lookups: l } = await lookups(stub.client, { budget, concurrency, worstCase: 2 });
          const results = await Promise.all(costs.map((_, i) => l.resultFor(`d${i}.com`)));
          expect(stub.stats().charged).toBeLessThanOrEqual(budget);
          expect(stub.stats().maxInFlight).toBeLessThanOrEqual(concurrency);
          const charged = results.reduce((sum, r) => sum + r.credits_charged, 0);
          expect(charged).toBe(stub.stats().charged);
          const exhausted = results.filter((r) => r.error_code === 'budget_exhausted').length;
          expect(exhausted + stub.calls.length).toBe(costs.length);
          if (exhausted > 0) expect(l.stopReason).toBe('budget_exhausted');
        },
      ),
      { numRuns: 60 },
    );
  });

  it('asks for a domain once however many rows name it at the same time', async () => {
    const stub = stubClient(() => ({ charged: 1 }));
    const { lookups: l } = await lookups(stub.client);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => l.resultFor(i % 2 ? 'a.com' : 'b.com')),
    );
    expect(stub.calls.sort()).toEqual(['a.com', 'b.com']);
    expect(results.every((r) => r.found === true)).toBe(true);
  });

  it('insufficient_credits stops new requests; the rows not asked carry the code', async () => {
    const stub = stubClient((_, call) =>
      call >= 3 ? { problem: new Problem({ code: 'insufficient_credits' }) } : { charged: 1 },
    );
    const { lookups: l } = await lookups(stub.client, { concurrency: 1 });
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await l.resultFor(`d${i}.com`));
    expect(stub.calls.length).toBe(3);
    expect(results.map((r) => r.error_code)).toEqual([
      null,
      null,
      'insufficient_credits',
      'insufficient_credits',
      'insufficient_credits',
      'insufficient_credits',
    ]);
    expect(l.stopReason).toBe('insufficient_credits');
  });

  it('a refused key aborts the run', async () => {
    const stub = stubClient(() => ({ problem: new Problem({ code: 'invalid_api_key' }) }));
    const { lookups: l } = await lookups(stub.client, { concurrency: 1 });
    await l.resultFor('a.com');
    await l.resultFor('b.com');
    expect(l.fatal?.code).toBe('invalid_api_key');
    expect(stub.calls).toEqual(['a.com']);
  });

  it('stops after the configured run of consecutive unavailable answers, not after 4xx ones', async () => {
    const unavailable = new Problem({ code: 'internal_error' });
    const rejected = new Problem({ code: 'invalid_request' });
    const stub = stubClient((domain) => ({ problem: domain.startsWith('bad') ? rejected : unavailable }));
    const { lookups: l } = await lookups(stub.client, { concurrency: 1 });
    for (let i = 0; i < 4; i++) await l.resultFor(`down${i}.com`);
    await l.resultFor('bad.com'); // the service answered: the run of failures ends
    for (let i = 4; i < 8; i++) await l.resultFor(`down${i}.com`);
    expect(l.stopReason).toBeUndefined();
    await l.resultFor('down8.com');
    expect(l.stopReason).toBe('too_many_failures');
    expect((await l.resultFor('later.com')).error_code).toBe('too_many_failures');
    expect(stub.calls).not.toContain('later.com');
  });

  it('paces every request and every retry with --rate, and a stop sends nothing more', async () => {
    const { clock, scheduler, start } = pacedScheduler(4, 8);
    const sent: string[] = [];
    const client: Client = {
      lastCredits: {},
      async close() {},
      async request<T>(options: RequestOptions): Promise<ApiResponse<T>> {
        const domain = decodeURIComponent(options.path.slice('/api/domains/'.length));
        sent.push(`${domain}@${clock.now() - start}`);
        if (domain === 'a.com' && sent.length === 1) {
          // A 500 (not a throttle), answered once b.com waits for its turn: the retry waits only
          // for a turn of its own, after b.com's.
          await flush();
          await options.onRetry?.(new Problem({ code: 'internal_error', status: 500 }), 1, 0);
          sent.push(`${domain}@${clock.now() - start}`);
        }
        const data = { found: true, domain, company_name: domain, credits: { charged: 1 } };
        return { status: 200, data: data as T, headers: {}, credits: { charged: 1 }, attempts: 1 };
      },
    };
    const l = new Lookups({
      client,
      query: {},
      worstCase: 1,
      resultFields: ['domain', 'company_name'],
      purse: purseFor(undefined),
      scheduler,
      store: await runStore(),
      maxConsecutiveFailures: 5,
    });
    // What is due now goes first (a claim in the store is a step of its own), then the clock moves.
    const advanceTo = async (ms: number) => {
      await flush();
      while (clock.now() - start < ms) {
        clock.advance(10);
        await flush();
      }
    };
    const results = ['a.com', 'b.com', 'c.com'].map((d) => l.resultFor(d));
    await advanceTo(600);
    results.push(l.resultFor('d.com'));
    await advanceTo(1100);
    // One turn every 250 ms, up to 50 ms early; a.com's retry took the turn after the requests
    // already waiting, and d.com the one after it, once the first turn left the window (4 in
    // any 1,025 ms; the clock moves 10 ms at a time).
    expect(sent).toEqual(['a.com@0', 'b.com@200', 'c.com@450', 'a.com@700', 'd.com@1030']);
    results.push(l.resultFor('e.com'));
    await advanceTo(1200);
    l.stop('interrupted');
    const rows = await Promise.all(results);
    expect(rows.map((r) => r.error_code)).toEqual([null, null, null, null, 'interrupted']);
    expect(sent).toHaveLength(5);
  });

  it('a 429 seen on a retry pauses the run for its Retry-After, and keeps the concurrency', async () => {
    const limited = new Problem({ code: 'rate_limited', status: 429, retryAfterSeconds: 1 });
    const stub = stubClient((_, call) => (call === 1 ? { problem: limited } : { charged: 1 }));
    const { lookups: l, scheduler } = await lookups(stub.client, { concurrency: 8 });
    const before = Date.now();
    await l.resultFor('a.com');
    expect(scheduler.pausedUntil).toBeGreaterThanOrEqual(before + 1000);
    expect(scheduler.limit).toBe(8);
  });
});
