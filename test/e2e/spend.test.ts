// The end-to-end tests of both store-reading commands: `store clear` on a real pseudo-terminal,
// where a person answers its question, and `store export` into a reader that leaves early. (What
// `spend` reports after lookups is checked in-process: test/commands/spend.test.ts.)
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { runShell } from '../helpers/cli.js';
import { fillExample, SCOPE_PROFILE } from '../helpers/store-cases.js';
import { runOnTerminal } from '../helpers/terminal.js';

let home: string;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'cd-spend-e2e-'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('store clear on a real terminal', () => {
  async function filledStore(): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'cd-store-clear-'));
    const path = join(dir, 'store.db');
    const store = await openSqliteStore(path);
    await fillExample(store);
    await store.close();
    return path;
  }

  async function counts(path: string): Promise<{ answers: unknown; ledger: unknown }> {
    const store = await openSqliteStore(path);
    try {
      return {
        answers: store.db.prepare('SELECT COUNT(*) FROM answers').pluck().get(),
        ledger: store.db.prepare('SELECT COUNT(*) FROM ledger').pluck().get(),
      };
    } finally {
      await store.close();
    }
  }

  const terminalEnv = (path: string) => ({
    COMPANY_DATA_STORE: path,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
    NO_COLOR: '1',
  });

  const prompt = (path: string) =>
    `Remove all 5 stored answers from ${path}? The spend ledger stays (5 entries): --budget-month counts it. [y/N] `;

  it.each([
    ['y', 'Removed 5 answers from PATH; the spend ledger stays (5 entries).', { answers: 0, ledger: 5 }],
    ['no', 'Nothing was removed.', { answers: 5, ledger: 5 }],
  ])(
    'answered %j: the terminal shows the question, the answer and the outcome',
    async (keys, outcome, left) => {
      const path = await filledStore();
      try {
        const r = await runOnTerminal(['store', 'clear'], {
          env: terminalEnv(path),
          type: { after: '[y/N] ', keys: `${keys}\r` },
        });
        expect({ status: r.status, output: r.output }).toEqual({
          status: 0,
          output: `${prompt(path)}${keys}\r\n${outcome.replace('PATH', path)}\r\n`,
        });
        expect(await counts(path)).toEqual(left);
      } finally {
        rmSync(join(path, '..'), { recursive: true, force: true });
      }
    },
  );

  it('Ctrl-C at the question: exit 130, nothing removed', async () => {
    const path = await filledStore();
    try {
      const r = await runOnTerminal(['store', 'clear'], {
        env: terminalEnv(path),
        interruptAfter: '[y/N] ',
      });
      expect(r.status).toBe(130);
      expect(r.output.startsWith(prompt(path))).toBe(true);
      expect(existsSync(path)).toBe(true);
      expect(await counts(path)).toEqual({ answers: 5, ledger: 5 });
    } finally {
      rmSync(join(path, '..'), { recursive: true, force: true });
    }
  });
});

describe('store export into a reader that goes away', () => {
  it('| head -1 of 5,000 answers: one line, and the export stops with exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cd-store-export-'));
    try {
      const path = join(dir, 'store.db');
      const store = await openSqliteStore(path);
      const scope = await store.scopeId(SCOPE_PROFILE);
      // Over a megabyte of answers, many times what a pipe holds: the export meets the closed pipe.
      const record = { company_name: 'x'.repeat(200) };
      store.db.transaction(() => {
        for (let i = 0; i < 5_000; i++) {
          void store.save(scope, `c${i}.example`, {
            found: true,
            record,
            credits: 1,
            boughtAt: 0,
            run: null,
          });
        }
      })();
      await store.close();
      const r = await runShell('company-data store export | head -1', {
        env: { COMPANY_DATA_STORE: path },
        pipefail: true,
      });
      expect({ code: r.code, lines: r.stdout.split('\n').length, stderr: r.stderr }).toEqual({
        code: 0,
        lines: 2,
        stderr: '',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
