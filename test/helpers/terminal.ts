// A real pseudo-terminal with a window size (test/helpers/pty-run.py), where a test can press
// Ctrl-C once some text has appeared. The shell's view of the outcome: death by SIGINT reads as
// exit status 130, as `$?` shows it.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BIN, cleanEnv, ROOT } from './cli.js';

const SCRIPT = fileURLToPath(new URL('./pty-run.py', import.meta.url));

export interface TerminalRun {
  /** Everything the terminal showed (stdout and stderr together). */
  output: string;
  /** Exit status as a shell reports it: 128 + the signal for a death by signal. */
  status: number;
  /** Seconds from the start to the Ctrl-C, when one was pressed. */
  interruptedAt: number | null;
  /** Seconds from the start to the exit. */
  endedAt: number;
}

export interface TerminalOptions {
  env?: Record<string, string | undefined>;
  /** Press Ctrl-C once this text has appeared (and `interruptDelay` seconds more have passed). */
  interruptAfter?: string;
  interruptDelay?: number;
  /** Type `keys` (as a person would, "y\r" say) once `after` has appeared. */
  type?: { after: string; keys: string; delay?: number; repeat?: boolean };
  timeoutSeconds?: number;
  columns?: number;
  rows?: number;
  /**
   * A shell command line run instead (`$CLI` in it stands for the built CLI), for what a person
   * types with redirections: `$CLI ... > out.json`.
   */
  shell?: string;
}

/** What a person sees of a terminal's output: escape sequences and carriage returns removed. */
export function screenText(output: string): string {
  return output
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '')
    .replace(/\x1b[=>]/g, '')
    .replace(/\x1b\][^\x07]*\x07/g, '')
    .replace(/\r/g, '');
}

export function runOnTerminal(args: string[], options: TerminalOptions = {}): Promise<TerminalRun> {
  const spec = {
    argv: options.shell
      ? ['sh', '-c', options.shell.replaceAll('$CLI', `'${process.execPath}' '${BIN}'`)]
      : [process.execPath, BIN, ...args],
    cols: options.columns ?? 100,
    rows: options.rows ?? 40,
    interruptAfter: options.interruptAfter ?? null,
    interruptDelay: options.interruptDelay ?? 0,
    typeAfter: options.type?.after ?? null,
    type: options.type?.keys ?? '',
    typeDelay: options.type?.delay ?? 0,
    typeRepeat: options.type?.repeat ?? false,
    timeout: options.timeoutSeconds ?? 30,
  };
  return new Promise((resolve, reject) => {
    execFile(
      'python3',
      [SCRIPT, JSON.stringify(spec)],
      {
        cwd: ROOT,
        env: cleanEnv({ TERM: 'xterm-256color', LANG: 'C.UTF-8', ...options.env }),
        maxBuffer: 64 << 20,
      },
      (error, stdout) => {
        if (error) return reject(error);
        const r = JSON.parse(stdout) as {
          output: string;
          exitCode: number | null;
          signal: number | null;
          interruptedAt: number | null;
          endedAt: number;
        };
        resolve({
          output: r.output,
          status: r.signal !== null ? 128 + r.signal : (r.exitCode ?? -1),
          interruptedAt: r.interruptedAt,
          endedAt: r.endedAt,
        });
      },
    );
  });
}
