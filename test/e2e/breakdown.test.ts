// `company-data breakdown`: the real binary against an in-process sandbox; the numbers are checked
// against an independent count over the sandbox's own dataset.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Company } from '../../src/sandbox/dataset.js';
import { type RunResult, runCli, startInTerminal } from '../helpers/cli.js';
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
  return runCli(['--base-url', sandbox.url, ...args], { env: env() });
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

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** Runs the binary in a real pseudo-terminal of the given width; returns its lines, escapes removed. */
async function inTerminal(columns: number, args: string[]): Promise<string[]> {
  const { stdout } = await startInTerminal(['--base-url', sandbox.url, ...args], { env: env(), columns })
    .done;
  return stdout
    .replace(ANSI, '')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');
}

describe('breakdown picture in a terminal', () => {
  it('scales the bars with the width and keeps every line within it', async () => {
    const args = ['-q', 'breakdown', 'country', 'shoes', '--limit', '5'];
    const narrow = await inTerminal(60, args);
    const wide = await inTerminal(120, args);
    for (const [lines, width] of [
      [narrow, 60],
      [wide, 120],
    ] as const) {
      expect(lines[0]).toMatch(/shoes.*: [\d,]+ compan/);
      expect(lines[1]).toMatch(/^country coverage: [\d.]+% \([\d,]+ with a value, [\d,]+ missing\)$/);
      for (const line of lines) expect([...line].length).toBeLessThanOrEqual(width);
    }
    const bar = (line: string) => (line.match(/[█▏▎▍▌▋▊▉]+$/) ?? [''])[0].length;
    const narrowBars = narrow.filter((l) => bar(l) > 0);
    const wideBars = wide.filter((l) => bar(l) > 0);
    expect(narrowBars.length).toBeGreaterThanOrEqual(5);
    expect(wideBars.length).toBe(narrowBars.length);
    // The largest bucket's bar fills the rest of the line: 60 columns more room, 60 cells longer.
    const longest = (lines: string[]) => Math.max(...lines.map(bar));
    expect(longest(wideBars) - longest(narrowBars)).toBe(60);
    expect(Math.max(...wideBars.map((l) => [...l].length))).toBe(120);
    expect(Math.max(...narrowBars.map((l) => [...l].length))).toBe(60);
  });

  it('draws # bars when the terminal is not Unicode', async () => {
    const ascii = await startInTerminal(
      ['--base-url', sandbox.url, '-q', 'breakdown', 'country', '--limit', '3'],
      {
        env: { ...env(), LANG: 'C', LC_ALL: 'C' },
        columns: 80,
      },
    ).done;
    const text = ascii.stdout.replace(ANSI, '');
    expect(text).toMatch(/#{5,}/);
    expect(text).not.toContain('█');
  });
});
