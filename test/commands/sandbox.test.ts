// `sandbox`: serves until SIGINT or SIGTERM. In-process, no signal is sent: the test waits for the
// listener the command adds to `process`, checks that the server answers, and then calls that one
// listener with the signal's name, which is what Node does on a real signal. Every other listener
// of this process (the test runner's own) is left alone.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KEYS, lines, usageLine } from '../helpers/command-cases.js';
import { type InProcessResult, runInProcess } from '../helpers/in-process.js';
import { call } from '../helpers/sandbox.js';

type Signal = 'SIGINT' | 'SIGTERM';
type AnyListener = (...args: never[]) => unknown;

// Settings are resolved even though the sandbox uses none of them: keep them private and empty.
const home = mkdtempSync(join(tmpdir(), 'cdt-sandbox-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const ENV = {
  HOME: home,
  XDG_CONFIG_HOME: join(home, 'config'),
  XDG_CACHE_HOME: join(home, 'cache'),
  NO_COLOR: '1',
};

interface SandboxCase {
  name: string;
  /** The arguments after `sandbox --port <port>`. */
  argv: string[];
  tty: boolean;
  /** Sent once the server answers; without it the command must end on its own. */
  signal?: Signal;
  /** Something else already listens on the port. */
  portTaken?: boolean;
  wantCode: number;
  wantStdout: (port: number) => string;
  wantStderr: (port: number) => string;
}

const HANDSHAKE = (port: number) =>
  lines(
    JSON.stringify({
      url: `http://127.0.0.1:${port}`,
      keys: { full: KEYS.full, restricted: KEYS.restricted, free: KEYS.free, empty: KEYS.empty },
    }),
  );

const banner = (port: number, settings: string) => [
  `Company Data sandbox listening on http://127.0.0.1:${port} (${settings})`,
  'Demo keys (no real credits):',
  `  full       ${KEYS.full}`,
  `  restricted ${KEYS.restricted}`,
  `  free       ${KEYS.free}`,
  `  empty      ${KEYS.empty}`,
  `Try: COMPANY_DATA_BASE_URL=http://127.0.0.1:${port} COMPANY_DATA_API_KEY=${KEYS.full} company-data me`,
  'Press Ctrl-C to stop.',
];

const cases: SandboxCase[] = [
  {
    name: 'on a terminal until SIGINT: the JSON handshake, the banner, then a clean close',
    argv: ['--companies', '50', '--seed', '7'],
    tty: true,
    signal: 'SIGINT',
    wantCode: 0,
    wantStdout: HANDSHAKE,
    wantStderr: (port) =>
      lines(
        ...banner(port, 'seed 7, 50 companies'),
        'Received SIGINT; closing the sandbox.',
        'Sandbox closed.',
      ),
  },
  {
    name: 'piped until SIGTERM, with latency, rate limit and faults: all named in the banner',
    argv: ['--companies', '50', '--latency', '1', '--rate-limit', '100', '--fault-rate', '0.25'],
    tty: false,
    signal: 'SIGTERM',
    wantCode: 0,
    wantStdout: HANDSHAKE,
    wantStderr: (port) =>
      lines(
        ...banner(port, 'seed 42, 50 companies, latency 1 ms, rate limit 100/s per key, fault rate 0.25'),
        'Received SIGTERM; closing the sandbox.',
        'Sandbox closed.',
      ),
  },
  {
    name: 'with --quiet: only the handshake, for scripts',
    argv: ['--companies', '50', '-q'],
    tty: false,
    signal: 'SIGTERM',
    wantCode: 0,
    wantStdout: HANDSHAKE,
    wantStderr: () => '',
  },
  {
    name: 'a port already taken: exit 2 saying what to do',
    argv: ['--companies', '50'],
    tty: true,
    portTaken: true,
    wantCode: 2,
    wantStdout: () => '',
    wantStderr: (port) =>
      lines(
        'error: Usage error (usage_error)',
        `  cannot listen on 127.0.0.1:${port} (EADDRINUSE)`,
        '  Choose another --port (0 picks a free one) or --host.',
      ),
  },
  {
    name: 'a fault rate above 1: exit 2 from the flag parser',
    argv: ['--fault-rate', '2'],
    tty: false,
    wantCode: 2,
    wantStdout: () => '',
    wantStderr: () =>
      usageLine(
        `option '--fault-rate <p>' argument '2' is invalid. --fault-rate must be a number between 0 and 1, got "2"`,
      ),
  },
  {
    name: 'a port out of range: exit 2',
    argv: ['--port', '65536'],
    tty: true,
    wantCode: 2,
    wantStdout: () => '',
    wantStderr: () =>
      lines(
        `error: option '--port <port>' argument '65536' is invalid. --port must be a whole number between 0 and 65535, got "65536"`,
        '(add --help for usage)',
      ),
  },
];

async function listening(port?: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port ?? 0, '127.0.0.1', resolve));
  return server;
}

async function close(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A port nothing listens on, or one held by `holder` until the case ends. */
async function portFor(taken: boolean): Promise<{ port: number; holder?: Server }> {
  const server = await listening();
  const { port } = server.address() as { port: number };
  if (taken) return { port, holder: server };
  await close(server);
  return { port };
}

type Listener = (signal: Signal) => void;

/** The listener for `signal` that was not there before, once the command has added it. */
async function newListener(
  signal: Signal,
  before: Set<AnyListener>,
  done: Promise<unknown>,
): Promise<Listener> {
  let finished = false;
  void done.then(() => {
    finished = true;
  });
  for (let waited = 0; waited < 10_000; waited += 5) {
    const added = process.listeners(signal).find((l) => !before.has(l));
    if (added) return added as Listener;
    if (finished) throw new Error(`the command ended without waiting for ${signal}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no ${signal} listener after 10 s`);
}

const listenersOf = () => ({
  SIGINT: new Set<AnyListener>(process.listeners('SIGINT')),
  SIGTERM: new Set<AnyListener>(process.listeners('SIGTERM')),
});

async function runSandboxCase(c: SandboxCase): Promise<{ port: number; result: InProcessResult }> {
  const { port, holder } = await portFor(Boolean(c.portTaken));
  const before = listenersOf();
  const argv = c.argv.includes('--port')
    ? ['sandbox', ...c.argv]
    : ['sandbox', '--port', String(port), ...c.argv];
  const running = runInProcess(argv, { tty: c.tty, env: ENV });
  let stop: Listener | undefined;
  try {
    if (c.signal) {
      stop = await newListener(c.signal, before[c.signal], running);
      // It serves (asked through a control endpoint, which random faults never touch).
      const balances = await call(`http://127.0.0.1:${port}`, '/_sandbox/balances');
      expect({ status: balances.status, full: balances.json?.full }).toEqual({
        status: 200,
        full: 1_000_000,
      });
      const listener = stop;
      stop = undefined;
      listener(c.signal);
    }
    const result = await running;
    // The command leaves no listener behind, for either signal.
    expect(listenersOf()).toEqual(before);
    return { port, result };
  } finally {
    // A failed check above must not leave a server running in this process.
    if (stop && c.signal) {
      stop(c.signal);
      await running.catch(() => {});
    }
    if (holder) await close(holder);
  }
}

describe('sandbox', () => {
  it.each(cases)('$name', async (c) => {
    const { port, result } = await runSandboxCase(c);
    expect(result).toEqual({ code: c.wantCode, stdout: c.wantStdout(port), stderr: c.wantStderr(port) });
  });

  it('after SIGINT the port is free again', async () => {
    const { port, result } = await runSandboxCase(cases[0]);
    expect(result.code).toBe(0);
    await close(await listening(port));
  });
});
