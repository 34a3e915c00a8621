// `search --all` as processes: a run that stops on a failed page, its stdout redirected to a file,
// continued by the printed shell command from the file it wrote; and Ctrl-C between pages. Needs
// `npm run build` first. Whole segments and the 20,000-exclusion ceiling, in-process:
// test/commands/search-all-pages.test.ts.
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, runCli, runShell, startCli } from '../helpers/cli.js';
import { type SandboxHandle, sandboxForBlock } from '../helpers/sandbox.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cd-search-all-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function env(sb: SandboxHandle): Record<string, string> {
  return {
    COMPANY_DATA_API_KEY: sb.keys.full,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    COMPANY_DATA_RETRY_BASE_MS: '1',
    COMPANY_DATA_RETRY_CAP_MS: '2',
    COMPANY_DATA_RETRY_FLOOR_MS: '1',
  };
}

function _cli(sb: SandboxHandle, args: string[]): Promise<RunResult> {
  return runCli(['--base-url', sb.url, ...args], { env: env(sb) });
}

function csvDomains(text: string): string[] {
  const [header, ...rows] = text.trim().split('\n');
  expect(header).toBe('domain');
  return rows;
}

/** Runs the binary with stdout going to `file` (as `> file` would), stderr captured. */
function cliToFile(
  sb: SandboxHandle,
  args: string[],
  file: string,
): Promise<{ code: number | null; stderr: string }> {
  const out = openSync(file, 'w');
  const run = startCli(['--base-url', sb.url, ...args], { env: env(sb), input: 'ignore', stdout: out });
  closeSync(out);
  return run.done;
}

describe('a page that fails mid-run, continued from the file the rows went to', () => {
  const sandbox = sandboxForBlock(3000);

  const rowsOf: Record<string, (text: string) => string[]> = {
    csv: (text) => csvDomains(text),
    ndjson: (text) =>
      text
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { domain: string }).domain),
    json: (text) => (JSON.parse(text) as { rows: Array<{ domain: string }> }).rows.map((r) => r.domain),
  };

  it.each(['csv', 'ndjson', 'json'])(
    '-o %s: exit 5, the rows kept, and the printed command fetches the rest',
    async (format) => {
      sandbox().faults.clear();
      // Page 1 is a GET; page 2, the first POST, fails on every attempt.
      sandbox().faults.add('search_unavailable', { path: '/api/search', method: 'POST', times: 2 });
      const first = join(dir, `rows.${format}`);
      const r = await cliToFile(
        sandbox(),
        ['--retries', '1', 'search', '--all', '-o', format, '--include', 'domain'],
        first,
      );
      expect(r.code).toBe(5);
      // A problem line for json and ndjson, the text form for csv: the same words in both.
      expect(r.stderr).toContain('search_unavailable');
      expect(r.stderr).toContain('1,000 of 3,000 companies written (1 page) before it');
      const kept = rowsOf[format](readFileSync(first, 'utf8'));
      expect(kept).toHaveLength(1000);

      const second = join(dir, `rows-2.${format}`);
      const command = `company-data --base-url ${sandbox().url} --retries 1 search --all -o ${format} --include domain --exclude ${first} > ${second}`;
      expect(r.stderr).toContain(`Continue with: ${command}`);
      const shell = await runShell(command, { env: env(sandbox()), input: 'ignore', stdout: 'ignore' });
      expect(shell.code, shell.stderr).toBe(0);
      const more = rowsOf[format](readFileSync(second, 'utf8'));
      expect(more).toHaveLength(2000);
      const all = new Set([...kept, ...more]);
      expect(all.size).toBe(3000);
      expect([...all].sort()).toEqual(
        sandbox()
          .dataset.companies.map((c) => c.domain)
          .sort(),
      );
    },
  );
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
        env: env(sandbox()),
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
