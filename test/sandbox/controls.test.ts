// The sandbox-only controls of docs/contract.md: faults (header, queue, random), latency, the
// admin endpoints, and a graceful close that neither hangs nor drops in-flight answers.
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MISSING_DOMAIN, SHOWCASE } from '../../src/sandbox/dataset.js';
import { ESCAPE_NAME } from '../../src/sandbox/endpoints.js';
import {
  call,
  clearRequestLog,
  readRequestLog,
  type SandboxHandle,
  startTestSandbox,
} from '../helpers/sandbox.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await startTestSandbox({ companies: 200 });
});
afterAll(async () => {
  await sb?.close();
});

const ACME = `/api/domains/${SHOWCASE.acme}`;
const withFault = (fault: string) => ({ key: sb.keys.full, headers: { 'x-sandbox-fault': fault } });

describe('faults by header', () => {
  it('reset destroys the connection before any response byte', async () => {
    await expect(call(sb.url, ACME, withFault('reset'))).rejects.toThrow();
    expect((await readRequestLog(sb.url)).at(-1)).toMatchObject({ path: ACME, status: null, fault: 'reset' });
  });

  it('truncate promises more body than it sends, then closes; nothing is charged', async () => {
    const before = sb.balances().full;
    const res = await request(`${sb.url}${ACME}`, {
      headers: { authorization: `Bearer ${sb.keys.full}`, 'x-sandbox-fault': 'truncate' },
    });
    expect(res.statusCode).toBe(200);
    const promised = Number(res.headers['content-length']);
    expect(promised).toBeGreaterThan(10);
    await expect(res.body.text()).rejects.toThrow();
    expect(sb.balances().full).toBe(before);
  });

  it('html502 is a 502 HTML page as a proxy would send', async () => {
    const res = await call(sb.url, ACME, withFault('html502'));
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('<html>');
    expect(res.json).toBeUndefined();
  });

  it('escape puts terminal escapes in company_name, even of an unknown domain', async () => {
    for (const path of [ACME, `/api/domains/${MISSING_DOMAIN}`]) {
      const res = await call(sb.url, path, withFault('escape'));
      expect(res.json).toMatchObject({ found: true, company_name: ESCAPE_NAME });
      expect(String(res.json?.company_name)).toContain('\x1b]0;pwned\x07');
      expect(String(res.json?.company_name)).toContain('\x1b[31m');
    }
    const rows = await call(sb.url, '/api/search', { ...withFault('escape'), query: { limit: '3' } });
    for (const row of rows.json!.rows as Array<{ company_name: string }>)
      expect(row.company_name).toBe(ESCAPE_NAME);
  });

  it('delay:<ms> still gives the normal answer; rate_limited:<s> sets Retry-After', async () => {
    const delayed = await call(sb.url, ACME, withFault('delay:30'));
    expect(delayed.json).toMatchObject({ found: true });
    expect((await readRequestLog(sb.url)).at(-1)?.fault).toBe('delay:30');
    const limited = await call(sb.url, ACME, withFault('rate_limited:17'));
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('17');
  });

  it('a fault applies to public endpoints too; an unknown fault is invalid_request', async () => {
    expect(
      (await call(sb.url, '/api/products', { headers: { 'x-sandbox-fault': 'catalog_refresh_in_progress' } }))
        .status,
    ).toBe(503);
    const bad = await call(sb.url, ACME, withFault('explode'));
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 'invalid_request' });
  });
});

describe('queued faults', () => {
  it('POST /_sandbox/faults queues a fault for the next N requests matching path prefix and method', async () => {
    const queued = await call(sb.url, '/_sandbox/faults', {
      json: { fault: 'search_unavailable', times: 2, path: '/api/search', method: 'GET' },
    });
    expect(queued.status).toBe(201);
    // Neither another path nor another method uses up the fault.
    expect((await call(sb.url, ACME, { key: sb.keys.full })).status).toBe(200);
    expect((await call(sb.url, '/api/search', { key: sb.keys.full, json: { query: '' } })).status).toBe(200);
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await call(sb.url, '/api/search', { key: sb.keys.full })).status);
    expect(statuses).toEqual([503, 503, 200]);
  });

  it('handle.faults.add and DELETE /_sandbox/faults', async () => {
    sb.faults.add('internal_error', { path: '/api/me', times: 5 });
    expect((await call(sb.url, '/api/me', { key: sb.keys.full })).status).toBe(500);
    const list = await call(sb.url, '/_sandbox/faults');
    expect(list.json?.faults).toEqual([
      { fault: 'internal_error', remaining: 4, path: '/api/me', method: null },
    ]);
    expect((await call(sb.url, '/_sandbox/faults', { method: 'DELETE' })).json).toEqual({ cleared: 1 });
    expect((await call(sb.url, '/api/me', { key: sb.keys.full })).status).toBe(200);
    expect(() => sb.faults.add('nonsense')).toThrow(/unknown fault/);
    const refused = await call(sb.url, '/_sandbox/faults', { json: { fault: 'delay:soon' } });
    expect(refused.json).toMatchObject({ code: 'invalid_request' });
  });
});

describe('random faults, latency and rate', () => {
  async function faultSequence(seed: number): Promise<Array<string | null>> {
    const s = await startTestSandbox({ companies: 50, seed, faultRate: 0.5 });
    try {
      for (let i = 0; i < 30; i++) await call(s.url, '/api/me', { key: s.keys.full }).catch(() => undefined);
      return s.requests().map((r) => r.fault);
    } finally {
      await s.close();
    }
  }

  it('faultRate gives retryable faults on authenticated requests, repeatable from the seed', async () => {
    const first = await faultSequence(7);
    expect(await faultSequence(7)).toEqual(first);
    const kinds = new Set(first.filter((f) => f !== null));
    expect(kinds.size).toBeGreaterThan(1);
    for (const kind of kinds) expect(['internal_error', 'rate_limited', 'reset', 'html502']).toContain(kind);
    expect(first.filter((f) => f === null).length).toBeGreaterThan(0);
  });

  it('latencyMs delays answers without changing them; /api/me reports the rate limit', async () => {
    const s = await startTestSandbox({ companies: 50, latencyMs: 20, rateLimit: 50 });
    try {
      const me = await call(s.url, '/api/me', { key: s.keys.full });
      expect(me.json).toMatchObject({ key_name: 'full', rate_limit_per_second: 50 });
      // A lower bound only: no answer may come back before the latency has passed (a timer that
      // fires early is re-armed), however fast the machine.
      for (let i = 0; i < 10; i++) {
        const sent = performance.now();
        await call(s.url, '/api/products');
        expect(performance.now() - sent).toBeGreaterThanOrEqual(20);
      }
    } finally {
      await s.close();
    }
  });
});

describe('admin endpoints', () => {
  it('GET /_sandbox/balances and DELETE /_sandbox/requests', async () => {
    const balances = await call(sb.url, '/_sandbox/balances');
    expect(balances.json).toEqual(sb.balances());
    expect(Object.keys(balances.json ?? {}).sort()).toEqual(['empty', 'free', 'full', 'restricted']);
    await clearRequestLog(sb.url);
    expect(await readRequestLog(sb.url)).toEqual([]);
    expect((await call(sb.url, '/_sandbox/nothing')).status).toBe(404);
  });
});

describe('graceful close', () => {
  it('finishes an in-flight request, closes idle keep-alive sockets, and resolves', async () => {
    const s = await startTestSandbox({ companies: 50, latencyMs: 300 });
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    try {
      // Leaves an idle keep-alive connection behind.
      await (await request(`${s.url}/api/products`, { dispatcher: agent })).body.text();
      const inFlight = request(`${s.url}/api/me`, {
        dispatcher: agent,
        headers: { authorization: `Bearer ${s.keys.full}` },
      });
      // Wait until the request is in the server before closing.
      while (s.requests().length < 2) await new Promise((r) => setTimeout(r, 5));
      await s.close();
      const res = await inFlight;
      expect(res.statusCode).toBe(200);
      expect(((await res.body.json()) as { key_name: string }).key_name).toBe('full');
      await expect(request(`${s.url}/api/products`)).rejects.toThrow();
    } finally {
      await agent.close();
    }
  });
});
