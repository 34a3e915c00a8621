// One run per output, as processes: a second run on the output of a run still going is refused at
// once (exit 7) naming the output and the process that writes it, and buys nothing; the run of a
// process killed with SIGKILL does not block the re-run, which buys only what the store lacks.
// (An output that is the input, under any name, is refused in-process: test/commands/enrich-batch.test.ts.)
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { storedDomains } from '../helpers/store.js';

let sandbox: SandboxHandle;
let home: string;
// No latency of its own: the first run's lookups are delayed 30 ms each by queued faults (300
// domains at concurrency 2 take 4.5 s, time enough for a second run), the re-run's are not.
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

const until = async (check: () => boolean, what: string) => {
  for (const started = Date.now(); !check(); ) {
    if (Date.now() - started > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('one run per output', () => {
  it('refuses a second run at once, without a request; a SIGKILLed run does not block the re-run', async () => {
    const domains = sandbox.dataset.companies.slice(0, 300).map((c) => c.domain);
    const input = join(home, 'in.csv');
    const output = join(home, 'out.csv');
    const store = join(home, 'store.db');
    writeFileSync(input, `domain\n${domains.join('\n')}\n`);
    const args = ['enrich', '--input', input, '--output', output, '--concurrency', '2'];

    sandbox.faults.add('delay:30', { path: '/api/domains/', times: domains.length });
    const started = startCli(args, { env: env('full'), input: 'ignore', stdout: 'ignore' });
    const first = started.child;
    await until(() => lookups().length >= 20, 'the first run to buy');

    // The second run uses another key, so that its requests, if any, stand out in the log.
    const second = await runCli(args, { env: env('free') });
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
    // Refused at once: the first run is still buying after the second has ended.
    expect(first.exitCode).toBeNull();

    // A dry run sends no lookup and claims no output.
    const dry = await runCli([...args, '--dry-run'], { env: env('full') });
    expect(dry.code, dry.stderr).toBe(0);

    // The first run is killed: its run stays open in the store, owned by a process that is gone.
    const before = lookups().length;
    await until(() => lookups().length >= before + 40, 'more purchases');
    first.kill('SIGKILL');
    expect((await started.done).signal).toBe('SIGKILL');
    sandbox.faults.clear();
    const kept = storedDomains(store);
    expect(kept.size).toBeGreaterThan(0);

    const from = sandbox.requests().length;
    const rerun = await runCli(args, { env: env('full') });
    expect(rerun.code, rerun.stderr).toBe(0);
    const bought = lookups(from).map((r) => domainOf(r.path));
    expect(bought.filter((d) => kept.has(d))).toEqual([]);
    expect(new Set(bought).size).toBe(bought.length);
    expect(bought.length).toBe(domains.length - kept.size);
    expect(readFileSync(output, 'utf8').trimEnd().split('\n')).toHaveLength(domains.length + 1);
    // Nothing but the input, the output and the store (with its WAL files): no lock, no journal.
    const left = readdirSync(home).filter((name) => !['config', 'cache'].includes(name));
    expect(left.filter((name) => !name.startsWith('store.db')).sort()).toEqual(['in.csv', 'out.csv']);
  });
});
