// `search --all` over whole segments, in-process (main() piped, the real clock) against loopback
// sandboxes: every company of a segment of more than 1,500 exactly once (counted again by
// `breakdown`), and the service's 20,000-exclusion ceiling with what stops a run first.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceEnvironment } from '../helpers/command-cases.js';
import { type InProcessResult, runPiped } from '../helpers/in-process.js';
import { type SandboxHandle, sandboxForBlock } from '../helpers/sandbox.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cd-search-all-pages-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function cli(sb: SandboxHandle, args: string[]): Promise<InProcessResult> {
  // Retries in milliseconds, should a page be retried.
  const retries = {
    COMPANY_DATA_RETRY_BASE_MS: '1',
    COMPANY_DATA_RETRY_CAP_MS: '2',
    COMPANY_DATA_RETRY_FLOOR_MS: '1',
  };
  return runPiped(args, { env: { ...serviceEnvironment(dir, sb.url), ...retries } });
}

/** The domains of a CSV with the one column `domain`. */
function csvDomains(text: string): string[] {
  const [header, ...rows] = text.trim().split('\n');
  expect(header).toBe('domain');
  return rows;
}

describe('a segment of more than 1,500 companies', () => {
  const sandbox = sandboxForBlock(8000);

  it('comes back whole, every company exactly once, as many as breakdown counts', async () => {
    const segment = ['--filter', 'country=US'];
    const breakdown = await cli(sandbox(), ['breakdown', 'country', ...segment, '-o', 'json']);
    expect(breakdown.code).toBe(0);
    const size = (JSON.parse(breakdown.stdout) as { segment: { size: number } }).segment.size;
    expect(size).toBeGreaterThan(1500);

    const r = await cli(sandbox(), ['search', ...segment, '--all', '-o', 'csv', '--include', 'domain']);
    expect(r.code).toBe(0);
    const domains = csvDomains(r.stdout);
    expect(domains).toHaveLength(size);
    expect(new Set(domains).size).toBe(size);
    // And they are the US companies of the dataset, none missing.
    const us = sandbox()
      .dataset.companies.filter((c) => c.country === 'US')
      .map((c) => c.domain);
    expect([...domains].sort()).toEqual([...us].sort());
    const pages = Math.ceil(size / 1000);
    expect(r.stderr).toBe(`Fetched all ${size.toLocaleString('en-US')} companies (${pages} pages).\n`);
  });
});

describe('the 20,000-exclusion ceiling (25,000 companies)', () => {
  const sandbox = sandboxForBlock(25_000);

  it('stops after 21 pages and says how many matching companies were not fetched', async () => {
    const before = sandbox().requests().at(-1)?.seq ?? 0;
    const r = await cli(sandbox(), ['search', '--all', '-o', 'csv', '--include', 'domain']);
    expect(r.code).toBe(0);
    const domains = csvDomains(r.stdout);
    expect(domains).toHaveLength(21_000);
    expect(new Set(domains).size).toBe(21_000);
    expect(r.stderr).toBe(
      [
        "Stopped at the service's limit of 20,000 exclusions: 21,000 of 25,000 companies fetched (21 pages); 4,000 matching companies were not fetched.",
        'A search can page through at most 21,000 companies: split it with --filter (one country at a time, say) and run each part.',
        '',
      ].join('\n'),
    );
    const searches = sandbox()
      .requests()
      .filter((q) => q.seq > before && q.path === '/api/search');
    expect(searches.map((q) => q.status)).toEqual(Array(21).fill(200));
  });

  it('counts the user’s own exclusions toward the 20,000', async () => {
    const r = await cli(sandbox(), [
      'search',
      '--all',
      '-o',
      'csv',
      '--include',
      'domain',
      '--exclude-domain',
      sandbox().dataset.companies[0].domain,
    ]);
    expect(r.code).toBe(0);
    expect(csvDomains(r.stdout)).toHaveLength(20_000);
    expect(r.stderr).toBe(
      [
        'Excluding 1 domain.',
        "Stopped at the service's limit of 20,000 exclusions: 20,000 of 24,999 companies fetched (20 pages); 4,999 matching companies were not fetched.",
        'A search can page through at most 20,999 companies with your 1 exclusion: split it with --filter (one country at a time, say) and run each part.',
        '',
      ].join('\n'),
    );
  });

  it('--max-rows stops it first, with exactly that many rows', async () => {
    const r = await cli(sandbox(), ['search', '--max-rows', '2500', '-o', 'ndjson', '--include', 'domain']);
    expect(r.code).toBe(0);
    expect(new Set(r.stdout.trim().split('\n')).size).toBe(2500);
    expect(r.stderr).toBe('Stopped at --max-rows 2,500: 2,500 of 25,000 companies (3 pages).\n');
  });

  it('--budget stops it first, with exactly the pages it allows', async () => {
    const r = await cli(sandbox(), [
      'search',
      '--all',
      '--budget',
      '3',
      '-o',
      'ndjson',
      '--include',
      'domain',
    ]);
    expect(r.code).toBe(4);
    expect(new Set(r.stdout.trim().split('\n')).size).toBe(3000);
    expect(JSON.parse(r.stderr)).toMatchObject({
      code: 'budget_exhausted',
      detail:
        '--budget 3 reached after 3 credits: 3,000 of 25,000 companies written (3 pages); the next page could cost 1 credit',
    });
  });
});
