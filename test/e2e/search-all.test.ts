// `search --all` as a process: Ctrl-C between pages. Needs `npm run build` first. A run that stops
// on a failed page with its stdout redirected to a file, continued by the printed shell command:
// test/commands/search-all-files.test.ts; whole segments and the 20,000-exclusion ceiling:
// test/commands/search-all-pages.test.ts (both in-process).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { serviceEnvironment } from '../helpers/command-cases.js';
import { sandboxForBlock } from '../helpers/sandbox.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cd-search-all-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Ctrl-C between pages (piped)', () => {
  const sandbox = sandboxForBlock(3000);

  it('stops at once, keeps the rows written, exits 130 and says how to continue', async () => {
    // Page 2 would take a minute: only the interrupt can end the run soon.
    sandbox().faults.add('delay:60000', { path: '/api/search', method: 'POST' });
    const before = sandbox().requests().length;
    // Interrupt once page 2 has been sent (the sandbox logs a request when it arrives), so page 1
    // is surely written.
    const { code, stdout, stderr } = await runCli(
      ['--base-url', sandbox().url, 'search', '--all', '-o', 'ndjson', '--include', 'domain'],
      {
        env: serviceEnvironment(dir, sandbox().url),
        input: 'ignore',
        signalWhen: {
          when: () =>
            sandbox()
              .requests()
              .slice(before)
              .some((q) => q.method === 'POST'),
          signal: 'SIGINT',
        },
      },
    );
    sandbox().faults.clear();
    expect(code).toBe(130);
    expect(stdout.trim().split('\n')).toHaveLength(1000);
    expect(JSON.parse(stderr)).toEqual({
      code: 'interrupted',
      status: 0,
      title: 'Interrupted',
      detail: 'stopped after 1,000 of 3,000 companies written (1 page)',
      retryable: false,
      hint: `Continue with: company-data --base-url ${sandbox().url} search --all -o ndjson --include domain --exclude <the file holding the rows written so far> > more.ndjson`,
    });
  });
});
