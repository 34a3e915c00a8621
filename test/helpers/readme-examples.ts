// Finds the runnable examples of README.md (```console blocks: "$ command" lines, each followed
// by the output it prints), runs them against the sandbox, and compares or rewrites the output.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, cleanEnv, ROOT } from './cli.js';

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
 * Runs one example through sh, with stderr merged into stdout in the order it was written. Each
 * example has a result store of its own, so it reads the same whatever ran before it; an example
 * that shows reuse names its store (`--store`) in the workspace.
 */
export function runExample(
  example: ReadmeExample,
  workspace: { dir: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // The braces make 2>&1 cover every command of a pipeline, not only the last one.
    const child = spawn('sh', ['-c', `{ ${example.command}\n} 2>&1`], {
      cwd: workspace.dir,
      env: { ...workspace.env, XDG_STATE_HOME: join(workspace.dir, '.state', String(examples++)) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    // The scratch directory stands for the user's home in what the README shows.
    child.on('close', (code) => resolve({ code, output: output.replaceAll(workspace.dir, '~') }));
  });
}
