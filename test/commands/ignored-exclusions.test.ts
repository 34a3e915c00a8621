// A service that ignores `exclude_domains` (a front that strips them from the POST body before the
// sandbox sees them): the exclusions still hold, since the client leaves out every row naming an
// excluded domain, and stderr says how many came back. Lookalike never sends exclusions (the
// endpoint takes none): the candidates on the list are left out and counted the same way.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lines, serviceEnvironment } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';
import { forwardTo, listenLocal } from '../helpers/server.js';

let sandbox: SandboxHandle;
let front: { url: string; close: () => Promise<void> };
let dir: string;
/** exclude_domains the front received and dropped, per request. */
const ignored: unknown[] = [];

beforeAll(async () => {
  sandbox = await startTestSandbox();
  const target = new URL(sandbox.url);
  front = await listenLocal(
    createServer((req, res) => {
      if (req.method !== 'POST' || !req.url?.startsWith('/api/search'))
        return forwardTo(sandbox.url, req, res);
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        text += chunk;
      });
      req.on('end', async () => {
        const { exclude_domains, ...rest } = JSON.parse(text) as Record<string, unknown>;
        ignored.push(exclude_domains);
        const answer = await fetch(new URL(req.url ?? '', target), {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
          body: JSON.stringify(rest),
        });
        const headers = Object.fromEntries([...answer.headers].filter(([name]) => name !== 'content-length'));
        res.writeHead(answer.status, headers).end(await answer.text());
      });
    }),
  );
  dir = mkdtempSync(join(tmpdir(), 'cd-ignored-exclusions-'));
});

afterAll(async () => {
  await front?.close();
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function run(argv: string[], base = front.url) {
  return runInProcess(argv, { env: serviceEnvironment(dir, base) });
}

const domains = (rows: Array<{ domain: string }>) => rows.map((row) => row.domain);

describe('a service that ignores exclusions', () => {
  it('a single search prints no excluded domain, and says how many came back', async () => {
    const plain = JSON.parse((await run(['search', 'shoes', '--limit', '5'])).stdout);
    const excluded = domains(plain.rows).slice(0, 2);
    const before = ignored.length;
    const r = await run([
      'search',
      'shoes',
      '--limit',
      '5',
      '--exclude-domain',
      excluded[0],
      '--exclude-domain',
      `https://www.${excluded[1].toUpperCase()}/about`,
    ]);
    expect(ignored.slice(before)).toEqual([excluded]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ...plain, rows: plain.rows.slice(2) });
    expect(r.stderr).toBe(
      lines(
        'Excluding 2 domains.',
        'warning: the service returned 2 rows naming excluded domains despite the exclusions; they were left out.',
        'Showing 3 of 125 companies',
      ),
    );
  });

  it('search --all prints no excluded domain, and says how many came back', async () => {
    const plain = JSON.parse((await run(['search', 'shoes', '--all'])).stdout);
    const excluded = domains(plain.rows)[3];
    const r = await run(['search', 'shoes', '--all', '--exclude-domain', excluded]);
    expect(r.code).toBe(0);
    const got = JSON.parse(r.stdout);
    expect(domains(got.rows)).toEqual(domains(plain.rows).filter((d) => d !== excluded));
    expect(r.stderr).toBe(
      lines(
        'Excluding 1 domain.',
        'warning: the service returned 1 row naming excluded domains despite the exclusions; it was left out.',
        'Fetched all 124 companies (1 page).',
      ),
    );
  });

  it('lookalike, one seed and several: no excluded candidate, and the count on stderr', async () => {
    const plain = JSON.parse((await run(['lookalike', 'acme-shoes.com', '-k', '5'])).stdout);
    const excluded = domains(plain.results).slice(1, 3);
    const one = await run([
      'lookalike',
      'acme-shoes.com',
      '-k',
      '5',
      '--exclude-domain',
      excluded[0],
      '--exclude-domain',
      excluded[1],
    ]);
    expect(one.code).toBe(0);
    const rows = JSON.parse(one.stdout).results;
    expect(domains(rows).some((d: string) => excluded.includes(d))).toBe(false);
    expect(rows.length).toBe(5);
    expect(one.stderr).toBe(
      lines(
        'Excluding 2 domains.',
        'Left out 2 candidates on the exclusion list.',
        '5 lookalikes of acme-shoes.com',
      ),
    );
    const several = await run([
      'lookalike',
      'acme-shoes.com',
      'umbrella-health.de',
      '-k',
      '5',
      '--exclude-domain',
      excluded[0],
    ]);
    expect(several.code).toBe(0);
    expect(domains(JSON.parse(several.stdout).results).includes(excluded[0])).toBe(false);
    expect(several.stderr.split('\n').filter((line) => /^(Excluding|Left out)/.test(line))).toEqual([
      'Excluding 1 domain.',
      'Left out 1 candidate on the exclusion list.',
    ]);
  });
});
