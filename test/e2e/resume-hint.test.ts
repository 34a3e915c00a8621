// The resume hint of an interrupted run is a command that continues it: running it as printed
// pays only for what the first run did not buy. `--refresh` survives the resume (issue 30): the
// hint carries it, and the resumed run keeps the first run's start as its refresh point, so an
// interrupted --refresh run plus its resume buy every domain again exactly once (before the fix,
// 58 of 300).
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { BIN, runCli, startProcess } from '../helpers/cli.js';
import { call, sandboxAndDirForTests } from '../helpers/sandbox.js';
import { newestBoughtAt } from '../helpers/store.js';

let sandbox: SandboxHandle;
let home: string;
// 20 ms a lookup: 120 domains at concurrency 4 take 0.6 s, time enough to interrupt after 40.
sandboxAndDirForTests('cd-resume-hint-', { companies: 2000, latencyMs: 20 }, (s, d) => {
  sandbox = s;
  home = d;
});

const lookedUp = (from: number) =>
  sandbox
    .requests()
    .slice(from)
    .filter((r) => r.path.startsWith('/api/domains/'))
    .map((r) => decodeURIComponent(r.path.slice('/api/domains/'.length)));

const balance = async (key: string) =>
  ((await call(sandbox.url, '/api/me', { key })).json as { balance: number }).balance;

describe('the resume hint after an interrupted --refresh run', () => {
  it('keeps --refresh; with it the two runs buy every domain again exactly once', async () => {
    const input = join(home, 'in.csv');
    const output = join(home, 'out.csv');
    const domains = sandbox.dataset.companies.slice(0, 120).map((c) => c.domain);
    writeFileSync(input, `domain\n${domains.join('\n')}\n`);
    // `company-data` on the PATH, as an installed package puts it there.
    const path = join(home, 'path');
    mkdirSync(path, { recursive: true });
    symlinkSync(BIN, join(path, 'company-data'));
    const env = {
      PATH: `${path}:${process.env.PATH}`,
      COMPANY_DATA_STORE: join(home, 'store.db'),
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_CACHE_HOME: join(home, 'cache'),
      COMPANY_DATA_BASE_URL: sandbox.url,
      COMPANY_DATA_API_KEY: sandbox.keys.full,
    };
    const quiet = { cwd: home, env, input: 'ignore', stdout: 'ignore' } as const;
    // Every domain bought once already: without --refresh on the resume, these would be reused.
    const filled = await runCli(['enrich', '--input', input, '--output', output], quiet);
    expect(filled.code, filled.stderr).toBe(0);
    // The refresh point (the next run's start, in milliseconds) is a later instant than every answer
    // of that run.
    const last = newestBoughtAt(env.COMPANY_DATA_STORE);
    while (Date.now() <= last) await new Promise((resolve) => setTimeout(resolve, 1));
    const before = sandbox.requests().length;
    const balanceBefore = await balance(sandbox.keys.full);
    const args = ['enrich', '--input', input, '--output', output, '--refresh', '--concurrency', '4'];
    // Interrupted once some lookups have been answered.
    const { code, stderr } = await runCli(args, {
      ...quiet,
      signalWhen: { when: () => lookedUp(before).length >= 40, signal: 'SIGINT' },
    });
    expect(code).toBe(130);
    const first = lookedUp(before);
    expect(first.length).toBeLessThan(domains.length);

    // Piped, the problem is one JSON line on stderr; its hint ends with the command.
    const problem = JSON.parse(stderr.trim().split('\n').at(-1) as string);
    expect(problem.code).toBe('interrupted');
    const hint = /Resume with: (.*)$/.exec(problem.hint)?.[1];
    expect(hint).toBeDefined();
    expect(hint).toBe(`company-data enrich --input ${input} --output ${output} --refresh --concurrency 4`);

    const middle = sandbox.requests().length;
    // Asynchronously: the sandbox answering it runs in this process.
    const resumed = await startProcess('sh', ['-c', hint as string], quiet).done;
    expect(resumed.code, resumed.stderr).toBe(0);
    const second = lookedUp(middle);
    // Every domain bought exactly once across the two runs.
    const unique = new Set(domains).size;
    expect(new Set([...first, ...second]).size).toBe(unique);
    expect(first.length + second.length).toBe(unique);
    // And counted by the service: one credit a found domain, nothing for the rest.
    const found = domains.length; // the dataset's own companies: every one is found
    expect(balanceBefore - (await balance(sandbox.keys.full))).toBe(found);
  });
});
