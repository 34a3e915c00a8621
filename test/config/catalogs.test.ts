// The catalog adapters and the on-disk catalog cache (under config.cacheDir), against a real
// HTTP server on 127.0.0.1 and the real HTTP client.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  adaptErrors,
  adaptFields,
  adaptProducts,
  CATALOG_TTL_MS,
  catalogCacheDir,
  loadErrors,
  loadFields,
  loadProducts,
  refreshCatalogs,
} from '../../src/api/catalogs.js';
import { resolveConfig } from '../../src/config.js';
import { createClient } from '../../src/http/client.js';
import { resetContractWarning } from '../../src/http/contract.js';
import { createIO } from '../../src/io.js';
import { Problem } from '../../src/problem.js';
import { storeHandle } from '../../src/store/handle.js';
import type { Client, Context } from '../../src/types.js';

const PRODUCTS = {
  products: [
    {
      id: 'profile',
      description: 'Company profile',
      fields: ['domain', 'country'],
      bundles: ['starter'],
      credit_units: 1,
      default: true,
      add_on: false,
    },
  ],
};

describe('adapters', () => {
  it('read the contract shape', () => {
    expect(adaptProducts(PRODUCTS)).toEqual(PRODUCTS.products);
  });

  it('accept a bare array or a renamed envelope, default missing members, keep unknown ones', () => {
    const bare = adaptProducts([{ id: 'tech', credit_units: '2', tier: 'gold' }]);
    // No `default` or `add_on` invented: the catalog said neither.
    expect(bare).toStrictEqual([
      {
        id: 'tech',
        description: '',
        fields: [],
        bundles: [],
        credit_units: 2,
        tier: 'gold',
      },
    ]);
    const renamed = adaptFields({ version: 3, items: [{ name: 'country', filter: { values: ['US'] } }] });
    expect(renamed[0]).toMatchObject({
      name: 'country',
      product: '',
      type: 'string',
      facet: undefined,
      filter: { name: 'country', value_source: 'enum', values: ['US'] },
      billing: { product: '', credit_units: 0 },
      capabilities: undefined,
      plans: [],
    });
    expect(adaptFields([{ name: 'x', filter: null }])[0].filter).toBeNull();
    expect(adaptFields([{ name: 'x' }])[0].filter).toBeUndefined();
  });

  it('read a field by meaning: filter as a name, a flag or an object; values beside or nested; facets by other names', () => {
    const read = adaptFields({
      data: {
        fields: {
          country: {
            product: { id: 'profile' },
            filter: 'hq_country',
            values: ['US', 'GB'],
            breakdown: true,
          },
          category: { filterable: 'yes', allowed_values: [{ value: 'fashion' }], facetable: 'no' },
          size: { filter: { param: 'size', options: ['1-10'], kind: 'exact' }, is_facet: 1 },
          text: {
            filter: { name: 'text', value_source: 'free' },
            available_in: { search: true, lookalike: false },
          },
          constructor: { filter: false },
          year: { filter_name: 'founded' },
        },
      },
    });
    expect(
      read.map((f) => ({
        name: f.name,
        product: f.product,
        filter: f.filter,
        facet: f.facet,
        capabilities: f.capabilities,
      })),
    ).toEqual([
      {
        name: 'country',
        product: 'profile',
        filter: { name: 'hq_country', value_source: 'enum', values: ['US', 'GB'] },
        facet: true,
        capabilities: undefined,
      },
      {
        name: 'category',
        product: '',
        filter: { name: 'category', value_source: 'enum', values: ['fashion'] },
        facet: false,
        capabilities: undefined,
      },
      {
        name: 'size',
        product: '',
        filter: {
          name: 'size',
          param: 'size',
          options: ['1-10'],
          kind: 'exact',
          value_source: 'enum',
          values: ['1-10'],
        },
        facet: true,
        capabilities: undefined,
      },
      {
        name: 'text',
        product: '',
        filter: { name: 'text', value_source: 'free' },
        facet: undefined,
        capabilities: ['search'],
      },
      { name: 'constructor', product: '', filter: null, facet: undefined, capabilities: undefined },
      {
        name: 'year',
        product: '',
        filter: { name: 'founded', value_source: 'free' },
        facet: undefined,
        capabilities: undefined,
      },
    ]);
  });

  it('take facets listed once for the whole catalog', () => {
    const read = adaptFields({ fields: [{ name: 'country' }, { name: 'tech' }], facets: ['country'] });
    expect(read.map((f) => [f.name, f.facet])).toEqual([
      ['country', true],
      ['tech', false],
    ]);
  });

  it('errors: envelope members kept, entries defaulted', () => {
    const catalog = adaptErrors({ contract_version: '2030-01-01', errors: [{ code: 'x', status: 418 }] });
    expect(catalog).toEqual({
      contract_version: '2030-01-01',
      content_type: 'application/problem+json',
      errors: [
        {
          code: 'x',
          status: 418,
          http_status: 418,
          title: 'x',
          detail: '',
          retryable: false,
          charged: false,
        },
      ],
    });
  });

  it('a body with no catalog in it is an unexpected_response problem', () => {
    expect(() => adaptProducts({ hello: 'world' })).toThrow(Problem);
    expect(() => adaptFields('<html>')).toThrow(/fields catalog/);
  });
});

describe('loading through the cache', () => {
  let server: Server;
  let baseUrl: string;
  const seen: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
  let fieldsFailures = 0;
  let version = '2026-08-26';

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ path: req.url ?? '', headers: req.headers });
      const send = (status: number, body: unknown, type = 'application/json') => {
        res.writeHead(status, { 'content-type': type });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/api/products') return send(200, PRODUCTS);
      if (req.url === '/api/errors') return send(200, { contract_version: version, errors: [{ code: 'a' }] });
      if (req.url === '/api/fields') {
        if (fieldsFailures > 0) {
          fieldsFailures--;
          return send(
            503,
            { code: 'catalog_refresh_in_progress', status: 503, title: 'Catalog refresh in progress' },
            'application/problem+json',
          );
        }
        return send(200, [{ name: 'country', product: 'profile' }]);
      }
      send(404, { code: 'not_found', status: 404, title: 'Not found' }, 'application/problem+json');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  let dir: string;
  let stderr: string;
  let clients: Client[];

  async function context(): Promise<Context> {
    const env = {
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      COMPANY_DATA_API_KEY: 'cd_secret_key_123456',
    };
    const config = await resolveConfig({ baseUrl }, env, false);
    const io = createIO({
      stdout: new Writable({ write: (_c, _e, done) => done() }),
      stderr: new Writable({
        write(chunk, _e, done) {
          stderr += chunk.toString();
          done();
        },
      }),
      env: {},
    });
    const client = createClient(config, { retryPolicy: { baseMs: 1, capMs: 2 }, env: {} });
    clients.push(client);
    return {
      io,
      config,
      client,
      argv: [],
      env: {},
      now: Date.now,
      command: 'test',
      store: storeHandle(false, [], { env: {} }),
    };
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cd-catalogs-'));
    seen.length = 0;
    stderr = '';
    clients = [];
    version = '2026-08-26';
    resetContractWarning();
  });

  afterEach(async () => {
    for (const c of clients) await c.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fetches once without the key, then serves from the cache', async () => {
    const ctx = await context();
    expect(await loadProducts(ctx)).toEqual(PRODUCTS.products);
    expect(await loadProducts(await context())).toEqual(PRODUCTS.products);
    expect(seen.map((r) => r.path)).toEqual(['/api/products']);
    expect(seen[0].headers.authorization).toBeUndefined();
    expect(seen[0].headers['x-api-key']).toBeUndefined();
  });

  it('refetches after refreshCatalogs and after the TTL', async () => {
    const ctx = await context();
    await loadProducts(ctx);
    await refreshCatalogs(ctx);
    await loadProducts(ctx);
    expect(seen).toHaveLength(2);

    const file = join(catalogCacheDir(ctx.config.cacheDir, baseUrl), 'products.json');
    const entry = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...entry, fetched_at: Date.now() - CATALOG_TTL_MS - 1 }));
    await loadProducts(ctx);
    expect(seen).toHaveLength(3);
  });

  it('a cache that cannot be written does not fail the command', async () => {
    const ctx = await context();
    writeFileSync(join(dir, 'blocker'), '');
    ctx.config.cacheDir = join(dir, 'blocker', 'sub');
    expect(await loadProducts(ctx)).toEqual(PRODUCTS.products);
    expect(await loadProducts(ctx)).toEqual(PRODUCTS.products);
    expect(seen).toHaveLength(2);
  });

  it('catalog_refresh_in_progress drops the cached catalogs before the retry', async () => {
    const ctx = await context();
    await loadProducts(ctx);
    const cached = join(ctx.config.cacheDir, 'catalogs');
    fieldsFailures = 1;
    expect(await loadFields(ctx)).toMatchObject([{ name: 'country', product: 'profile' }]);
    expect(seen.map((r) => r.path)).toEqual(['/api/products', '/api/fields', '/api/fields']);
    // Only the fields catalog fetched after the refresh is cached now.
    await loadProducts(ctx);
    expect(seen.map((r) => r.path).at(-1)).toBe('/api/products');
    expect(existsSync(cached)).toBe(true);
  });

  it('warns once when the server speaks another contract version', async () => {
    version = '2031-01-01';
    const ctx = await context();
    const catalog = await loadErrors(ctx);
    expect(catalog.contract_version).toBe('2031-01-01');
    await refreshCatalogs(ctx);
    await loadErrors(ctx);
    expect(stderr.match(/speaks contract 2031-01-01/g)).toHaveLength(1);
  });
});
