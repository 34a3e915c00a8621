// A batch whose lookups meet `catalog_refresh_in_progress` retries them and drops the cached
// catalogs, as single lookups do: the next command fetches the changed catalog instead of reading
// the old one from the cache.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runPiped } from '../helpers/in-process.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let dir: string;

sandboxAndDirForTests('cd-enrich-catalog-', { companies: 50 }, (s, d) => {
  sandbox = s;
  dir = d;
});

const env = (cache: string) => ({
  COMPANY_DATA_API_KEY: sandbox.keys.full,
  XDG_CONFIG_HOME: join(dir, 'config'),
  XDG_CACHE_HOME: join(dir, cache),
});
const catalogFetches = (since: number) =>
  sandbox.requests().filter((r) => r.seq > since && r.path === '/api/products').length;
const lastSeq = () => sandbox.requests().at(-1)?.seq ?? 0;

async function batchThenProducts(cache: string, fault: boolean): Promise<number> {
  const input = join(dir, `${cache}.csv`);
  writeFileSync(input, `domain\n${sandbox.dataset.companies[12].domain}\n`);
  if (fault) sandbox.faults.add('catalog_refresh_in_progress', { path: '/api/domains/', times: 1 });
  const batch = await runPiped(
    ['--base-url', sandbox.url, 'enrich', '--input', input, '--output', `${input}.out.csv`],
    { env: env(cache) },
  );
  expect(batch.code, batch.stderr).toBe(0);
  const since = lastSeq();
  const products = await runPiped(['--base-url', sandbox.url, 'products'], { env: env(cache) });
  expect(products.code, products.stderr).toBe(0);
  return catalogFetches(since);
}

describe('enrich --input and catalog_refresh_in_progress', () => {
  it('retries the lookup and leaves the catalogs to be fetched again', async () => {
    expect(await batchThenProducts('cache-fault', true)).toBe(1);
  });

  it('without the fault, the next command reads the catalog from the cache', async () => {
    expect(await batchThenProducts('cache-plain', false)).toBe(0);
  });
});
