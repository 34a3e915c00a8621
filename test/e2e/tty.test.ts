// Terminal versus pipe, through a real pseudo-terminal (util-linux `script -qec`): the default
// format, colour, and the spinner. Needs `npm run build` first. None with NO_COLOR or TERM=dumb:
// test/commands/spinner.test.ts.
// The JSON that products prints piped, exactly: test/commands/products.test.ts; a table without
// colour with NO_COLOR or --no-color: test/commands/terminal-view.test.ts.
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { type RunResult, runCli, startInTerminal } from '../helpers/cli.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';

const ESC = '\x1b';
// ora's default frames, and the HTTP layer's spinner text.
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]|Waiting for \/api\/products/;

let sandbox: SandboxHandle;
let home: string;

sandboxAndDirForTests('cd-e2e-tty-', { host: '127.0.0.1', companies: 2000 }, (s, d) => {
  sandbox = s;
  home = d;
});

function env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const dir = mkdtempSync(join(home, 'run-'));
  return {
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    LC_ALL: undefined,
    LC_CTYPE: undefined,
    COLUMNS: '100',
    ...extra,
  };
}

/** Runs the binary with stdout and stderr on a pseudo-terminal; both arrive merged in stdout. */
function runInTerminal(
  args: string[],
  extraEnv: Record<string, string | undefined> = {},
): Promise<RunResult> {
  return startInTerminal(['--base-url', sandbox.url, ...args], { env: env(extraEnv) }).done;
}

function runPiped(args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<RunResult> {
  return runCli(['--base-url', sandbox.url, ...args], { env: env(extraEnv) });
}

describe('default format and colour', () => {
  it('on a terminal: a table with box drawing and coloured headers', async () => {
    const r = await runInTerminal(['products']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('┌');
    expect(r.stdout).toMatch(/│ \x1b\[[0-9;]*mid/);
    expect(r.stdout).toContain(`${ESC}[`);
  });
});

// --no-pager -o json: the products document is longer than the screen, and the case reads the
// whole of it from the terminal (the pager has tests of its own, terminal-view.test.ts).
const SLOW_PRODUCTS = ['--no-pager', '-o', 'json', 'products'];

// The spinner shows once a request has taken 300 ms (src/spinning-client.ts SPINNER_DELAY_MS): an
// answer a second late leaves it 700 ms to turn (and none when piped).
describe('spinner while the service is slow (delay:1000)', () => {
  it('shows frames on a terminal, the cursor hidden while they turn', async () => {
    sandbox.faults.add('delay:1000', { path: '/api/products', times: 1 });
    const r = await runInTerminal(SLOW_PRODUCTS);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect(r.stdout).toContain('Waiting for /api/products');
    expect(r.stdout).toContain('\x1b[?25l');
    expect(r.stdout).toContain('"profile"');
    expect(sandbox.requests().at(-1)).toMatchObject({ path: '/api/products', fault: 'delay:1000' });
  });

  it('shows nothing when piped', async () => {
    sandbox.faults.add('delay:1000', { path: '/api/products', times: 1 });
    const r = await runPiped(['products']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout + r.stderr).not.toMatch(SPINNER);
    expect(r.stdout + r.stderr).not.toContain(ESC);
    // The fault was consumed by this run, so the quiet stderr is not for lack of a delay.
    expect(sandbox.requests().at(-1)).toMatchObject({ path: '/api/products', fault: 'delay:1000' });
  });
});

describe('config set-key on a terminal', () => {
  it('reads the key without echoing it', async () => {
    const key = sandbox.keys.full;
    const runEnv = env();
    const run = startInTerminal(['config', 'set-key'], { env: runEnv, input: 'open' });
    let typed = false;
    run.child.stdout?.on('data', () => {
      // Type only once the prompt is up: before raw mode, the terminal itself would echo.
      if (!typed && run.output().stdout.includes('typing is hidden')) {
        typed = true;
        setTimeout(() => run.child.stdin?.write(`${key}\r`), 100);
      }
    });
    const { code, stdout: output } = await run.done;
    run.child.stdin?.destroy();
    expect(code).toBe(0);
    expect(output).not.toContain(key);
    expect(output).toContain('cd_s…9c2e');
    const path = join(runEnv.XDG_CONFIG_HOME ?? '', 'company-data', 'config.json');
    expect(JSON.parse(readFileSync(path, 'utf8')).api_key).toBe(key);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
