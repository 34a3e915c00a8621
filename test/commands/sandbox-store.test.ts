// The sandbox stays a sandbox (issue 30): a --sandbox run keeps its answers and its spend in a
// store of its own, beside the real one, and says where. After a --sandbox batch, `spend` and
// `store info` on the default store show nothing of it. In-process, against a stand-in service
// for the real one and the in-process sandbox.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { KEYS } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';

let service: SandboxHandle;
let home: string;

sandboxAndDirForTests('cd-e2e-sandbox-store-', { host: '127.0.0.1' }, (s, d) => {
  service = s;
  home = d;
});

describe('--sandbox keeps a store of its own', () => {
  it('a sandbox batch leaves the default store, its ledger and answers as they were', async () => {
    const dir = mkdtempSync(join(home, 'run-'));
    const state = join(dir, 'state');
    const env = {
      XDG_STATE_HOME: state,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
    };
    const real = join(state, 'company-data', 'store.db');
    const sandboxStore = join(state, 'company-data', 'store.sandbox.db');
    // One real purchase (a service standing in for the real one): the user's store and ledger.
    const bought = await runInProcess(['enrich', 'acme-shoes.com', '-q'], {
      env: { ...env, COMPANY_DATA_BASE_URL: service.url, COMPANY_DATA_API_KEY: KEYS.full },
    });
    expect(bought.code).toBe(0);

    const batch = await runInProcess(
      ['--sandbox', 'enrich', '--input', 'examples/companies.csv', '--output', join(dir, 'out.csv')],
      { env },
    );
    expect(batch.code).toBe(6);
    expect(batch.stderr.split('\n')[0]).toMatch(
      /^Using the offline sandbox at http:\/\/127\.0\.0\.1:\d+ \(demo key, no real credits\)\.$/,
    );
    expect(batch.stderr.split('\n')[1]).toBe(`Sandbox store: ${sandboxStore}`);

    const spend = await runInProcess(['spend', '-o', 'json'], { env });
    expect({ code: spend.code, stdout: JSON.parse(spend.stdout), stderr: spend.stderr }).toEqual({
      code: 0,
      stdout: {
        since: null,
        by: 'month',
        rows: [{ month: expect.stringMatching(/^\d{4}-\d\d$/), charged: 1, possibly_charged: 0, calls: 1 }],
        total: { charged: 1, possibly_charged: 0, calls: 1 },
      },
      stderr: '',
    });
    const info = await runInProcess(['store', 'info', '-o', 'json'], { env });
    expect(info.code).toBe(0);
    const shown = JSON.parse(info.stdout);
    expect({
      path: shown.path,
      answers: shown.answers,
      found: shown.found,
      ledger: shown.ledger_entries,
    }).toEqual({
      path: real,
      answers: 1,
      found: 1,
      ledger: 1,
    });

    // The sandbox's own store holds the batch: 19 credits over the 20 distinct domains it bought.
    const sandboxSpend = await runInProcess(['--sandbox', 'spend', '-o', 'json'], { env });
    expect(JSON.parse(sandboxSpend.stdout).total).toEqual({ charged: 19, possibly_charged: 0, calls: 19 });
    const sandboxInfo = await runInProcess(['--sandbox', 'store', 'info', '-o', 'json'], { env });
    expect(JSON.parse(sandboxInfo.stdout).path).toBe(sandboxStore);
  });
});
