// The one object that writes to the process's streams (DESIGN.md: one IO object).
import type { Readable, Writable } from 'node:stream';
import { wrapLine } from './output/wrap.js';
import { escapeForTerminal } from './text.js';
import type { IO, Spinner } from './types.js';

export interface IOOptions {
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  quiet?: boolean;
  verbose?: boolean;
  /** false when --no-color was given. */
  color?: boolean;
  /** false when --no-pager was given. */
  pager?: boolean;
  env?: NodeJS.ProcessEnv;
  /**
   * `timestamped`: every stderr line starts with the UTC time (a JSON problem line carries it as
   * its `time` field), for a log (--log-format, COMPANY_DATA_LOG_FORMAT).
   */
  logFormat?: LogFormat;
  /** The clock for those timestamps, in epoch milliseconds. */
  now?: () => number;
}

export type LogFormat = 'plain' | 'timestamped';

/** 2026-11-24T12:00:00Z: the UTC time to the second, as a log line starts. */
export function logTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// Lines that are records for a program or a log (a JSON problem line, a line that starts with its
// time) are written whole: wrapping would split one record over several lines.
const RECORD_LINE = /^(\{|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ )/;

const NOOP_SPINNER: Spinner = { update() {}, stop() {} };

function isTTY(stream: unknown): boolean {
  return Boolean((stream as { isTTY?: boolean } | undefined)?.isTTY);
}

/** UTF-8 unless the locale says otherwise (LC_ALL > LC_CTYPE > LANG, as setlocale reads them). */
export function localeIsUnicode(env: NodeJS.ProcessEnv): boolean {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
  if (locale === '') return true;
  if (locale === 'C' || locale === 'POSIX') return false;
  return /utf-?8/i.test(locale);
}

/**
 * The width text for `stream` is fitted to: the terminal's own, else COLUMNS, else 80 (a file or a
 * pipe, where no width is known).
 */
export function terminalColumns(stream: unknown, env: NodeJS.ProcessEnv): number {
  const ttyColumns = (stream as { columns?: number } | undefined)?.columns;
  if (ttyColumns && ttyColumns > 0) return ttyColumns;
  const envColumns = Number.parseInt(env.COLUMNS ?? '', 10);
  return envColumns > 0 ? envColumns : 80;
}

export function createIO(options: IOOptions = {}): IO {
  const env = options.env ?? process.env;
  // process.stdin builds a stream on first touch (a few ms): only commands that read it pay.
  let stdin = options.stdin;
  let stdinTTY: boolean | undefined;
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const quiet = options.quiet ?? false;
  const verbose = options.verbose ?? false;
  const isStdoutTTY = isTTY(stdout);
  const isStderrTTY = isTTY(stderr);
  const noColorEnv = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  const color = options.color !== false && !noColorEnv && isStdoutTTY && env.TERM !== 'dumb';
  const columns = terminalColumns(stdout, env);
  // Talk is wrapped only where a terminal reports its width (as the spinner draws only there): a
  // guessed width would break lines a wider screen did not need broken.
  const errWidth = (stderr as { columns?: number }).columns;
  const errColumns = isStderrTTY && errWidth && errWidth > 0 ? errWidth : 0;
  const now = options.now ?? Date.now;
  const timestamped = options.logFormat === 'timestamped';

  let activeSpinner: { clear(): void; render(): void } | undefined;
  const pager = pagerFor({ stdout, stderr, env, wanted: options.pager !== false && isStdoutTTY });
  // Talk lines must not interleave with a spinner frame: clear it, write, redraw. While a pager
  // holds the screen they wait, and follow when it is quit.
  // On a terminal that reports its width, talk is fitted to it at word boundaries, each wrapped line continuing
  // under its own indentation. Off a terminal (a log, a script) a message keeps its lines whole, so
  // that one line is one message for grep; with timestamps, each line starts with its time.
  const shape = (message: string): string =>
    message
      .split('\n')
      .flatMap((line) => {
        if (RECORD_LINE.test(line)) return [line];
        if (timestamped) return [`${logTimestamp(now())} ${line}`];
        return errColumns ? wrapLine(line, errColumns) : [line];
      })
      .map((line) => `${line}\n`)
      .join('');
  const writeErr = (message: string) => {
    const text = shape(message);
    if (pager?.holdsScreen()) {
      pager.holdTalk(text);
      return;
    }
    activeSpinner?.clear();
    stderr.write(text);
    activeSpinner?.render();
  };

  return {
    get stdin(): Readable {
      stdin ??= process.stdin;
      return stdin;
    },
    stdout,
    stderr,
    // Asked by the few commands that may prompt; node:tty loads then (for a pipe or a file on
    // stdout, nothing else of a command needs it).
    get isStdinTTY(): boolean {
      stdinTTY ??= options.stdin ? isTTY(options.stdin) : process.getBuiltinModule('node:tty').isatty(0);
      return stdinTTY;
    },
    isStdoutTTY,
    isStderrTTY,
    color,
    columns,
    errColumns: errColumns || terminalColumns(stderr, env),
    logTime: timestamped ? () => logTimestamp(now()) : undefined,
    unicode: localeIsUnicode(env),
    quiet,
    verbose,
    out(text) {
      // On a terminal, controls from the service's text (C1, bidi overrides) are shown escaped
      // (src/text.ts); piped, the text is written exactly as received.
      const shown = isStdoutTTY ? escapeForTerminal(text) : text;
      if (pager) pager.write(shown);
      else stdout.write(shown);
    },
    get outputClosed(): boolean {
      return Boolean(pager?.quit() || stdout.errored || stdout.destroyed);
    },
    async finish() {
      await pager?.finish();
    },
    info(message) {
      if (!quiet) writeErr(message);
    },
    warn(message) {
      writeErr(message);
    },
    error(message) {
      writeErr(message);
    },
    debug(message) {
      if (verbose) writeErr(message);
    },
    spinner(text) {
      // ora redraws forever on a terminal that reports zero columns (a bare `script` pty):
      // no spinner is better than a flood of cursor codes. A dumb terminal cannot move the
      // cursor, and NO_COLOR asks for plain output: no animation either.
      if (!isStderrTTY || quiet || !((stderr as { columns?: number }).columns ?? 0)) return NOOP_SPINNER;
      if (env.TERM === 'dumb' || noColorEnv) return NOOP_SPINNER;
      return startSpinner(stderr, text, color, (s) => {
        activeSpinner = s;
      });
    },
  };
}

/** The pager command: COMPANY_DATA_PAGER, else PAGER, else `less -FRX` (as gh and git choose). */
export function pagerCommand(env: NodeJS.ProcessEnv): string | undefined {
  const chosen = env.COMPANY_DATA_PAGER ?? env.PAGER ?? 'less -FRX';
  const command = chosen.trim();
  // An empty pager, or cat, asks for none (as git reads them).
  return command === '' || command === 'cat' ? undefined : command;
}

interface Pager {
  write(text: string): void;
  /** Whether talk must wait: output is held back, or the pager runs (and owns the screen). */
  holdsScreen(): boolean;
  holdTalk(text: string): void;
  /** Whether the person quit the pager before the end of the output. */
  quit(): boolean;
  finish(): Promise<void>;
}

/**
 * Output on a terminal goes through a pager once it is longer than the screen (gh, git): until
 * then it is held; past a screenful the pager starts with what was held, and takes the rest as it
 * comes. Output that ends within a screen is written as is. Never when stdout is not a terminal
 * (the caller decides), with --no-pager, or for a stdout without a file descriptor (a test's).
 */
function pagerFor(options: {
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  wanted: boolean;
}): Pager | undefined {
  const { stdout, stderr, env } = options;
  const outFd = (stdout as { fd?: unknown }).fd;
  const command = pagerCommand(env);
  if (!options.wanted || typeof outFd !== 'number' || command === undefined) return undefined;
  const rows = (stdout as { rows?: number }).rows || Number.parseInt(env.LINES ?? '', 10) || 24;
  const errFd = (stderr as { fd?: unknown }).fd;
  let held = '';
  let lines = 0;
  let child: import('node:child_process').ChildProcess | undefined;
  let exited: Promise<void> | undefined;
  let gone = false;
  // The pager could not be run: the output goes to stdout as it comes.
  let fallen = false;
  let talk = '';
  // What the pager was given, until it is known to run: a pager command that is not found (the
  // shell's exit 127) gets its text written to stdout instead.
  let sent: string | undefined = '';
  const start = () => {
    const { spawn } = process.getBuiltinModule('node:child_process');
    // less: -F quit at once if it fits, -R show colours, -X leave the text on the screen. LESS and
    // LV as git sets them, unless the person set their own.
    child = spawn(command, {
      shell: true,
      stdio: ['pipe', outFd, typeof errFd === 'number' ? errFd : 'inherit'],
      env: { LESS: 'FRX', LV: '-c', ...env },
    });
    // Ctrl-C while the pager shows the output is the pager's (less interrupts a search with it), as
    // git has it: this process ignores it until the pager ends, instead of dying under the pager.
    const ignoreInterrupt = () => {};
    process.on('SIGINT', ignoreInterrupt);
    child.once('close', () => process.off('SIGINT', ignoreInterrupt));
    const input = child.stdin as Writable;
    // A pager quit before the end closes its input: the rest of the output is dropped (EPIPE is
    // the normal end, exit 0), and the command learns it through outputClosed.
    input.on('error', () => {
      gone = true;
    });
    exited = new Promise((resolve) => {
      child?.once('error', () => {
        // The pager could not start (not installed): show the output without it.
        fallen = true;
        child = undefined;
        if (sent !== undefined) stdout.write(sent);
        resolve();
      });
      child?.once('close', (code) => {
        if (code === 127 && sent !== undefined) {
          fallen = true;
          child = undefined;
          stdout.write(sent);
        } else gone = true;
        resolve();
      });
    });
    input.write(held);
    sent = held;
    held = '';
    // A pager that has lasted a second has started; what it was given need not be kept.
    setTimeout(() => {
      sent = undefined;
    }, 1000).unref();
  };
  return {
    write(text) {
      if (fallen) {
        stdout.write(text);
        return;
      }
      if (gone) return;
      if (child) {
        (child.stdin as Writable).write(text);
        if (sent !== undefined) sent += text;
        return;
      }
      held += text;
      for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
      if (lines >= rows) start();
    },
    // Talk waits while output is held (it would otherwise come before the output it follows)
    // and while the pager runs.
    holdsScreen: () => (child !== undefined && !gone) || (!exited && held !== ''),
    holdTalk(text) {
      talk += text;
    },
    quit: () => gone && child !== undefined,
    async finish() {
      if (exited) {
        (child?.stdin as Writable | undefined)?.end();
        await exited;
      } else if (held) stdout.write(held);
      held = '';
      if (talk) stderr.write(talk);
      talk = '';
    },
  };
}

/**
 * A small stderr spinner. ora is loaded lazily so that commands which never spin do not pay for it;
 * until it has loaded, nothing is drawn (requests that fast need no spinner).
 */
function startSpinner(
  stderr: Writable,
  text: string,
  color: boolean,
  setActive: (s: { clear(): void; render(): void } | undefined) => void,
): Spinner {
  let stopped = false;
  let current = text;
  let ora: import('ora').Ora | undefined;
  import('ora').then(
    ({ default: makeOra }) => {
      if (stopped) return;
      ora = makeOra({
        text: current,
        stream: stderr as NodeJS.WriteStream,
        color: color ? 'cyan' : false,
        isEnabled: true,
        // ora would otherwise put a terminal's stdin in raw mode to swallow keystrokes, and raw
        // mode turns Ctrl-C into a plain character: the command would run on, spending credits.
        discardStdin: false,
      });
      ora.start();
      setActive({ clear: () => ora?.clear(), render: () => ora?.render() });
    },
    () => {
      // A spinner is a courtesy: a failure to load one must never fail the command.
    },
  );
  return {
    update(next) {
      current = next;
      if (ora) ora.text = next;
    },
    stop() {
      stopped = true;
      if (ora) {
        ora.stop();
        setActive(undefined);
      }
    },
  };
}
