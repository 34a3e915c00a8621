// One run per journal: the lock beside it, its refusal, and the takeover of a lock whose process
// is gone (a run killed with SIGKILL), which exactly one of several runs starting at once wins.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockJournal } from '../../src/batch/lock.js';
import { Problem } from '../../src/problem.js';

let dir: string;
let counter = 0;
const journalPath = () => join(dir, `out-${counter++}.csv.journal`);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cd-lock-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited. */
function deadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', () => resolve(child.pid!));
  });
}

const lockOf = (pid: number, host = hostname()) =>
  `${JSON.stringify({ pid, host, started: '2026-01-02T03:04:05.000Z', token: 'x' })}\n`;

async function refusal(journal: string): Promise<Problem> {
  const error = await lockJournal(journal).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Problem);
  return error as Problem;
}

describe('the journal lock', () => {
  it('is held by one run at a time, names the holder, and is released', async () => {
    const journal = journalPath();
    const lock = await lockJournal(journal);
    expect(lock.path).toBe(`${journal}.lock`);
    expect((await stat(lock.path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(lock.path, 'utf8'))).toMatchObject({ pid: process.pid });

    const busy = await refusal(journal);
    expect(busy.code).toBe('journal_busy');
    expect(busy.exitCode).toBe(7);
    expect(busy.message).toContain(journal);
    expect(busy.message).toContain(`process ${process.pid}`);
    expect(busy.hint).toContain(`delete ${journal}.lock`);

    await lock.release();
    expect(existsSync(`${journal}.lock`)).toBe(false);
    await (await lockJournal(journal)).release();
    // Nothing is left beside the journal.
    expect(existsSync(`${journal}.lock`)).toBe(false);
  });

  it('takes over a lock whose process is gone', async () => {
    const journal = journalPath();
    await writeFile(`${journal}.lock`, lockOf(await deadPid()));
    const lock = await lockJournal(journal);
    expect(JSON.parse(await readFile(lock.path, 'utf8'))).toMatchObject({ pid: process.pid });
    await lock.release();
  });

  it('takes over a lock that is not one (empty or torn)', async () => {
    const journal = journalPath();
    await writeFile(`${journal}.lock`, '{"pid":12');
    await (await lockJournal(journal)).release();
  });

  it('respects a lock of another host, whose process it cannot check', async () => {
    const journal = journalPath();
    await writeFile(`${journal}.lock`, lockOf(await deadPid(), 'elsewhere.example'));
    const busy = await refusal(journal);
    expect(busy.message).toContain('on elsewhere.example, started 2026-01-02T03:04:05.000Z');
  });

  it('lets exactly one of many runs take over the same stale lock at once', async () => {
    const stale = lockOf(await deadPid());
    // Several rounds: whether a check and a removal of two runs interleave is up to the scheduler.
    for (let round = 0; round < 20; round++) {
      const journal = journalPath();
      await writeFile(`${journal}.lock`, stale);
      // Started a moment apart, so that one's check can fall before, and its removal after, the
      // moment another takes the lock.
      const outcomes = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) =>
          new Promise((resolve) => setTimeout(resolve, i % 4)).then(() => lockJournal(journal)),
        ),
      );
      const winners = outcomes.filter((o) => o.status === 'fulfilled');
      expect(winners).toHaveLength(1);
      for (const o of outcomes)
        if (o.status === 'rejected') expect((o.reason as Problem).code).toBe('journal_busy');
      await (winners[0] as PromiseFulfilledResult<{ release(): Promise<void> }>).value.release();
    }
  });

  it('is not blocked by a takeover left by a run killed in the middle of one', async () => {
    const journal = journalPath();
    const dead = await deadPid();
    await writeFile(`${journal}.lock`, lockOf(dead));
    await writeFile(`${journal}.lock.takeover`, String(dead));
    await (await lockJournal(journal)).release();
    expect(existsSync(`${journal}.lock.takeover`)).toBe(false);
  });

  it('does not remove, on release, a lock that is no longer its own', async () => {
    const journal = journalPath();
    const lock = await lockJournal(journal);
    await writeFile(lock.path, lockOf(process.pid));
    await lock.release();
    expect(existsSync(lock.path)).toBe(true);
  });
});
