// Ctrl-C typed at a real terminal (a pseudo-terminal with a window size, so the spinner draws)
// stops any command, spinner or not: a one-request command ends at once, a batch stops sending,
// keeps what it bought and says how to resume. Needs `npm run build` first. The spinner, and none
// with NO_COLOR or TERM=dumb: test/e2e/tty.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { runOnTerminal } from '../helpers/terminal.js';

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  // 100 ms a request: a batch of 400 rows at concurrency 2 would take 20 s.
  sandbox = await startSandbox({ port: 0, companies: 2000, latencyMs: 100 });
  dir = mkdtempSync(join(tmpdir(), 'cd-ctrl-c-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

// A new cache each run: a catalog cached by an earlier run would be answered without a request.
const env = () => ({
  XDG_CONFIG_HOME: join(dir, 'config'),
  XDG_CACHE_HOME: mkdtempSync(join(dir, 'cache-')),
  COMPANY_DATA_API_KEY: sandbox.keys.full,
});

describe('Ctrl-C on a terminal while the spinner shows', () => {
  it.each([
    ['products', ['products'], '/api/products'],
    ['search', ['search', 'shoes', '--limit', '3'], '/api/search'],
  ])('%s ends with 130 at Ctrl-C, before the answer comes', async (_name, args, path) => {
    // The answer would take 8 s; the spinner shows after 0.3 s.
    sandbox.faults.add('delay:8000', { path, times: 1 });
    const before = sandbox.requests().length;
    const r = await runOnTerminal(['--base-url', sandbox.url, ...args], {
      env: env(),
      interruptAfter: 'Waiting for',
      interruptDelay: 0.3,
    });
    // The slow request, as the sandbox has it the moment the run has ended: not yet answered (the
    // run did not wait for the answer), whatever the load on the machine.
    const slow = sandbox
      .requests()
      .slice(before)
      .filter((q) => q.fault === 'delay:8000');
    sandbox.faults.clear();
    expect(r.interruptedAt).not.toBeNull();
    expect(r.status).toBe(130);
    expect(slow).toMatchObject([{ path: expect.stringMatching(new RegExp(`^${path}`)), status: null }]);
    expect(r.output).not.toContain('profile');
  });

  it('a batch stops sending, exits 130 and prints the command that resumes it', async () => {
    const input = join(dir, 'in.csv');
    const output = join(dir, 'out.csv');
    const domains = sandbox.dataset.companies.slice(0, 400).map((c) => c.domain);
    writeFileSync(input, `domain\n${domains.join('\n')}\n`);
    const before = sandbox.requests().length;
    const r = await runOnTerminal(
      ['--base-url', sandbox.url, 'enrich', '--input', input, '--output', output, '--concurrency', '2'],
      { env: env(), interruptAfter: 'rows', interruptDelay: 1 },
    );
    const lookups = sandbox
      .requests()
      .slice(before)
      .filter((q) => q.path.startsWith('/api/domains/'));
    expect(r.interruptedAt).not.toBeNull();
    expect(r.status).toBe(130);
    // Stopped well before the end, with most rows never requested.
    expect(lookups.length).toBeLessThan(200);
    expect(r.output).toContain('SIGINT: no new requests');
    // The summary says first that the run is partial, how far it got and why.
    expect(r.output).toMatch(/Stopped after [\d,]+ of ~[\d,]+ rows \(interrupted\)\. Enriched: /);
    expect(r.output).toContain('Resume with:');
  });
});
