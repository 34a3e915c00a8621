// The exit code table of DESIGN.md, one representative problem per row, through the real binary
// against the sandbox. (130 is covered by the SIGINT test of enrich-crash.test.ts.)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor, Problem } from '../../src/problem.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import { runCli } from '../helpers/cli.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let home: string;
/** The store as the run that holds `held.csv` has it open (the busy case). */
let holder: SqliteStore | undefined;

beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 200 });
  home = mkdtempSync(join(tmpdir(), 'cd-exit-codes-'));
  writeFileSync(join(home, 'mixed.csv'), 'domain\nacme-shoes.com\nnot a domain\n');
});

afterAll(async () => {
  await holder?.close();
  await sandbox?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

type KeyName = 'full' | 'restricted' | 'free' | 'empty' | 'bogus';

interface Case {
  row: string;
  key: KeyName;
  args: string[];
  exit: number;
  /** The problem code written as JSON on stderr, when the run fails. */
  code?: string;
  fault?: string;
  /** Prepares the workspace in `home` first. */
  setup?: () => void | Promise<void>;
}

const cases: Case[] = [
  { row: 'success', key: 'full', args: ['me'], exit: 0 },
  { row: 'success: found false', key: 'full', args: ['enrich', 'no-such-company.example'], exit: 0 },
  { row: 'usage: bad flag value', key: 'full', args: ['search', 'x', '--limit', 'lots'], exit: 2 },
  {
    row: 'usage: unknown filter, refused locally',
    key: 'full',
    args: ['search', '--filter', 'colour=red'],
    exit: 2,
    code: 'usage_error',
  },
  {
    row: 'input: 400 problem from the service',
    key: 'full',
    args: ['api', 'GET', 'domains/acme-shoes.com', '--query', 'max_credits=lots'],
    exit: 2,
    code: 'invalid_request',
  },
  { row: 'key: invalid', key: 'bogus', args: ['me'], exit: 3, code: 'invalid_api_key' },
  {
    row: 'key: restricted',
    key: 'restricted',
    args: ['search', 'shoes'],
    exit: 3,
    code: 'api_key_restricted',
  },
  {
    row: 'key: plan',
    key: 'free',
    args: ['enrich', 'acme-shoes.com', '--products', 'profile,tech'],
    exit: 3,
    code: 'upgrade_required',
  },
  {
    row: 'credits: balance',
    key: 'empty',
    args: ['enrich', 'acme-shoes.com'],
    exit: 4,
    code: 'insufficient_credits',
  },
  {
    row: 'credits: max-credits',
    key: 'full',
    args: ['enrich', 'acme-shoes.com', '--products', 'profile,leads', '--max-credits', '2'],
    exit: 4,
    code: 'max_credits_exceeded',
  },
  {
    row: 'unavailable: 5xx after retries',
    key: 'full',
    args: ['me'],
    exit: 5,
    code: 'search_unavailable',
    fault: 'search_unavailable',
  },
  {
    row: 'batch finished with row errors',
    key: 'full',
    args: ['enrich', '--input', 'mixed.csv', '--output', 'mixed.out.csv'],
    exit: 6,
  },
  {
    row: 'busy: another run holds the output',
    key: 'full',
    args: ['enrich', '--input', 'mixed.csv', '--output', 'held.csv'],
    exit: 7,
    code: 'run_busy',
    // This test process stands for the run writing the output: it is alive, and holds the run
    // open in the store until the end of the file.
    setup: async () => {
      holder = await openSqliteStore(join(home, 'store.db'));
      const run = holder.beginRun(`output:${join(home, 'held.csv')}`, 'held by the test', Date.now());
      expect('busy' in run).toBe(false);
    },
  },
];

function keyOf(name: KeyName): string {
  return name === 'bogus' ? 'cd_sandbox_nonsense_0000' : sandbox.keys[name];
}

describe('exit codes of DESIGN.md', () => {
  it.each(cases)('$row -> $exit', async ({ key, args, exit, code, fault, setup }) => {
    sandbox.faults.clear();
    await setup?.();
    if (fault) sandbox.faults.add(fault, { path: '/api/', times: 10 });
    const r = await runCli(['--base-url', sandbox.url, '--retries', '1', '-o', 'json', ...args], {
      cwd: home,
      env: {
        COMPANY_DATA_API_KEY: keyOf(key),
        COMPANY_DATA_RETRY_BASE_MS: '5',
        COMPANY_DATA_RETRY_CAP_MS: '10',
        COMPANY_DATA_RETRY_FLOOR_MS: '5',
        XDG_CONFIG_HOME: join(home, 'config'),
        XDG_CACHE_HOME: join(home, 'cache'),
        COMPANY_DATA_STORE: join(home, 'store.db'),
      },
    });
    expect(r.code, r.stderr).toBe(exit);
    if (code) {
      const problem = JSON.parse(r.stderr.trim().split('\n').at(-1) ?? '');
      expect(problem).toMatchObject({ code, retryable: expect.any(Boolean), hint: expect.any(String) });
      expect(r.stdout).toBe('');
    }
    expect(r.stdout + r.stderr).not.toContain(keyOf(key));
  });

  it('maps an unforeseen failure (a bug) to 1 and every catalog code to its row', () => {
    expect(exitCodeFor(new Problem({ code: 'internal_bug' }))).toBe(1);
    for (const code of [
      'invalid_field',
      'request_too_large',
      'unsupported_media_type',
      'search_limit_exceeded',
    ])
      expect(exitCodeFor(new Problem({ code })), code).toBe(2);
    for (const code of ['rate_limited', 'internal_error', 'search_timeout', 'search_contract_error'])
      expect(exitCodeFor(new Problem({ code })), code).toBe(5);
    expect(exitCodeFor(new Problem({ code: 'insufficient_credits' }))).toBe(4);
    for (const code of ['invalid_api_key', 'api_key_restricted', 'upgrade_required'])
      expect(exitCodeFor(new Problem({ code })), code).toBe(3);
    // Set-up mistakes (test/commands/setup-mistakes.test.ts): fix, then re-run.
    for (const code of [
      'untrusted_certificate',
      'proxy_auth_required',
      'proxy_unreachable',
      'proxy_refused',
      'http1_refused',
    ])
      expect(exitCodeFor(new Problem({ code })), code).toBe(2);
    // `api` with a path or method the service lacks, whatever status it came with.
    for (const status of [404, 405])
      expect(exitCodeFor(new Problem({ code: 'unknown_endpoint', status })), String(status)).toBe(2);
    // An output that cannot be written (test/e2e/enrich-unwritable.test.ts): its own code.
    for (const code of ['write_failed', 'output_closed'])
      expect(exitCodeFor(new Problem({ code })), code).toBe(8);
  });
});
