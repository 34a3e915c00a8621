// Faults that belong to one row or to the whole set-up, in a batch run in-process against
// a loopback server in front of the sandbox:
// - one domain answered with a redirect is that row's error, and the batch goes on (exit 6);
// - a proxy that is down fails the set-up, not each row: the run stops at once with exit 2.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runPiped } from '../helpers/in-process.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { forwardTo, listenLocal } from '../helpers/server.js';

let sandbox: SandboxHandle;
let home: string;
sandboxAndDirForTests('cd-row-faults-', { companies: 2000 }, (s, d) => {
  sandbox = s;
  home = d;
});

let front: { url: string; close: () => Promise<void> };
beforeAll(async () => {
  const server = createServer((req, res) => {
    if ((req.url ?? '').startsWith('/api/domains/globex.io')) {
      res.writeHead(301, { location: 'https://elsewhere.example/api/domains/globex.io' });
      res.end();
      return;
    }
    forwardTo(sandbox.url, req, res);
  });
  front = await listenLocal(server);
});
afterAll(async () => {
  await front?.close();
});

const env = (extra: Record<string, string> = {}) => ({
  XDG_CONFIG_HOME: join(home, 'config'),
  XDG_CACHE_HOME: join(home, 'cache'),
  COMPANY_DATA_API_KEY: sandbox.keys.full,
  ...extra,
});

describe('a batch and faults of one row or of the set-up', () => {
  it('a redirect for one domain is that row error; the other rows are enriched (exit 6)', async () => {
    const input = join(home, 'redirect.csv');
    const output = join(home, 'redirect-out.csv');
    writeFileSync(input, 'domain\nacme-shoes.com\nglobex.io\ninitech.co.uk\n');
    const r = await runPiped(
      ['--base-url', front.url, '-q', 'enrich', '--input', input, '--output', output],
      {
        env: env(),
      },
    );
    expect(r.code).toBe(6);
    const rows = readFileSync(output, 'utf8').trim().split('\n');
    expect(rows).toHaveLength(4);
    const header = rows[0].split(',');
    const at = (line: string, column: string) => line.split(',')[header.indexOf(column)];
    expect(at(rows[1], 'found')).toBe('true');
    expect(at(rows[2], 'error_code')).toBe('redirect_refused');
    expect(at(rows[3], 'found')).toBe('true');
  });

  it('a proxy that is down stops the run at once with exit 2, naming the proxy', async () => {
    const input = join(home, 'proxy.csv');
    const output = join(home, 'proxy-out.json');
    const domains = sandbox.dataset.companies.slice(0, 60).map((c) => c.domain);
    writeFileSync(input, `domain\n${domains.join('\n')}\n`);
    // The catalogs are cached by a direct run first, so the batch's own lookups meet the proxy.
    for (const catalog of ['products', 'fields']) {
      const warm = await runPiped(['--base-url', sandbox.url, '-o', 'json', catalog], { env: env() });
      expect(warm.code).toBe(0);
    }
    const r = await runPiped(
      ['--base-url', sandbox.url, '-o', 'json', 'enrich', '--input', input, '--output', output],
      {
        env: env({ HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '' }),
      },
    );
    expect(r.code).toBe(2);
    const problem = JSON.parse(r.stderr.trim().split('\n').at(-1) as string);
    expect(problem.code).toBe('proxy_unreachable');
    expect(problem.detail).toContain('127.0.0.1:9');
    // Stopped at the first lookup: no row was written as if the proxy were one row's problem.
    expect(r.stderr).not.toContain('Enriched: 60 rows');
  });
});
