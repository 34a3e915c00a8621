// `api` on a lookalike, search or breakdown path holds what its command holds: the largest charge
// seen for that endpoint and size (src/spend/prices.ts), read by the one buyer (src/spend/buy.ts),
// not one credit. Under a month cap that leaves less than that price, nothing is sent.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogCacheDir } from '../../src/api/catalogs.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { KEYS } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { startTestSandbox } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  dir = mkdtempSync(join(tmpdir(), 'cd-api-prices-'));
  // What earlier runs learnt of this service: a lookalike of k=5 cost 3, a 5-row search 4, a
  // 5-bucket breakdown 6.
  const cache = join(dir, 'cache', 'company-data');
  mkdirSync(catalogCacheDir(cache, sandbox.url), { recursive: true });
  writeFileSync(
    join(catalogCacheDir(cache, sandbox.url), 'prices.json'),
    JSON.stringify({ 'lookalike:5': 3, 'search:5': 4, 'breakdown:5': 6 }),
  );
  env = {
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    COMPANY_DATA_BASE_URL: sandbox.url,
    COMPANY_DATA_API_KEY: KEYS.full,
  };
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

const paid = (since: number) =>
  sandbox.requests().filter((r) => r.seq > since && /^\/api\/(lookalike|search)/.test(r.path));

describe('api holds the learnt price of an endpoint without a published one', () => {
  it.each([
    ['a lookalike of k=5 (query)', ['GET', '/api/lookalike/acme-shoes.com?k=5'], 3],
    ['a 5-row search (POST body)', ['POST', '/api/search', '--body', '{"query":"shoes","limit":5}'], 4],
    ['a 5-bucket breakdown (query)', ['GET', '/api/search?breakdown=country&limit=5'], 6],
  ])(
    '%s: refused before sending under a month cap below its price, sent under one above',
    async (_name, args, price) => {
      const since = sandbox.requests().at(-1)?.seq ?? 0;
      // A ledger of its own: the month's spend starts at 0.
      const own = { ...env, COMPANY_DATA_STORE: join(dir, `store-${price}.db`) };
      const refused = await runInProcess(['api', ...args, '--budget-month', String(price - 1)], {
        env: own,
      });
      expect(refused.code, refused.stderr).toBe(4);
      expect(refused.stderr).toContain(`no room for a request of up to ${price} credits`);
      expect(paid(since)).toEqual([]);
      const sent = await runInProcess(['api', ...args, '--budget-month', String(price)], { env: own });
      expect(sent.code, sent.stderr).toBe(0);
      expect(paid(since)).toHaveLength(1);
    },
  );
});
