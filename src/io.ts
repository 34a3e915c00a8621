// The one object that writes to the process's streams (DESIGN.md: one IO object).
import type { Readable, Writable } from 'node:stream';
import type { IO, Spinner } from './types.js';

export interface IOOptions {
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  quiet?: boolean;
  verbose?: boolean;
  /** false when --no-color was given. */
  color?: boolean;
  env?: NodeJS.ProcessEnv;
}

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
  const envColumns = Number.parseInt(env.COLUMNS ?? '', 10);
  const ttyColumns = (stdout as { columns?: number }).columns;
  const columns = ttyColumns && ttyColumns > 0 ? ttyColumns : envColumns > 0 ? envColumns : 80;

  let activeSpinner: { clear(): void; render(): void } | undefined;
  // Talk lines must not interleave with a spinner frame: clear it, write, redraw.
  const writeErr = (line: string) => {
    activeSpinner?.clear();
    stderr.write(`${line}\n`);
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
    unicode: localeIsUnicode(env),
    quiet,
    verbose,
    out(text) {
      stdout.write(text);
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
