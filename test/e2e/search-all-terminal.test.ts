// `search --all` at a real terminal (a pseudo-terminal with a window size, so the progress line
// draws): the progress of the pages on stderr, and Ctrl-C between pages, which keeps the rows got
// so far, shows them, exits 130 and says how to keep rows in a file next time. Needs `npm run build`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';
import { runOnTerminal } from '../helpers/terminal.js';

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 3000 });
  dir = mkdtempSync(join(tmpdir(), 'cd-search-all-tty-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('search --all on a terminal', () => {
  it('shows the pages as they come; Ctrl-C keeps the rows got, exits 130 with what to do', async () => {
    // Page 2 (the first POST) would take 20 s: the progress line of page 1 has time to show.
    sandbox.faults.add('delay:20000', { path: '/api/search', method: 'POST' });
    // --no-pager: the 1,000 rows would otherwise wait in the pager (test/e2e/terminal-view.test.ts).
    const r = await runOnTerminal(
      ['--no-pager', '--base-url', sandbox.url, 'search', '--all', '--include', 'domain'],
      {
        env: {
          XDG_CONFIG_HOME: join(dir, 'config'),
          XDG_CACHE_HOME: join(dir, 'cache'),
          COMPANY_DATA_API_KEY: sandbox.keys.full,
        },
        interruptAfter: 'page 1: 1,000 of ~3,000 rows',
      },
    );
    sandbox.faults.clear();
    expect(r.interruptedAt).not.toBeNull();
    expect(r.status).toBe(130);
    const shown = r.output.replaceAll('\r\n', '\n');
    expect(shown).toContain('page 1: 1,000 of ~3,000 rows');
    // The table of the first page's rows, then the problem with the way to keep rows next time.
    expect(shown.match(/^│ \S+\.\S+ +│$/gm)).toHaveLength(1000);
    expect(shown).toContain('error: Interrupted (interrupted)');
    expect(shown).toContain('  stopped after 1,000 of 3,000 companies written (1 page)');
    // The hint is wrapped to the terminal's width under its indentation: read it as one line.
    expect(shown.replace(/\n {2}(?=\S)/g, ' ')).toContain(
      `write them to a file: company-data --no-pager --base-url ${sandbox.url} search --all --include domain -o csv > companies.csv`,
    );
  });
});
