// One run per output, as processes: a second run on the output of a run still going is refused at
// once (exit 7) naming the output and the process that writes it, and buys nothing; the run of a
// process killed with SIGKILL does not block the re-run, which buys only what the store lacks.
// (An output that is the input, under any name, is refused in-process: test/commands/enrich-batch.test.ts.)
//
// Nothing here depends on how fast the machine is: the first run reads its input from a pipe the
// test holds open, so it is still running (and renewing its claim on the output) for as long as
// the test needs, and it buys more only when the test writes more. The test waits on what the
// sandbox saw, never on a length of time.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { storedDomains } from '../helpers/store.js';

let sandbox: SandboxHandle;
let home: string;
sandboxAndDirForTests('cd-enrich-lock-', { companies: 2000 }, (s, d) => {
  sandbox = s;
  home = d;
});

const env = (key: 'full' | 'free') => ({
  COMPANY_DATA_STORE: join(home, 'store.db'),
  COMPANY_DATA_BASE_URL: sandbox.url,
  COMPANY_DATA_API_KEY: sandbox.keys[key],
  XDG_CONFIG_HOME: join(home, 'config'),
  XDG_CACHE_HOME: join(home, 'cache'),
});
const lookups = (from = 0) =>
  sandbox
    .requests()
    .slice(from)
    .filter((r) => r.path.startsWith('/api/domains/'));
const domainOf = (path: string) => decodeURIComponent(path.slice('/api/domains/'.length));

/** Resolves once the sandbox's log shows what `check` wants (looked at every 10 ms; the test's timeout bounds it). */
const until = async (check: () => boolean) => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe('one run per output', () => {
  it('refuses a second run at once, without a request; a SIGKILLed run does not block the re-run', async () => {
    const domains = sandbox.dataset.companies.slice(0, 300).map((c) => c.domain);
    const output = join(home, 'out.csv');
    const store = join(home, 'store.db');
    const lines = (from: number, to: number) =>
      domains
        .slice(from, to)
        .map((d) => `${d}\n`)
        .join('');
    // Every run reads its input from stdin, so they are the same run (one input, one output) and
    // the re-run resumes the one the killed process left open.
    const args = ['enrich', '--input', '-', '--output', output, '--concurrency', '2'];

    // The first run gets the header and 100 domains, then waits for more as long as the pipe is
    // open: it cannot end before the test has seen what it needs. (It may hold back the last line
    // it was given until the next one comes: a reader cannot tell the line has ended.)
    const started = startCli(args, { env: env('full'), input: 'open', stdout: 'ignore', timeoutMs: 120_000 });
    const first = started.child;
    first.stdin!.write(`domain\n${lines(0, 100)}`);
    await until(() => lookups().length >= 50);

    // The second run uses another key, so that its requests, if any, stand out in the log.
    const second = await runCli(args, { env: env('free'), input: `domain\n${lines(0, 300)}` });
    expect(second.code, second.stderr).toBe(7);
    // Piped: the problem is one JSON line.
    expect(JSON.parse(second.stderr)).toEqual({
      code: 'run_busy',
      status: 0,
      title: 'Another run is writing this output',
      detail: `process ${first.pid} is writing ${output} (runs are told apart in the store ${store})`,
      retryable: false,
      hint: 'Wait for the other run to finish, or give this one another --output.',
    });
    expect(second.stdout).toBe('');
    expect(sandbox.requests().filter((r) => r.key_name === 'free')).toEqual([]);
    // Refused at once: had the second run waited for the first, which cannot end while its input
    // is open, it would not have ended at all.
    expect(first.exitCode).toBeNull();

    // A dry run sends no lookup and claims no output.
    const dry = await runCli([...args, '--dry-run'], { env: env('full'), input: `domain\n${lines(0, 300)}` });
    expect(dry.code, dry.stderr).toBe(0);

    // The first run goes on buying what it is given; it is killed mid-purchase (its lookups delayed
    // 30 ms each, so some are on their way): its run stays open in the store, owned by a process
    // that is gone.
    sandbox.faults.add('delay:30', { path: '/api/domains/', times: 100 });
    const before = lookups().length;
    first.stdin!.write(lines(100, 200));
    await until(() => lookups().length >= before + 40);
    first.kill('SIGKILL');
    expect((await started.done).signal).toBe('SIGKILL');
    sandbox.faults.clear();
    const kept = storedDomains(store);
    expect(kept.size).toBeGreaterThan(0);
    // It never had the last 100.
    expect(kept.size).toBeLessThanOrEqual(200);

    const from = sandbox.requests().length;
    const rerun = await runCli(args, { env: env('full'), input: `domain\n${lines(0, 300)}` });
    expect(rerun.code, rerun.stderr).toBe(0);
    const bought = lookups(from).map((r) => domainOf(r.path));
    expect(bought.filter((d) => kept.has(d))).toEqual([]);
    expect(new Set(bought).size).toBe(bought.length);
    expect(bought.length).toBe(domains.length - kept.size);
    expect(readFileSync(output, 'utf8').trimEnd().split('\n')).toHaveLength(domains.length + 1);
    // Nothing but the output and the store (with its WAL files): no lock, no journal.
    const left = readdirSync(home).filter((name) => !['config', 'cache'].includes(name));
    expect(left.filter((name) => !name.startsWith('store.db')).sort()).toEqual(['out.csv']);
  }, 120_000);
});
