// Exit codes as the real binary's process exits with them, with stdout and stderr kept apart: a few
// rows of the README's table end to end (bin/ sets process.exitCode from main()). Every row, with
// its whole output, is tested in-process in test/commands/exit-codes.test.ts; 130 is covered by
// the SIGINT test of enrich-crash.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import { runCli } from '../helpers/cli.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let home: string;
/** The store as the run that holds `held.json` has it open (the busy case). */
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
  {
    row: 'usage: bad flag value',
    key: 'full',
    args: ['search', 'x', '--limit', 'lots'],
    exit: 2,
    code: 'usage_error',
  },
  { row: 'key: invalid', key: 'bogus', args: ['me'], exit: 3, code: 'invalid_api_key' },
  {
    row: 'batch finished with row errors',
    key: 'full',
    args: ['enrich', '--input', 'mixed.csv', '--output', 'mixed.out.json'],
    exit: 6,
  },
  {
    row: 'busy: another run holds the output',
    key: 'full',
    args: ['enrich', '--input', 'mixed.csv', '--output', 'held.json'],
    exit: 7,
    code: 'run_busy',
    // This test process stands for the run writing the output: it is alive, and holds the run
    // open in the store until the end of the file.
    setup: async () => {
      holder = await openSqliteStore(join(home, 'store.db'));
      const run = holder.beginRun(`output:${join(home, 'held.json')}`, 'held by the test', Date.now());
      expect('busy' in run).toBe(false);
    },
  },
];

function keyOf(name: KeyName): string {
  return name === 'bogus' ? 'cd_sandbox_nonsense_0000' : sandbox.keys[name];
}

describe('exit codes of the real binary', () => {
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
    // Success: the answer on stdout alone (the batch writes its rows to its --output).
    if (exit === 0) {
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toMatchObject({ plan: 'pro', key_name: 'full' });
    }
    if (code) {
      const problem = JSON.parse(r.stderr.trim().split('\n').at(-1) ?? '');
      expect(problem).toMatchObject({ code, retryable: expect.any(Boolean), hint: expect.any(String) });
      expect(r.stdout).toBe('');
    }
    expect(r.stdout + r.stderr).not.toContain(keyOf(key));
  });
});
