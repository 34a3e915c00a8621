// A batch under random retryable faults and a tight rate limit still accounts for every row.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { testSeed } from '../helpers/seed.js';

let sandbox: SandboxHandle;
let dir: string;

// The seed decides which requests get a fault: a fixed one, printed; COMPANY_DATA_TEST_SEED tries another.
sandboxAndDirForTests(
  'cd-enrich-faults-',
  { companies: 2000, faultRate: 0.1, rateLimit: 40, seed: testSeed('enrich-faults', 7) },
  (s, d) => {
    sandbox = s;
    dir = d;
  },
);

// The test waits as long as the run may take (its timeoutMs): without --rate the batch is paced
// at 90% of the sandbox's limit (docs/batch.md, "Pacing"), which adds a few seconds.
it('2,000 rows under --fault-rate 0.1 and 40 requests/s: every row accounted for, few 429s, progress lines', async () => {
  // Every 429 costs at least its Retry-After (1 s) and slows the pace, so 60 distinct domains keep
  // the test short: even at the 36 a second paced (90% of the limit) they span two of the sandbox's
  // windows, and the 2,000 rows, 33 or 34 for each domain, all go through the reorder window,
  // dedupe and writer.
  const found = sandbox.dataset.companies.slice(10, 55).map((c) => c.domain);
  const unique = [...found, ...Array.from({ length: 15 }, (_, i) => `absent-${i}.example`)];
  const rows = Array.from({ length: 2000 }, (_, i) => unique[(i * 7919) % unique.length]);
  writeFileSync(join(dir, 'in.csv'), `id,domain\n${rows.map((d, i) => `${i},${d}`).join('\n')}\n`);

  // One 429 up front (its Retry-After is 1 s): with 60 domains at 36 a second, the run lasts past
  // its first progress line (one every 2 s) on any machine.
  sandbox.faults.add('rate_limited', { path: '/api/domains/' });
  const r = await runCli(
    [
      '--base-url',
      sandbox.url,
      'enrich',
      '--input',
      join(dir, 'in.csv'),
      '--output',
      join(dir, 'out.csv'),
      '--concurrency',
      '16',
      '--retries',
      '6',
      '--progress',
    ],
    {
      env: {
        COMPANY_DATA_API_KEY: sandbox.keys.full,
        XDG_CONFIG_HOME: join(dir, 'config'),
        XDG_CACHE_HOME: join(dir, 'cache'),
        // The HTTP layer's test knobs: backoff in milliseconds instead of seconds (a 429 still
        // waits its Retry-After).
        COMPANY_DATA_RETRY_BASE_MS: '10',
        COMPANY_DATA_RETRY_CAP_MS: '200',
      },
      timeoutMs: 90_000,
    },
  );
  expect([0, 6]).toContain(r.code);
  // --progress: plain lines for a log, each starting with the time, never a control sequence.
  expect(r.stderr).toMatch(
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ progress: [\d,]+\/~[\d,]+ rows, [\d,]+ found, [\d,]+ errors, [\d,]+ credits/m,
  );
  expect(r.stderr).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ Enriched: 2,000 rows/m);
  expect(r.stderr).not.toContain('\x1b');
  const output = parse(readFileSync(join(dir, 'out.csv')), { bom: true }) as string[][];
  const header = output[0];
  const at = (name: string) => header.indexOf(name);
  expect(output.length).toBe(2001);
  expect(output.slice(1).map((row) => Number(row[0]))).toEqual(rows.map((_, i) => i));
  for (const row of output.slice(1)) {
    // Accounted for: enriched, not found, or carrying the code of what went wrong.
    expect(row[at('found')] !== '' || row[at('error_code')] !== '').toBe(true);
  }
  const log = sandbox.requests().filter((e) => e.path.startsWith('/api/domains/'));
  const injected = log.filter((e) => e.fault !== null).length;
  expect(injected).toBeGreaterThan(0);
  // Each domain answered successfully at most once: retries only repeat failed attempts.
  const answered = log.filter((e) => e.status === 200 && e.fault === null).map((e) => e.path);
  expect(new Set(answered).size).toBe(answered.length);
  // The adaptive back-off keeps a 16-wide batch from storming a 40/s limit.
  const limited = log.filter((e) => e.status === 429 && e.fault === null).length;
  expect(limited).toBeLessThan(log.length / 4);
  // More than two thirds of the 45 domains the dataset has come out enriched, not as errors.
  const enriched = output.slice(1).filter((row) => row[at('found')] === 'true');
  expect(new Set(enriched.map((row) => row[at('domain')] || row[at('cd_domain')])).size).toBeGreaterThan(30);
}, 90_000);
