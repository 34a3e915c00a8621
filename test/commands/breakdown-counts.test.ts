// `company-data breakdown`, in-process (main() piped, the real clock) against a loopback sandbox; the
// numbers are checked against an independent count over the sandbox's own dataset. The picture on
// a terminal: test/commands/breakdown.test.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Company } from '../../src/sandbox/dataset.js';
import { type InProcessResult as RunResult, runPiped } from '../helpers/in-process.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  dir = await mkdtemp(join(tmpdir(), 'cd-breakdown-e2e-'));
});
afterAll(async () => {
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

function env(): Record<string, string> {
  return {
    COMPANY_DATA_API_KEY: sandbox.keys.full,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    LANG: 'C.UTF-8',
  };
}

function cli(args: string[]): Promise<RunResult> {
  return runPiped(['--base-url', sandbox.url, ...args], { env: env() });
}

interface Bucket {
  value: string;
  count: number;
  share: number;
}
interface Breakdown {
  field: string;
  segment: { size: number; description: string };
  coverage: { with_value: number; missing: number };
  buckets: Bucket[];
  other: { buckets: number; count: number } | null;
}

/** Counts the facet over the dataset, independently of the sandbox's engine. */
function countBy(field: keyof Company, keep: (c: Company) => boolean) {
  const counts = new Map<string, number>();
  let missing = 0;
  let size = 0;
  for (const company of sandbox.dataset.companies) {
    if (!keep(company)) continue;
    size++;
    const value = company[field];
    if (value === null || value === undefined) missing++;
    else counts.set(String(value), (counts.get(String(value)) ?? 0) + 1);
  }
  return { counts, missing, size };
}

async function breakdown(args: string[]): Promise<Breakdown> {
  const r = await cli(['-o', 'json', 'breakdown', ...args]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

describe('breakdown numbers', () => {
  it('equal an independent count of the dataset', async () => {
    const expected = countBy('country', (c) => c.site_category === 'fashion');
    const result = await breakdown(['country', '--filter', 'site_category=fashion', '--limit', '100']);
    expect(result.field).toBe('country');
    expect(result.segment.size).toBe(expected.size);
    expect(result.coverage.missing).toBe(expected.missing);
    expect(result.coverage.with_value).toBe(expected.size - expected.missing);
    expect(new Map(result.buckets.map((b) => [b.value, b.count]))).toEqual(expected.counts);
    for (const b of result.buckets) expect(b.share).toBeCloseTo(b.count / result.coverage.with_value, 3);
    expect(result.other).toBeNull();
  });

  it('put the rest in other with --limit, for the ecommerce population', async () => {
    const expected = countBy('site_category', (c) => c.is_ecommerce && c.country === 'US');
    const result = await breakdown([
      'site_category',
      '--population',
      'ecommerce',
      '--filter',
      'country=US',
      '--limit',
      '3',
    ]);
    const sorted = [...expected.counts.values()].sort((a, b) => b - a);
    expect(result.buckets.map((b) => b.count)).toEqual(sorted.slice(0, 3));
    for (const b of result.buckets) expect(b.count).toBe(expected.counts.get(b.value));
    expect(result.other).toEqual({
      buckets: sorted.length - 3,
      count: sorted.slice(3).reduce((a, b) => a + b, 0),
    });
    expect(result.segment.size).toBe(expected.size);
  });

  it('gives csv and ndjson rows that add up to the segment size', async () => {
    const expected = countBy('employee_range', () => true);
    const csv = await cli(['-o', 'csv', 'breakdown', 'employee_range', '--limit', '2']);
    expect(csv.code).toBe(0);
    const [header, ...lines] = csv.stdout.trim().split('\n');
    expect(header).toBe('value,count,share,kind');
    const kinds = lines.map((l) => l.split(',')[3]);
    expect(kinds).toEqual(['value', 'value', 'other', 'missing']);
    expect(lines.reduce((n, l) => n + Number(l.split(',')[1]), 0)).toBe(expected.size);
    expect(lines.at(-1)).toBe(`,${expected.missing},,missing`);

    const ndjson = await cli(['-o', 'ndjson', 'breakdown', 'employee_range', '--limit', '2']);
    const rows = ndjson.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.kind)).toEqual(kinds);
  });
});

describe('breakdown checks', () => {
  it.each([
    [['tech'], 'field `tech` is not a breakdown facet'],
    [['contry'], 'unknown field `contry` (did you mean `country`?)'],
    [['country', '--limit', '101'], '--limit must be a whole number between 1 and 100'],
    [['country', '--filter', 'site_category=fashon'], 'did you mean `fashion`'],
  ])('refuses %j locally with exit 2', async (args, message) => {
    const since = sandbox.requests().at(-1)?.seq ?? 0;
    const r = await cli(['-o', 'table', 'breakdown', ...args]);
    expect(r.stderr).toContain(message);
    expect(r.code).toBe(2);
    expect(sandbox.requests().filter((q) => q.seq > since && q.path === '/api/search')).toEqual([]);
  });

  it('lists the facets when the field is not one', async () => {
    const r = await cli(['-o', 'table', 'breakdown', 'tech']);
    expect(r.stderr).toContain('Facets: ');
    for (const facet of ['country', 'site_category', 'primary_platform', 'employee_range'])
      expect(r.stderr).toContain(facet);
  });
});
