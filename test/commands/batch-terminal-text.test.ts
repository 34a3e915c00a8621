// A batch written to stdout: on a terminal the controls the service's text carries (C1 controls
// such as U+009B CSI, bidirectional overrides) are written as \uXXXX escapes in JSON rows, the same
// JSON value; piped, the rows keep the service's text exactly. CSV cells lose them either way.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';
import { rewritingFront } from '../helpers/server.js';

const HOSTILE = 'Evil\u009b31m Corp\u009d0;title\u009c \u202eexe.txt';

let sandbox: SandboxHandle;
let proxy: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox({ port: 0 });
  // The sandbox's answers, with a company name full of controls.
  proxy = rewritingFront(sandbox.url, (path, answer) => {
    if (!path.startsWith('/api/domains/') || !answer.found) return undefined;
    return { ...answer, company_name: HOSTILE };
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'cd-batch-tty-'));
  writeFileSync(join(dir, 'in.csv'), 'domain\nacme-shoes.com\n');
});

afterAll(async () => {
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (tty: boolean, format: string) =>
  runInProcess(
    [
      '-q',
      '--no-pager',
      'enrich',
      '--input',
      join(dir, 'in.csv'),
      '-o',
      format,
      '--include',
      'domain,company_name',
    ],
    {
      tty,
      columns: 120,
      env: {
        HOME: dir,
        COMPANY_DATA_BASE_URL: base,
        COMPANY_DATA_API_KEY: KEYS.full,
        COMPANY_DATA_STORE: join(dir, `${tty}-${format}.db`),
        XDG_CONFIG_HOME: join(dir, 'config'),
        XDG_CACHE_HOME: join(dir, 'cache'),
      },
    },
  );

describe('a batch on stdout', () => {
  it('-o ndjson on a terminal: the controls as \\u escapes, never raw', async () => {
    const r = await run(true, 'ndjson');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      '{"domain":"acme-shoes.com","found":true,"cd_domain":"acme-shoes.com","company_name":"Evil\\u009b31m Corp\\u009d0;title\\u009c \\u202eexe.txt","credits_charged":1,"bought_at":null,"error_code":null,"error_detail":null}\n',
    );
    expect(JSON.parse(r.stdout).company_name).toBe(HOSTILE);
  });

  it('-o ndjson piped: the service text exactly', async () => {
    const r = await run(false, 'ndjson');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      `{"domain":"acme-shoes.com","found":true,"cd_domain":"acme-shoes.com","company_name":"${HOSTILE}","credits_charged":1,"bought_at":null,"error_code":null,"error_detail":null}\n`,
    );
  });

  it('-o csv on a terminal: the cell without its escape sequences and controls', async () => {
    const r = await run(true, 'csv');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      'domain,found,cd_domain,company_name,credits_charged,bought_at,error_code,error_detail\nacme-shoes.com,true,acme-shoes.com,Evil Corp exe.txt,1,,,\n',
    );
  });
});
