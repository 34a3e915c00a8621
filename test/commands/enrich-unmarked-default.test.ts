// A batch against a service whose products catalog marks no product as default (the spec leaves
// the default selection "not shown"): the result columns come from the answers, so every field
// bought is written, and the output is the one a catalog with `default` flags gives.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { runPiped } from '../helpers/in-process.js';
import { call, sandboxAndDirForTests } from '../helpers/sandbox.js';

let unmarked: SandboxHandle;
let marked: SandboxHandle;
let dir: string;

sandboxAndDirForTests('cd-enrich-unmarked-', { companies: 2000, catalogWithoutDefaults: true }, (s, d) => {
  unmarked = s;
  dir = d;
});
// The same data with the catalog as the contract shows it: the reference output.
beforeAll(async () => {
  marked = await startSandbox({ port: 0, companies: 2000 });
});
afterAll(async () => {
  await marked?.close();
});

const file = (name: string) => join(dir, name);

/** Each run has a store of its own unless `store` names one (a resume passes the same). */
function enrich(sandbox: SandboxHandle, args: string[], store?: string) {
  return runPiped(['--base-url', sandbox.url, 'enrich', ...args], {
    env: {
      ...(store ? { COMPANY_DATA_STORE: store } : {}),
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, `cache-${sandbox === marked ? 'marked' : 'unmarked'}`),
    },
  });
}

const charged = (sandbox: SandboxHandle) => 1_000_000 - sandbox.balances().full;

// Not found first: the header must wait for an answer that shows the fields.
const INPUT = [
  'name,domain',
  'Nobody,no-such-company.example',
  'Acme,acme-shoes.com',
  'Globex,globex.io',
  'Acme again,ACME-SHOES.COM',
  '',
].join('\n');

const HEADER =
  'name,domain,found,cd_domain,company_name,country,site_category,employee_range,founded_year,credits_charged,bought_at,error_code,error_detail';

describe('a products catalog without default flags', () => {
  it('is what the sandbox serves with catalogWithoutDefaults', async () => {
    const res = await call(unmarked.url, '/api/products');
    const products = res.json?.products as Array<Record<string, unknown>>;
    expect(products.map((p) => p.id)).toEqual(['profile', 'tech', 'leads']);
    for (const product of products) expect(product).not.toHaveProperty('default');
  });

  it('writes every field it bought, exactly as with a catalog that marks the default', async () => {
    writeFileSync(file('in.csv'), INPUT);
    const reference = await enrich(marked, ['--input', file('in.csv'), '--output', file('reference.csv')]);
    expect(reference.code).toBe(0);
    const expected = readFileSync(file('reference.csv'), 'utf8');
    expect(expected.split('\n')[0]).toBe(HEADER);
    expect(expected).toContain('Acme,acme-shoes.com,true,acme-shoes.com,Acme Shoes,US,fashion,');

    const before = charged(unmarked);
    const r = await enrich(unmarked, ['--input', file('in.csv'), '--output', file('out.csv')]);
    expect(readFileSync(file('out.csv'), 'utf8')).toBe(expected);
    expect(r.code).toBe(0);
    expect(charged(unmarked) - before).toBe(2); // acme-shoes.com and globex.io, profile each
    // The answers went to the store: nothing beside the output.
    expect(readdirSync(dir).filter((name) => name.startsWith('out.csv'))).toEqual(['out.csv']);
  });

  it('carries the fields in ndjson too', async () => {
    writeFileSync(file('in-nd.csv'), INPUT);
    const r = await enrich(unmarked, [
      '--input',
      file('in-nd.csv'),
      '--output',
      file('out.ndjson'),
      '-o',
      'ndjson',
    ]);
    expect(r.code).toBe(0);
    const rows = readFileSync(file('out.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.map((row) => row.company_name)).toEqual([
      null,
      'Acme Shoes',
      'Globex Corporation',
      'Acme Shoes',
    ]);
    expect(Object.keys(rows[0])).toEqual(HEADER.split(','));
  });

  it('resumes into the bytes an uninterrupted run writes, the header taken from a stored answer', async () => {
    writeFileSync(file('in-resume.csv'), INPUT);
    const options = ['--input', file('in-resume.csv'), '--max-credits', '1'];
    const reference = await enrich(marked, [...options, '--output', file('resume-reference.csv')]);
    expect(reference.code).toBe(0);

    // The resume is the same command on the same store.
    const store = file('resume-store.db');
    const before = charged(unmarked);
    const first = await enrich(
      unmarked,
      [...options, '--output', file('resume.csv'), '--budget', '1'],
      store,
    );
    expect(first.code).toBe(4); // the budget bought acme-shoes.com only
    expect(charged(unmarked) - before).toBe(1);
    expect(readFileSync(file('resume.csv'), 'utf8')).toContain('acme-shoes.com,Acme Shoes,US,fashion,');
    expect(first.stderr).toContain(`the answers bought so far are kept in the store (${store})`);
    expect(existsSync(store)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.startsWith('resume.csv'))).toEqual(['resume.csv']);

    const second = await enrich(unmarked, [...options, '--output', file('resume.csv')], store);
    expect(second.code, second.stderr).toBe(0);
    expect(charged(unmarked) - before).toBe(2); // globex.io; acme-shoes.com came from the store
    // What the interrupted run bought is its own: charged, with no bought_at, as if never stopped.
    expect(readFileSync(file('resume.csv'), 'utf8')).toBe(readFileSync(file('resume-reference.csv'), 'utf8'));
  });
});
