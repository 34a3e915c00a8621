// Finds the runnable examples of README.md (```console blocks: "$ command" lines, each followed
// by the output it prints), runs them against the sandbox, and compares or rewrites the output.
import { closeSync, cpSync, mkdirSync, mkdtempSync, openSync, symlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { main } from '../../src/cli.js';
import { BIN, cleanEnv, ROOT, startProcess } from './cli.js';

export interface ReadmeExample {
  command: string;
  expectedExit: number;
  /** The output lines shown in the README under the command. */
  shown: string[];
  /** Index of the "$ command" line in the README's lines. */
  line: number;
}

/** "# exits 6" at the end of a command line says which exit code the example has. */
const EXIT_COMMENT = /#\s*exits\s+(\d+)\s*$/;

export function parseExamples(readme: string): ReadmeExample[] {
  const lines = readme.split('\n');
  const examples: ReadmeExample[] = [];
  let inConsole = false;
  let current: ReadmeExample | undefined;
  lines.forEach((text, index) => {
    if (!inConsole) {
      if (text.trim() === '```console') inConsole = true;
      return;
    }
    if (text.trim() === '```') {
      inConsole = false;
      current = undefined;
      return;
    }
    if (text.startsWith('$ ')) {
      const match = EXIT_COMMENT.exec(text);
      current = {
        command: text.slice(2).replace(EXIT_COMMENT, '').trim(),
        expectedExit: match ? Number(match[1]) : 0,
        shown: [],
        line: index,
      };
      examples.push(current);
    } else if (current) {
      current.shown.push(text);
    }
  });
  return examples;
}

/**
 * Ports, elapsed times and purchase times change from run to run; everything else must match
 * exactly.
 */
export function normalise(text: string): string {
  return (
    text
      .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
      // Each example's own state directory stands for the default one a user has.
      .replace(/~\/\.state\/\d+\//g, '~/.local/state/')
      .replace(/\b\d+ ms\b/g, 'N ms')
      // How long a purchase took, in a --report line.
      .replace(/"ms":\d+/g, '"ms":N')
      .replace(/\bskew \d+ s\b/g, 'skew N s')
      .replace(/\b\d+(\.\d+)?s$/gm, 'Ns')
      // The examples run piped, where log lines start with the time; the README shows a terminal.
      .replace(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /gm, '')
      // When a stored answer was bought (the bought_at column).
      .replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\b/g, 'TIME')
      .replace(/[ \t]+$/gm, '')
      .replace(/\n+$/, '')
  );
}

/** A scratch directory with examples/ and a `company-data` on PATH, as a user would have. */
export function makeWorkspace(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), 'cd-readme-'));
  cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true });
  const binDir = join(dir, '.bin');
  mkdirSync(binDir);
  symlinkSync(BIN, join(binDir, 'company-data'));
  const env = cleanEnv({
    PATH: `${binDir}:${process.env.PATH ?? ''}`,
    COLUMNS: '100',
    LANG: 'C.UTF-8',
    LC_ALL: undefined,
    NO_COLOR: '1',
    XDG_CONFIG_HOME: join(dir, '.config'),
    XDG_CACHE_HOME: join(dir, '.cache'),
  });
  return { dir, env };
}

let examples = 0;

/**
 * The arguments of a command line that is one run of company-data and nothing else (no pipe, no
 * redirection, nothing the shell would expand), else undefined.
 */
export function singleRun(command: string): string[] | undefined {
  const prefix = 'company-data ';
  if (!command.startsWith(prefix) || /[$`\\]/.test(command)) return undefined;
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: string | undefined;
  for (const ch of command.slice(prefix.length)) {
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/[|<>;&*?(){}~#]/.test(ch)) {
      return undefined;
    } else if (ch === ' ') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote !== undefined) return undefined;
  if (inWord) words.push(word);
  return words;
}

/**
 * `printf '…' | company-data …`: a run of company-data that reads what a printf writes, as the
 * printf command (for sh) and the run's arguments; else undefined.
 */
export function fedRun(command: string): { printf: string; words: string[] } | undefined {
  const match = /^(printf(?: '[^']*'| [^\s'|;&<>$`\\]+)+) \| (company-data .*)$/.exec(command);
  const words = match ? singleRun(match[2]) : undefined;
  return match && words ? { printf: match[1], words } : undefined;
}

/**
 * `company-data … > file`: a run of company-data with its stdout redirected to a file, as the
 * run's arguments and the file's path; else undefined.
 */
export function redirectedRun(command: string): { words: string[]; file: string } | undefined {
  const match = /^(company-data [^>]*) > ([\w./-]+)$/.exec(command);
  const words = match ? singleRun(match[1]) : undefined;
  return match && words ? { words, file: match[2] } : undefined;
}

/** A stream writing to an open file, and carrying its descriptor as process.stdout would. */
function fileStream(fd: number): Writable {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      writeSync(fd, chunk);
      done();
    },
  });
  return Object.assign(stream, { fd });
}

/**
 * Runs one example, with stderr merged into stdout in the order it was written: a single run of
 * company-data as main() in this process (in the workspace as its working directory, both streams
 * into one pipe), fed what a printf writes when it reads a pipe from one (the printf run by sh),
 * or with its stdout a file of the workspace when redirected to one (the stream carrying the
 * file's descriptor, as the command reads the file's name from it); anything else through sh. Each example has a result store of its own, so it reads
 * the same whatever ran before it; an example that shows reuse names its store (`--store`) in the
 * workspace.
 */
export async function runExample(
  example: ReadmeExample,
  workspace: { dir: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; output: string }> {
  const env = { ...workspace.env, XDG_STATE_HOME: join(workspace.dir, '.state', String(examples++)) };
  const fed = fedRun(example.command);
  const redirected = redirectedRun(example.command);
  const words = singleRun(example.command) ?? fed?.words ?? redirected?.words;
  let code: number | null;
  let output = '';
  if (words) {
    const input = fed
      ? (await startProcess('sh', ['-c', fed.printf], { cwd: workspace.dir, env, input: 'ignore' }).done)
          .stdout
      : undefined;
    const pipe = new Writable({
      write(chunk, _encoding, done) {
        output += chunk.toString();
        done();
      },
    });
    const fd = redirected ? openSync(join(workspace.dir, redirected.file), 'w') : undefined;
    const previous = process.cwd();
    process.chdir(workspace.dir);
    try {
      code = await main(words, {
        env,
        stdin: Readable.from(input === undefined ? [] : [input]),
        stdout: fd === undefined ? pipe : fileStream(fd),
        stderr: pipe,
        now: Date.now,
      });
    } finally {
      process.chdir(previous);
      if (fd !== undefined) closeSync(fd);
    }
  } else {
    // The braces make 2>&1 cover every command of a pipeline, not only the last one.
    const run = await startProcess('sh', ['-c', `{ ${example.command}\n} 2>&1`], {
      cwd: workspace.dir,
      env,
      input: 'ignore',
    }).done;
    code = run.code;
    output = run.stdout;
  }
  // The scratch directory stands for the user's home in what the README shows.
  return { code, output: output.replaceAll(workspace.dir, '~') };
}
