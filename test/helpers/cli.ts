// Runs the real built binary (bin/company-data.js) as a child process.
import { spawn } from 'node:child_process';
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
  env?: Record<string, string | undefined>;
  input?: string | Buffer;
  cwd?: string;
  timeoutMs?: number;
  /** Node's own options, before the entry (e.g. `--require` of a preload). */
  nodeArgs?: string[];
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

export function runCli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: cleanEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    // A command that exits without reading its stdin closes the pipe: that is no failure here.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}
