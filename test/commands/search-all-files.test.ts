// `search --all` with its rows going to a file (`> rows.csv`): a page that fails mid-run leaves the
// rows written, and the command it prints fetches the rest, excluding them by that file's name
// (read from stdout's descriptor). main() in-process, piped, with stdout the file as a shell's
// redirection has it; the printed command run by sh (-o csv) or as sh would read its words
// (-o ndjson, -o json). Ctrl-C between pages, by the built binary: test/e2e/search-all.test.ts.
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runShell } from '../helpers/cli.js';
import { type InProcessResult, runPiped } from '../helpers/in-process.js';
import { redirectedRun } from '../helpers/readme-examples.js';
import { type SandboxHandle, sandboxForBlock } from '../helpers/sandbox.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cd-search-all-files-'));
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

/** main() with stdout going to `file` (as `> file` would), stderr captured. */
async function toFile(sb: SandboxHandle, args: string[], file: string): Promise<InProcessResult> {
  const fd = openSync(file, 'w');
  try {
    return await runPiped(args, { env: env(sb), stdoutFile: fd });
  } finally {
    closeSync(fd);
  }
}

const rowsOf: Record<string, (text: string) => string[]> = {
  csv: (text) => {
    const [header, ...rows] = text.trim().split('\n');
    expect(header).toBe('domain');
    return rows;
  },
  ndjson: (text) =>
    text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { domain: string }).domain),
  json: (text) => (JSON.parse(text) as { rows: Array<{ domain: string }> }).rows.map((r) => r.domain),
};

describe('a page that fails mid-run, continued from the file the rows went to', () => {
  const sandbox = sandboxForBlock(3000);

  it.each(['csv', 'ndjson', 'json'])(
    '-o %s: exit 5, the rows kept, and the printed command fetches the rest',
    async (format) => {
      sandbox().faults.clear();
      // Page 1 is a GET; page 2, the first POST, fails on every attempt.
      sandbox().faults.add('search_unavailable', { path: '/api/search', method: 'POST', times: 2 });
      const first = join(dir, `rows.${format}`);
      const r = await toFile(
        sandbox(),
        [
          '--base-url',
          sandbox().url,
          '--retries',
          '1',
          'search',
          '--all',
          '-o',
          format,
          '--include',
          'domain',
        ],
        first,
      );
      const second = join(dir, `rows-2.${format}`);
      const command = `company-data --base-url ${sandbox().url} --retries 1 search --all -o ${format} --include domain --exclude ${first} > ${second}`;
      // A problem line for json and ndjson, the text form for csv: the same words in both.
      const detail =
        'page 2: fault injected by the sandbox (search_unavailable) (gave up after 2 attempts); 1,000 of 3,000 companies written (1 page) before it';
      const hint = `The service is temporarily unavailable; try again later (retries are automatic, see --retries). Continue with: ${command}`;
      expect(r.code).toBe(5);
      expect(r.stderr).toBe(
        format === 'csv'
          ? `error: Search unavailable (search_unavailable, HTTP 503)\n  ${detail}\n  ${hint}\n`
          : `${JSON.stringify({ code: 'search_unavailable', status: 503, title: 'Search unavailable', detail, retryable: true, hint })}\n`,
      );
      expect(r.stdout).toBe(readFileSync(first, 'utf8'));
      const kept = rowsOf[format](r.stdout);
      expect(kept).toHaveLength(1000);

      if (format === 'csv') {
        // Through a shell, the built binary: the line is one a shell runs as it is.
        const shell = await runShell(command, { env: env(sandbox()), input: 'ignore', stdout: 'ignore' });
        expect(shell.code, shell.stderr).toBe(0);
      } else {
        const run = redirectedRun(command);
        expect(run?.file).toBe(second);
        const more = await toFile(sandbox(), run?.words ?? [], second);
        expect(more.code, more.stderr).toBe(0);
      }
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
