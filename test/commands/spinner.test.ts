// No spinner while the service is slow with NO_COLOR or TERM=dumb, in-process on a pretend
// terminal whose stderr has a width (where the spinner would draw). The spinner drawing on a real
// terminal, the same wait (and none piped): test/e2e/tty.test.ts. (Its drawing is not run here:
// ora, once started, leaves an exit handler in the process, and these workers are shared.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serviceEnvironment } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { startTestSandbox } from '../helpers/sandbox.js';

/**
 * `-o json products` on a terminal of 100 columns, stdout and stderr, its answer a second late:
 * the spinner shows once a request has taken 300 ms (src/spinning-client.ts SPINNER_DELAY_MS).
 */
async function slowProducts(env: Record<string, string | undefined>) {
  const sandbox = await startTestSandbox();
  const dir = mkdtempSync(join(tmpdir(), 'cd-spinner-'));
  try {
    sandbox.faults.add('delay:1000', { path: '/api/products', times: 1 });
    const r = await runInProcess(['--no-pager', '-o', 'json', 'products'], {
      tty: true,
      columns: 100,
      stderrColumns: 100,
      env: { ...serviceEnvironment(dir, sandbox.url), TERM: 'xterm-256color', ...env },
      now: Date.now,
    });
    // The wait really happened: the request met the delay.
    expect(sandbox.requests().filter((q) => q.fault === 'delay:1000')).toHaveLength(1);
    return { ...r, ids: (JSON.parse(r.stdout) as Array<{ id: string }>).map((p) => p.id) };
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the spinner while the service is slow', () => {
  it.each([
    ['NO_COLOR=1', { NO_COLOR: '1' }],
    ['TERM=dumb', { NO_COLOR: undefined, TERM: 'dumb' }],
  ])('with %s: no animation and no cursor control while waiting, nothing on stderr', async (_name, env) => {
    const r = await slowProducts(env);
    expect(r.code).toBe(0);
    expect(r.ids).toContain('profile');
    expect(r.stderr).toBe('');
    expect(r.stdout).not.toContain('\x1b');
  });
});
