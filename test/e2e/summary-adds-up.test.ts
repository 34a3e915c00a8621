// The summary of a batch stopped by SIGINT counts the same set as its output (issue 46): the rows
// written, the distinct domains among them (found + not found + failed), the errors, and the
// credits on those rows; answers that came in after the last row written are counted apart.
// The real binary (a signal needs a process), its NDJSON on a pipe, against a slow sandbox.
// Needs `npm run build` first.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { BIN, cleanEnv } from '../helpers/cli.js';

let sandbox: SandboxHandle;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, companies: 2000, latencyMs: 20 });
  dir = mkdtempSync(join(tmpdir(), 'cd-summary-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Row {
  website: string;
  found: boolean | null;
  credits_charged: number;
  error_code: string | null;
}

/** The run, interrupted with SIGINT once `after` rows are on stdout. */
function interrupted(
  args: string[],
  after: number,
): Promise<{ code: number | null; rows: Row[]; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cleanEnv({
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      XDG_STATE_HOME: mkdtempSync(join(dir, 'state-')),
      COMPANY_DATA_BASE_URL: sandbox.url,
      COMPANY_DATA_API_KEY: sandbox.keys.full,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let sent = false;
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    if (!sent && stdout.split('\n').length > after) {
      sent = true;
      child.kill('SIGINT');
    }
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => {
    child.once('close', (code) => {
      const rows = stdout
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Row);
      resolve({ code, rows, stderr });
    });
  });
}

describe('the summary of an interrupted batch', () => {
  it('counts the rows written, their distinct domains and the credits on them', async () => {
    // 600 rows: 400 distinct domains, each second one repeated, and an invalid row every 50.
    const domains = sandbox.dataset.companies.slice(0, 400).map((c) => c.domain);
    const lines = domains.flatMap((domain, i) => (i % 2 === 0 ? [domain, domain.toUpperCase()] : [domain]));
    for (let i = 0; i < lines.length; i += 50) lines[i] = 'not a domain';
    const input = join(dir, 'in.csv');
    writeFileSync(input, `website\n${lines.join('\n')}\n`);

    const run = await interrupted(['enrich', '--input', input, '-o', 'ndjson', '--concurrency', '8'], 100);
    expect(run.code).toBe(130);
    const summary = /Stopped after ([\d,]+) of ~[\d,]+ rows \(interrupted\)\. Enriched: (.*)$/m.exec(
      run.stderr,
    );
    expect(summary, run.stderr).not.toBeNull();
    const n = (text: string) => Number(text.replaceAll(',', ''));
    const parts = (summary as RegExpExecArray)[2];
    const got = {
      stoppedAfter: n((summary as RegExpExecArray)[1]),
      rows: n(/^([\d,]+) rows?/.exec(parts)?.[1] ?? 'NaN'),
      unique: n(/([\d,]+) unique domains?/.exec(parts)?.[1] ?? 'NaN'),
      found: n(/\(([\d,]+) found/.exec(parts)?.[1] ?? 'NaN'),
      notFound: n(/([\d,]+) not found/.exec(parts)?.[1] ?? 'NaN'),
      failed: n(/([\d,]+) failed/.exec(parts)?.[1] ?? '0'),
      errors: n(/([\d,]+) errors?/.exec(parts)?.[1] ?? 'NaN'),
      credits: n(/([\d,]+) credits? charged/.exec(parts)?.[1] ?? 'NaN'),
    };
    // What the output holds.
    const valid = run.rows.filter((row) => row.error_code !== 'invalid_domain');
    const firstOf = new Map<string, Row>();
    for (const row of valid)
      if (!firstOf.has(row.website.toLowerCase())) firstOf.set(row.website.toLowerCase(), row);
    const firsts = [...firstOf.values()];
    const want = {
      stoppedAfter: run.rows.length,
      rows: run.rows.length,
      unique: firstOf.size,
      found: firsts.filter((row) => row.found === true).length,
      notFound: firsts.filter((row) => row.found === false).length,
      failed: firsts.filter((row) => row.found === null).length,
      errors: run.rows.filter((row) => row.error_code !== null).length,
      credits: run.rows.reduce((sum, row) => sum + row.credits_charged, 0),
    };
    expect(got).toEqual(want);
    // And they add up: every distinct domain is found, not found or failed.
    expect(got.found + got.notFound + got.failed).toBe(got.unique);
    // The run stopped early: most of the input was never written.
    expect(run.rows.length).toBeLessThan(lines.length);
    // Credits of answers that arrived after the last row written are said apart, never mixed in.
    const after = /([\d,]+) credits? more for answers that came after the last row written/.exec(parts);
    if (after) expect(n(after[1])).toBeGreaterThan(0);
  });
});
