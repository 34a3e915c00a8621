// Runs the real built binary (bin/company-data.js), or a shell or `script` around it, as a child
// process: the one spawn-and-collect helper of the tests. Every test that starts the CLI as a
// process goes through `startCli` (or `runCli`, its awaited form) or `startProcess`.
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { withOwnState } from './state.js';

export const BIN = fileURLToPath(new URL('../../bin/company-data.js', import.meta.url));
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Changes to the clean environment (see cleanEnv); undefined removes a variable. */
  env?: Record<string, string | undefined>;
  /**
   * What stdin holds (a pipe, closed after it); 'ignore' gives the process no stdin at all, 'open'
   * a pipe the test writes to through `child.stdin`.
   */
  input?: string | Buffer | 'ignore' | 'open';
  /** Where stdout goes: collected (the default), nowhere, or an open file descriptor. */
  stdout?: 'pipe' | 'ignore' | number;
  /** Descriptor 3 as a pipe, collected into `fd3` (a shell script's status, say). */
  fd3?: boolean;
  cwd?: string;
  /** The process is killed (SIGKILL) after this long; 60 s unless given. */
  timeoutMs?: number;
  /** Sends `signal` once `when()` holds (polled every 5 ms): after so many requests, say. */
  signalWhen?: { when: () => boolean; signal: NodeJS.Signals };
  /** Sends SIGKILL after this many milliseconds. */
  killAfterMs?: number;
  /** Keeps only the last this many characters of stderr (a long run's progress is not needed). */
  stderrTail?: number;
}

export interface Started {
  child: ChildProcess;
  /** What the process wrote so far. */
  output(): { stdout: string; stderr: string; fd3: string };
  /** Resolves when the process has exited and its streams are closed. */
  done: Promise<RunResult & { fd3: string }>;
}

/** Environment without anything from the developer's shell that would change the CLI's behaviour. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('COMPANY_DATA_') || k === 'NO_COLOR' || k === 'FORCE_COLOR') continue;
    env[k] = v;
  }
  for (const [k, v] of Object.entries(withOwnState(extra))) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/**
 * `company-data <args>` as a test's MCP client starts it (either SDK's stdio transport takes these):
 * the built CLI, a clean environment, stderr piped for `collected`.
 */
export function builtServer(args: string[], env: Record<string, string | undefined>) {
  return {
    command: process.execPath,
    args: [BIN, ...args],
    env: cleanEnv(env) as Record<string, string>,
    cwd: ROOT,
    stderr: 'pipe' as const,
  };
}

/** What a stream carries from now on, collected: the text so far. */
export function collected(stream: NodeJS.EventEmitter | null | undefined): () => string {
  let text = '';
  stream?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return () => text;
}

/**
 * A condition for `signalWhen` that holds from `ms` milliseconds after `started()` first held (a
 * run's first lookup reached the service, say), however slow the process was to get there.
 */
export function msAfter(started: () => boolean, ms: number): () => boolean {
  let since: number | undefined;
  return () => {
    if (since === undefined && started()) since = Date.now();
    return since !== undefined && Date.now() - since >= ms;
  };
}

/** Starts `command` with a clean environment and collects what it writes. */
export function startProcess(command: string, args: string[], options: RunOptions = {}): Started {
  const stdin = options.input === 'ignore' ? 'ignore' : 'pipe';
  const stdio: StdioOptions = [stdin, options.stdout ?? 'pipe', 'pipe'];
  if (options.fd3) stdio.push('pipe');
  const child = spawn(command, args, { cwd: options.cwd ?? ROOT, env: cleanEnv(options.env), stdio });
  const text = { stdout: '', stderr: '', fd3: '' };
  const collect = (stream: Readable | null | undefined, into: keyof typeof text, tail?: number) =>
    stream?.setEncoding('utf8').on('data', (d: string) => {
      text[into] = tail === undefined ? text[into] + d : (text[into] + d).slice(-tail);
    });
  collect(child.stdout, 'stdout');
  collect(child.stderr, 'stderr', options.stderrTail);
  if (options.fd3) collect(child.stdio[3] as Readable, 'fd3');
  const timers: NodeJS.Timeout[] = [setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000)];
  if (options.killAfterMs !== undefined)
    timers.push(setTimeout(() => child.kill('SIGKILL'), options.killAfterMs));
  const { signalWhen } = options;
  if (signalWhen) {
    const poll = setInterval(() => {
      if (!signalWhen.when()) return;
      clearInterval(poll);
      child.kill(signalWhen.signal);
    }, 5);
    timers.push(poll);
  }
  const done = new Promise<RunResult & { fd3: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      for (const timer of timers) clearTimeout(timer);
      resolve({ code, signal, ...text });
    });
  });
  // A command that exits without reading its stdin closes the pipe: that is no failure here.
  child.stdin?.on('error', () => {});
  if (options.input !== 'open') child.stdin?.end(options.input ?? '');
  return { child, output: () => ({ ...text }), done };
}

/** Starts the built binary with these arguments. */
export function startCli(args: string[], options: RunOptions = {}): Started {
  return startProcess(process.execPath, [BIN, ...args], options);
}

/** Runs the built binary to its end. */
export async function runCli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const { code, signal, stdout, stderr } = await startCli(args, options).done;
  return { code, signal, stdout, stderr };
}

const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

/**
 * Starts the built binary on a pseudo-terminal (util-linux `script -qec`) of 100 columns and 40
 * rows, or `columns` given: stdout and stderr arrive merged in `stdout`; stdin stays a pipe, so
 * what the test writes to `child.stdin` is typed on the terminal.
 */
export function startInTerminal(args: string[], options: RunOptions & { columns?: number } = {}): Started {
  // Without a terminal of its own, `script` opens a 0x0 pseudo-terminal; give it a real size.
  const command = `stty cols ${options.columns ?? 100} rows 40; exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  return startProcess('script', ['-qec', command, '/dev/null'], {
    timeoutMs: 30_000,
    input: 'ignore',
    ...options,
  });
}

/**
 * Runs a shell command line, `company-data` standing for the built binary, to its end: under `sh`,
 * or with `pipefail` under `bash -o pipefail`, where a pipeline's status is that of its last
 * command that failed (`company-data ... | head -1` exits as company-data did).
 */
export function runShell(
  line: string,
  options: RunOptions & { pipefail?: boolean } = {},
): Promise<RunResult & { fd3: string }> {
  const { pipefail, ...rest } = options;
  const command = line.replace(/^company-data /, `${quote(process.execPath)} ${quote(BIN)} `);
  const [shell, ...flags] = pipefail ? ['bash', '-o', 'pipefail'] : ['sh'];
  return startProcess(shell, [...flags, '-c', command], rest).done;
}
