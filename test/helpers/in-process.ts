// Runs the CLI's main() in this process with fake streams, as the GitHub CLI's command tests do:
// the whole stdout and stderr are captured, on a pretend terminal or a pipe, and the environment
// and clock are the test's own. Requests still go over real HTTP to a loopback sandbox.
import { writeSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { WriteStream } from 'node:tty';
import { main } from '../../src/cli.js';
import { cleanEnv } from './cli.js';
import { withOwnState } from './state.js';

export interface InProcessOptions {
  /** stdout and stderr claim to be a terminal (with this many columns) when set. */
  tty?: boolean;
  /** stderr alone claims to be a terminal or not (default: as `tty`): stdout redirected, say. */
  stderrTTY?: boolean;
  columns?: number;
  env?: NodeJS.ProcessEnv;
  /** What stdin holds (a pipe unless stdinTTY is set). */
  stdin?: string;
  /**
   * stdin claims to be a terminal: isTTY is true and setRawMode is accepted (and ignored), so a
   * command that reads a secret unechoed can be fed its keystrokes through `stdin`.
   */
  stdinTTY?: boolean;
  /** The clock main() sees; a fixed instant unless given. */
  now?: () => number;
  /**
   * An open file standing for the terminal's screen, of `rows` rows: stdout and stderr write to it
   * as they are written, and carry its descriptor, so that a pager started on stdout writes there
   * too. The result's stdout and stderr still hold what main() itself wrote to each.
   */
  screen?: { fd: number; rows: number };
  /** An open file stdout writes to, carrying its descriptor: as a shell's `> file` has it. */
  stdoutFile?: number;
  /**
   * The width stderr reports as a terminal. 0 (the default) keeps the spinner off, as it draws only
   * where it can measure a line, so that what is captured is deterministic.
   */
  stderrColumns?: number;
}

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A fixed instant, so that anything derived from the clock is the same in every run. */
export const FIXED_NOW = Date.parse('2026-11-24T12:00:00Z');

function sink(
  tty: boolean,
  columns: number,
  file?: { fd: number; rows?: number },
): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk.toString();
      if (file) writeSync(file.fd, chunk);
      done();
    },
  });
  // A terminal as io.ts sees one; with columns 0 the spinner stays off (it draws only where it can
  // measure a line), so what is captured is deterministic.
  Object.assign(stream, { isTTY: tty, columns: tty ? columns : undefined });
  // What a spinner moves the cursor with, as escape sequences written to the stream.
  if (tty && columns > 0) {
    const { cursorTo, moveCursor, clearLine } = WriteStream.prototype;
    Object.assign(stream, { cursorTo, moveCursor, clearLine });
  }
  if (file) Object.assign(stream, file);
  return { stream, text: () => text };
}

function source(text: string, tty: boolean): Readable {
  const stream = Readable.from([text]);
  if (tty) Object.assign(stream, { isTTY: true, setRawMode: () => stream });
  return stream;
}

export async function runInProcess(argv: string[], options: InProcessOptions = {}): Promise<InProcessResult> {
  const tty = options.tty ?? false;
  const toFile = options.stdoutFile === undefined ? options.screen : { fd: options.stdoutFile };
  const out = sink(tty, options.columns ?? 0, toFile);
  const err = sink(options.stderrTTY ?? tty, options.stderrColumns ?? 0, options.screen);
  const code = await main(argv, {
    env: { LANG: 'en_US.UTF-8', TERM: 'xterm', COLUMNS: '100', ...withOwnState(options.env) },
    stdin: source(options.stdin ?? '', options.stdinTTY ?? false),
    stdout: out.stream,
    stderr: err.stream,
    now: options.now ?? (() => FIXED_NOW),
  });
  return { code, stdout: out.text(), stderr: err.text() };
}

/**
 * main() in-process as the end-to-end tests ran the binary: stdout and stderr piped, the real
 * clock, the test's environment on top of the developer's cleaned one (test/helpers/cli.ts
 * `cleanEnv`), stdin as given. What differs from a process: no exit of its own, no signal.
 */
export async function runPiped(
  argv: string[],
  options: { env?: Record<string, string | undefined>; input?: string; stdoutFile?: number } = {},
): Promise<InProcessResult> {
  return runInProcess(argv, {
    env: cleanEnv(options.env),
    stdin: options.input,
    now: Date.now,
    stdoutFile: options.stdoutFile,
  });
}
