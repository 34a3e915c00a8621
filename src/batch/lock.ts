// One run per journal. Two runs on the same journal would both pay for every domain and write
// over each other's lines, so a run holds `<journal>.lock` while it works and a second one is
// refused before it sends anything (exit 7).
//
// The lock file is made whole (pid, host, start time, a random token) under a temporary name and
// linked into place: link() fails when the lock exists, so exactly one run gets it, and a reader
// never sees a half-written lock. A lock whose process is gone (a run killed with SIGKILL) is
// stale. Removing it is a check and then an unlink, which two runs could interleave (the second
// removing the fresh lock of the first), so it happens under `<lock>.takeover`, itself created
// with O_EXCL: only its holder removes a lock it does not own, and only if the lock still holds
// the very bytes that were found stale.
//
// claimBatchFiles, called as a run starts, also refuses an output that is the input or the
// journal (src/batch/files.ts), and takes no lock for a dry run or a run without a journal.
import { randomBytes } from 'node:crypto';
import { link, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { Problem } from '../problem.js';
import { assertSeparateFiles, journalPathFor, processIsGone } from './files.js';
import { ioProblem } from './journal-file.js';

interface Holder {
  pid: number;
  host: string;
  started: string;
}

export interface JournalLock {
  readonly path: string;
  /** Removes the lock if it is still this run's. */
  release(): Promise<void>;
}

const ATTEMPTS = 50;
const PAUSE_MS = 20;

function lockPathFor(journalPath: string): string {
  return `${journalPath}.lock`;
}

function busyProblem(journalPath: string, lockPath: string, holder: Holder | undefined): Problem {
  const who = holder
    ? `process ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`}, started ${holder.started}`
    : 'another process';
  return new Problem({
    code: 'journal_busy',
    title: 'Another run is using this journal',
    detail: `${journalPath} is held by ${who}`,
    source: 'client',
    hint: `If no such run is going on, delete ${lockPath}.`,
  });
}

function parseHolder(text: string): Holder | undefined {
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    if (
      Number.isSafeInteger(value.pid) &&
      typeof value.host === 'string' &&
      typeof value.started === 'string'
    )
      return value as Holder;
  } catch {
    // Not a lock we wrote (a torn or foreign file): nobody can be holding it.
  }
  return undefined;
}

/** Whether the holder may still be running: a process on another host cannot be checked. */
function alive(holder: Holder | undefined): boolean {
  if (!holder) return false;
  return holder.host !== hostname() || !processIsGone(holder.pid);
}

async function readLock(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

const pause = () => new Promise((resolve) => setTimeout(resolve, PAUSE_MS));

/**
 * Removes the lock if it still holds `stale`, under the takeover lock. False when another run is
 * taking over at this moment (the caller tries again).
 */
async function removeStale(path: string, stale: string): Promise<boolean> {
  const takeover = `${path}.takeover`;
  try {
    await writeFile(takeover, String(process.pid), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Held for a few system calls; one left behind by a run killed in them is removed.
    const pid = Number(await readLock(takeover));
    if (Number.isSafeInteger(pid) && pid > 0 && processIsGone(pid)) await rm(takeover, { force: true });
    return false;
  }
  try {
    if ((await readLock(path)) === stale) await unlink(path);
  } finally {
    await rm(takeover, { force: true });
  }
  return true;
}

/** Takes the journal's lock, or throws `journal_busy` (exit 7) naming the run that holds it. */
export async function lockJournal(journalPath: string): Promise<JournalLock> {
  const path = lockPathFor(journalPath);
  const text = `${JSON.stringify({
    pid: process.pid,
    host: hostname(),
    started: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
  })}\n`;
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(draft, text, { flag: 'wx', mode: 0o600 });
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        await link(draft, path);
        return {
          path,
          async release() {
            if ((await readLock(path).catch(() => undefined)) === text) await rm(path, { force: true });
          },
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const found = await readLock(path);
      if (found === undefined) continue;
      const holder = parseHolder(found);
      if (alive(holder)) throw busyProblem(journalPath, path, holder);
      if (!(await removeStale(path, found))) await pause();
    }
    throw busyProblem(journalPath, path, undefined);
  } catch (error) {
    throw error instanceof Problem ? error : ioProblem(path, error);
  } finally {
    await rm(draft, { force: true });
  }
}

/**
 * What a batch checks before it reads or buys anything: an output that is not the input or the
 * journal, and the journal's lock, released by the caller however the run ends. A dry run buys
 * and writes nothing: it reads the journal as it is and takes no lock. Stdin to stdout keeps no
 * journal, so there is nothing to share and nothing to lock.
 */
export async function claimBatchFiles(options: {
  input: string;
  output?: string;
  journal?: string;
  dryRun?: boolean;
}): Promise<JournalLock | undefined> {
  await assertSeparateFiles(options);
  const journalPath = journalPathFor(options);
  return journalPath && !options.dryRun ? lockJournal(journalPath) : undefined;
}
