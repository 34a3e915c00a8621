// Exact-output cases for the commands that read the result store (`spend`, `store ...`): each
// case gets its own scratch directory with a store filled through the store's own methods
// (scopeId, save, record) at instants fixed against FIXED_NOW, runs main() in this process on a
// pretend terminal or a pipe, and compares the whole stdout and stderr. No sandbox: these
// commands never call the service.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { groupDigits } from '../../src/output/numbers.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import type { Scope } from '../../src/store/types.js';
import { type CommandCase, caseEnvironment, DIR } from './command-cases.js';
import { FIXED_NOW, runInProcess } from './in-process.js';

/** The store of a case, as cases write it: in the case's scratch directory (DIR). */
export const STORE = `${DIR}/store.db`;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const KEY_A = '1111aaaa2222bbbb';
export const KEY_B = 'c0ffee00c0ffee00';

export const SCOPE_PROFILE: Scope = {
  baseUrl: 'https://api.example.com',
  keyId: KEY_A,
  products: ['profile'],
  include: undefined,
  maxCredits: undefined,
};
export const SCOPE_TECH: Scope = { ...SCOPE_PROFILE, products: ['tech', 'profile'], maxCredits: 5 };

/**
 * The example store: five answers of every age and outcome under two scopes, and a ledger of
 * five entries over two months, two keys and two commands (one attempt possibly charged).
 */
export async function fillExample(store: SqliteStore): Promise<void> {
  const profile = await store.scopeId(SCOPE_PROFILE);
  const tech = await store.scopeId(SCOPE_TECH);
  const found = (record: Record<string, unknown>, credits: number, age: number) => ({
    found: true,
    record,
    credits,
    boughtAt: FIXED_NOW - age,
    run: null,
  });
  const notFound = (age: number) => ({
    found: false,
    record: null,
    credits: 0,
    boughtAt: FIXED_NOW - age,
    run: null,
  });
  await store.save(
    profile,
    'acme-shoes.com',
    found({ domain: 'acme-shoes.com', company_name: 'Acme Shoes', country: 'US' }, 1, 2 * HOUR),
  );
  await store.save(
    tech,
    'globex.io',
    found({ domain: 'globex.io', company_name: 'Globex', tech: ['shopify', 'klaviyo'] }, 2, 3 * DAY),
  );
  await store.save(
    profile,
    'initech.dev',
    found({ domain: 'initech.dev', company_name: '=HYPERLINK("x")' }, 1, 45 * DAY),
  );
  await store.save(profile, 'no-such.example', notFound(10 * DAY));
  await store.save(profile, 'gone.example', notFound(2 * DAY));
  const base = { baseUrl: 'https://api.example.com', keyId: KEY_A };
  await store.settle({
    entry: {
      ...base,
      at: Date.parse('2026-10-03T09:00:00Z'),
      command: 'enrich',
      credits: 1,
      outcome: 'charged',
    },
  });
  await store.settle({
    entry: {
      ...base,
      at: Date.parse('2026-11-20T10:00:00Z'),
      command: 'enrich',
      credits: 2,
      outcome: 'charged',
    },
  });
  await store.settle({
    entry: {
      ...base,
      at: Date.parse('2026-11-21T08:30:00Z'),
      command: 'api',
      credits: 3,
      outcome: 'unknown',
    },
  });
  await store.settle({
    entry: {
      ...base,
      at: Date.parse('2026-11-24T10:00:00Z'),
      command: 'enrich',
      credits: 2,
      outcome: 'charged',
    },
  });
  await store.settle({
    entry: {
      baseUrl: 'sandbox',
      keyId: KEY_B,
      at: Date.parse('2026-11-24T11:00:00Z'),
      command: 'enrich',
      credits: 5,
      outcome: 'charged',
    },
  });
}

export interface StoreCase
  extends Pick<
    CommandCase,
    'name' | 'argv' | 'tty' | 'env' | 'stdin' | 'stdinTTY' | 'wantCode' | 'wantStdout' | 'wantStderr'
  > {
  /** Fills the store before the run; without it there is no store file at all. */
  fill?: (store: SqliteStore) => Promise<void>;
  /** Whether the store file exists after the run (a command must not create one to report on). */
  wantStoreExists?: boolean;
  /** Checks the store after the run (opened again through openSqliteStore). */
  after?: (store: SqliteStore) => Promise<void>;
}

/** Runs the case and compares the exit code and the whole stdout and stderr. */
export async function expectStoreCase(c: StoreCase): Promise<void> {
  const dir = mkdtempSync('/tmp/cdt-');
  const path = join(dir, 'store.db');
  const real = (text: string) => text.replaceAll(DIR, dir);
  const named = (text: string) => text.replaceAll(dir, DIR);
  try {
    if (c.fill) {
      const store = await openSqliteStore(path);
      await c.fill(store);
      await store.close();
    }
    // The environment of every command case, without a service: these commands never call one.
    const env = caseEnvironment({
      env: {
        COMPANY_DATA_BASE_URL: undefined,
        COMPANY_DATA_API_KEY: undefined,
        COMPANY_DATA_STORE: STORE,
        ...c.env,
      },
    });
    const result = await runInProcess(c.argv.map(real), {
      tty: c.tty,
      env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, real(v)])),
      stdin: c.stdin,
      stdinTTY: c.stdinTTY,
    });
    // SIZE in an expectation stands for the store's size measured here after the run (SQLite's
    // page layout decides it); SIZE_GROUPED for the same as people read it (45,056), the spaces
    // after it making up the difference in length (a table cell keeps its width).
    const size = storeSize(path);
    const sized = (text: string) =>
      text
        .replace(/SIZE_GROUPED( *)/g, (cell) => groupDigits(size).padEnd(cell.length))
        .replaceAll('SIZE', String(size));
    expect({ code: result.code, stdout: named(result.stdout), stderr: named(result.stderr) }).toEqual({
      code: c.wantCode,
      stdout: sized(c.wantStdout),
      stderr: sized(c.wantStderr),
    });
    if (c.wantStoreExists !== undefined) expect(existsSync(path)).toBe(c.wantStoreExists);
    if (c.after) {
      const store = await openSqliteStore(path);
      try {
        await c.after(store);
      } finally {
        await store.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The size of a store as `store info` must report it: the file and its write-ahead log. */
function storeSize(path: string): number {
  return [path, `${path}-wal`].reduce((sum, p) => sum + (existsSync(p) ? statSync(p).size : 0), 0);
}
