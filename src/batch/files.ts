// Where a batch reads and writes, and how the output file appears only once
// it is complete (a temporary file beside it, fsynced, renamed into place).
import { createReadStream, createWriteStream, type ReadStream, type WriteStream } from 'node:fs';
import { chmod, open, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { Problem, usageError } from '../problem.js';
import { processIsGone } from '../processes.js';
import type { IO } from '../types.js';
import { isWriteFailure, writeProblem } from '../write-failures.js';

export interface InputSource {
  stream: Readable;
  /** Bytes of a file input, for a progress total; unknown for stdin. */
  size?: number;
}

function inputProblem(detail: string): Problem {
  return new Problem({ code: 'invalid_input', title: 'Cannot read the input', detail, source: 'client' });
}

export async function openInputSource(path: string, io: IO): Promise<InputSource> {
  if (path === '-') return { stream: io.stdin };
  let size: number;
  try {
    const info = await stat(path);
    if (info.isDirectory()) throw inputProblem(`${path} is a directory`);
    size = info.size;
  } catch (error) {
    if (error instanceof Problem) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw inputProblem(code === 'ENOENT' ? `no such file: ${path}` : `${path}: ${code ?? String(error)}`);
  }
  const stream: ReadStream = createReadStream(path);
  return { stream, size };
}

export interface OutputTarget {
  stream: Writable;
  /** The final path, or undefined for stdout. */
  path?: string;
  /** Flushes, fsyncs and renames the temporary file into place. */
  commit(): Promise<void>;
  /** Removes the temporary file (an interrupted or aborted run leaves no half output behind). */
  discard(): Promise<void>;
}

/** Rejects when a write failed, even one whose 'error' went out before: never commit a short file. */
function closeStream(stream: WriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = () => (stream.errored ? reject(stream.errored) : resolve());
    if (stream.closed) return settle();
    stream.once('error', reject);
    stream.once('close', settle);
    if (!stream.writableEnded) stream.end();
  });
}

/**
 * A run killed with SIGKILL cannot remove its temporary output, and its successor writes a new one
 * under its own pid. Temporary files of this output whose process no longer exists are removed;
 * one of a run still alive (a concurrent run, or a reused pid) is left alone.
 */
async function removeOrphanedTemps(path: string): Promise<void> {
  const prefix = `.${basename(path)}.`;
  let names: string[];
  try {
    names = await readdir(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length, -'.tmp'.length));
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && processIsGone(pid)) {
      await rm(join(dirname(path), name), { force: true });
    }
  }
}

export async function openOutputTarget(path: string | undefined, io: IO): Promise<OutputTarget> {
  if (path === undefined || path === '-') {
    return { stream: io.stdout, commit: async () => {}, discard: async () => {} };
  }
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  await removeOrphanedTemps(path);
  // Paid data: readable by its owner only (an output it replaces keeps that file's mode).
  const stream = createWriteStream(temp, { mode: 0o600 });
  await new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', (error) =>
      reject(
        isWriteFailure(error)
          ? writeProblem(error, path)
          : new Problem({
              code: 'invalid_input',
              title: 'Cannot write the output',
              detail: `${path}: ${(error as NodeJS.ErrnoException).code ?? error.message}`,
              source: 'client',
            }),
      ),
    );
  });
  return {
    stream,
    path,
    async commit() {
      await closeStream(stream);
      const handle = await open(temp, 'r+');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      const replaced = await stat(path).catch(() => undefined);
      if (replaced) await chmod(temp, replaced.mode & 0o777);
      await rename(temp, path);
    },
    async discard() {
      await closeStream(stream).catch(() => {});
      await rm(temp, { force: true });
    },
  };
}

/** What names a file: its device and inode when it exists, else its real directory and name. */
export async function identity(path: string): Promise<string> {
  try {
    const { dev, ino } = await stat(path);
    return `${dev}:${ino}`;
  } catch {
    const dir = await realpath(dirname(path)).catch(() => resolve(dirname(path)));
    return join(dir, basename(path));
  }
}

/**
 * The output replaces its path when complete: an output that is the input, or the result store,
 * under any name (./x.csv, a symbolic or hard link) would destroy it. Refused before anything is
 * read or bought.
 */
export async function assertSeparateFiles(options: {
  input: string;
  output?: string;
  store?: string;
}): Promise<void> {
  const { input, output, store } = options;
  if (output === undefined || output === '-') return;
  await assertOutputFolder(output);
  const target = await identity(output);
  const remedy = 'Write the output to another file (for example --output enriched.csv).';
  if (input !== '-' && (await identity(input)) === target) {
    throw usageError(
      `--input and --output are the same file (${output}): the finished output would replace the input`,
      remedy,
    );
  }
  if (store !== undefined && (await identity(store)) === target) {
    throw usageError(
      `--output is the result store (${output}): the finished output would replace every stored answer`,
      remedy,
    );
  }
}

/**
 * The folder --output names must exist before anything is bought: a run that found out only when
 * it opened the file would end with a raw errno, or (opened late) after paying for the rows.
 */
export async function assertOutputFolder(output: string): Promise<void> {
  const folder = dirname(output);
  const found = await stat(folder).catch((error: NodeJS.ErrnoException) => error);
  if (found instanceof Error) {
    if (found.code !== 'ENOENT' && found.code !== 'ENOTDIR') return; // opening the output says why
    throw usageError(
      `the folder of --output ${output} does not exist: ${folder}`,
      `Create it first (mkdir -p ${shellQuote([folder])}) or write the output elsewhere; nothing was bought.`,
    );
  }
  if (!found.isDirectory())
    throw usageError(
      `the folder of --output ${output} is not a folder: ${folder}`,
      'Write the output elsewhere; nothing was bought.',
    );
}

const SAFE_WORD = /^[A-Za-z0-9_./:=@%+,-]+$/;

/** POSIX shell quoting, so the printed resume command can be pasted as is. */
export function shellQuote(args: readonly string[]): string {
  return args.map((arg) => (SAFE_WORD.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)).join(' ');
}
