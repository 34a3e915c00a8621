import { type ChildProcess, spawn } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openJournal } from '../../src/batch/journal.js';
import type { RowResult } from '../../src/batch/output.js';
import { Problem } from '../../src/problem.js';

const found = (n: number): RowResult => ({
  found: true,
  record: { domain: `d${n}.example`, company_name: `Company ${n} – Ünïcode`, tech: ['a', 'b'] },
  credits_charged: 1,
  error_code: null,
  error_detail: null,
});
const NOT_FOUND: RowResult = {
  found: false,
  record: null,
  credits_charged: 0,
  error_code: null,
  error_detail: null,
};

let dir: string;
let counter = 0;
const freshPath = () => path.join(dir, `run-${counter++}.journal`);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cd-journal-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('journal: store and reopen', () => {
  it('answers from memory before a flush and from the file after a reopen', async () => {
    const file = freshPath();
    const journal = await openJournal(file, 'fp-1');
    await journal.append('acme-shoes.com', found(1));
    await journal.append('nobody.example', NOT_FOUND);
    expect(journal.has('acme-shoes.com')).toBe(true);
    expect(journal.has('globex.io')).toBe(false);
    expect(journal.size).toBe(2);
    expect(await journal.get('acme-shoes.com')).toEqual(found(1));
    await journal.flush();
    expect(await journal.get('acme-shoes.com')).toEqual(found(1));
    await journal.close();

    const reopened = await openJournal(file, 'fp-1');
    expect(reopened.size).toBe(2);
    expect(reopened.has('nobody.example')).toBe(true);
    expect(await reopened.get('acme-shoes.com')).toEqual(found(1));
    expect(await reopened.get('nobody.example')).toEqual(NOT_FOUND);
    expect(await reopened.get('globex.io')).toBeUndefined();
    await reopened.close();
  });

  it('tells the first sighting of a domain in this run from a duplicate, apart from what it stores', async () => {
    const file = freshPath();
    const journal = await openJournal(file, 'fp-seen');
    await journal.append('earlier.com', NOT_FOUND);
    await journal.close();

    const reopened = await openJournal(file, 'fp-seen');
    // Journalled by an earlier run, not yet met by this one.
    expect(reopened.firstSeen('earlier.com')).toBe('earlier.com');
    expect(reopened.firstSeen('earlier.com')).toBeUndefined();
    expect(await reopened.get('earlier.com')).toEqual(NOT_FOUND);
    // Met, with no result yet: not stored.
    expect(reopened.firstSeen('new.com')).toBe('new.com');
    expect([reopened.has('new.com'), reopened.size]).toEqual([false, 1]);
    expect(await reopened.get('new.com')).toBeUndefined();
    await reopened.append('new.com', found(3));
    expect([reopened.has('new.com'), reopened.size]).toEqual([true, 2]);
    expect(await reopened.get('new.com')).toEqual(found(3));
    expect(reopened.firstSeen('new.com')).toBeUndefined();
    // Appended without being met (another caller): still a first sighting afterwards.
    await reopened.append('other.com', NOT_FOUND);
    expect(reopened.firstSeen('other.com')).toBe('other.com');
    await reopened.flush();
    expect(await reopened.get('new.com')).toEqual(found(3));
    await reopened.close();
    const third = await openJournal(file, 'fp-seen');
    expect(third.size).toBe(3);
    await third.close();
  });

  it('writes the documented format: a header line, then one {"d","r"} line per result', async () => {
    const file = freshPath();
    const journal = await openJournal(file, 'fp-format');
    await journal.append('acme-shoes.com', NOT_FOUND);
    await journal.close();
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines).toEqual([
      '{"journal":1,"fingerprint":"fp-format"}',
      '{"d":"acme-shoes.com","r":{"found":false,"record":null,"credits_charged":0,"error_code":null,"error_detail":null}}',
      '',
    ]);
  });

  it('keeps the latest result of a domain appended twice, across a reopen', async () => {
    const file = freshPath();
    const journal = await openJournal(file, 'fp');
    await journal.append('a.com', NOT_FOUND);
    await journal.flush();
    await journal.append('a.com', found(2));
    await journal.close();
    const reopened = await openJournal(file, 'fp');
    expect(reopened.size).toBe(1);
    expect(await reopened.get('a.com')).toEqual(found(2));
    await reopened.close();
  });

  it('reads back results larger than one read block', async () => {
    const file = freshPath();
    const big: RowResult = { ...found(0), record: { company_name: 'x'.repeat(50_000) } };
    const journal = await openJournal(file, 'fp');
    await journal.append('big.com', big);
    await journal.append('small.com', NOT_FOUND);
    await journal.close();
    const reopened = await openJournal(file, 'fp');
    expect(await reopened.get('big.com')).toEqual(big);
    expect(await reopened.get('small.com')).toEqual(NOT_FOUND);
    await reopened.close();
  });

  it('deletes the file on remove()', async () => {
    const file = freshPath();
    const journal = await openJournal(file, 'fp');
    await journal.append('a.com', NOT_FOUND);
    await journal.remove();
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  it('refuses appends after close', async () => {
    const journal = await openJournal(freshPath(), 'fp');
    await journal.close();
    await expect(journal.append('a.com', NOT_FOUND)).rejects.toBeInstanceOf(Problem);
  });
});

describe('journal: durability', () => {
  it('reaches the disk on its own within the flush interval', async () => {
    const file = freshPath();
    const journal = await openJournal(file, 'fp', { flushIntervalMs: 20 });
    await journal.append('timer.com', NOT_FOUND);
    await vi.waitFor(async () => expect(await readFile(file, 'utf8')).toContain('"d":"timer.com"'), {
      timeout: 10_000,
      interval: 20,
    });
    await journal.close();
  });

  it('writes to disk once much is buffered, so a tight loop does not pile results up in memory', async () => {
    const file = freshPath();
    // An interval that never fires during the test: only the size limit can write.
    const journal = await openJournal(file, 'fp', { flushIntervalMs: 3_600_000 });
    const padded: RowResult = { ...NOT_FOUND, error_detail: 'p'.repeat(1000) };
    // ~6.6 MB appended; the journal writes whenever 4 MB are waiting.
    for (let i = 0; i < 6000; i++) await journal.append(`d${i}.com`, padded);
    const { size } = await stat(file);
    expect(size).toBeGreaterThan(4_000_000);
    await journal.close();
  });

  it('cuts a torn last line on open and appends after it', async () => {
    const file = freshPath();
    const journal = await openJournal(file, 'fp');
    await journal.append('kept.com', found(1));
    await journal.close();
    const intact = await readFile(file, 'utf8');
    await appendFile(file, '{"d":"torn.com","r":{"found":tr');

    const reopened = await openJournal(file, 'fp');
    expect(reopened.has('kept.com')).toBe(true);
    expect(reopened.has('torn.com')).toBe(false);
    expect(await readFile(file, 'utf8')).toBe(intact);
    await reopened.append('after.com', NOT_FOUND);
    await reopened.close();

    const third = await openJournal(file, 'fp');
    expect(third.size).toBe(2);
    expect(await third.get('after.com')).toEqual(NOT_FOUND);
    expect(await third.get('kept.com')).toEqual(found(1));
    await third.close();
  });

  it('skips a damaged line in the middle and keeps the ones after it', async () => {
    const file = freshPath();
    await writeFile(
      file,
      `{"journal":1,"fingerprint":"fp"}\n{"d":"a.com","r":{"found":false}}\nnot json\n{"d":"b.com","r":{"found":false}}\n`,
    );
    const journal = await openJournal(file, 'fp');
    expect([journal.has('a.com'), journal.has('b.com'), journal.size]).toEqual([true, true, 2]);
    await journal.close();
  });

  it('restarts a journal whose header was torn', async () => {
    const file = freshPath();
    await writeFile(file, '{"journal":1,"finger');
    const journal = await openJournal(file, 'fp');
    expect(journal.size).toBe(0);
    await journal.close();
    expect(await readFile(file, 'utf8')).toBe('{"journal":1,"fingerprint":"fp"}\n');
  });
});

describe('journal: belongs to one run', () => {
  it('refuses a journal of another run and says to use --fresh', async () => {
    const file = freshPath();
    const journal = await openJournal(file, 'run-a');
    await journal.append('a.com', NOT_FOUND);
    await journal.close();
    const before = await readFile(file, 'utf8');

    const error = await openJournal(file, 'run-b').catch((e) => e);
    expect(error).toBeInstanceOf(Problem);
    expect(error.code).toBe('usage_error');
    expect(error.exitCode).toBe(2);
    expect(error.detail).toBe(
      `the journal ${file} belongs to another run (a different input, output or options)`,
    );
    expect(error.hint).toContain('--fresh');
    expect(await readFile(file, 'utf8')).toBe(before);
  });

  it('starts over with fresh', async () => {
    const file = freshPath();
    const journal = await openJournal(file, 'run-a');
    await journal.append('a.com', NOT_FOUND);
    await journal.close();
    const fresh = await openJournal(file, 'run-b', { fresh: true });
    expect(fresh.size).toBe(0);
    expect(fresh.has('a.com')).toBe(false);
    await fresh.close();
    expect(await readFile(file, 'utf8')).toBe('{"journal":1,"fingerprint":"run-b"}\n');
  });

  it('never overwrites a file that is not a journal', async () => {
    const file = freshPath();
    await writeFile(file, 'name,domain\nAcme,acme.com\n');
    const error = await openJournal(file, 'fp').catch((e) => e);
    expect(error.code).toBe('usage_error');
    expect(error.detail).toBe(`${file} is not a company-data journal`);
    expect(await readFile(file, 'utf8')).toBe('name,domain\nAcme,acme.com\n');
  });
});

describe('journal: kill -9', () => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  let bundle: string;

  beforeAll(async () => {
    // The module itself, bundled, runs in a child process that is killed without warning.
    bundle = path.join(dir, 'journal-bundle.mjs');
    await build({
      entryPoints: [path.join(here, '..', '..', 'src', 'batch', 'journal.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: bundle,
      logLevel: 'silent',
    });
  });

  function runChild(file: string, flushed: number): ChildProcess {
    const script = `
      const { openJournal } = await import(${JSON.stringify(bundle)});
      const journal = await openJournal(${JSON.stringify(file)}, 'kill-test', { flushIntervalMs: 5 });
      const result = (i) => ({ found: true, record: { n: i, pad: 'x'.repeat(i % 300) }, credits_charged: 1, error_code: null, error_detail: null });
      for (let i = 0; i < ${flushed}; i++) await journal.append('d' + i + '.example', result(i));
      await journal.flush();
      process.stdout.write('flushed\\n');
      // Keep appending (and the timer keeps writing) until the parent kills us mid-way.
      for (let i = ${flushed}; ; i++) {
        await journal.append('d' + i + '.example', result(i));
        if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    `;
    return spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  }

  it('keeps every flushed entry and a readable file after SIGKILL', async () => {
    const file = freshPath();
    const flushed = 2000;
    const child = runChild(file, flushed);
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('flushed')) resolve();
      });
      child.on('exit', () => reject(new Error('child exited before flushing')));
    });
    // The child is still appending (and its timer writing) when the kill lands.
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const journal = await openJournal(file, 'kill-test');
    expect(journal.size).toBeGreaterThanOrEqual(flushed);
    for (const i of [0, 1, 999, flushed - 1]) {
      const stored = await journal.get(`d${i}.example`);
      expect(stored?.record).toEqual({ n: i, pad: 'x'.repeat(i % 300) });
    }
    await journal.append('after-crash.com', NOT_FOUND);
    await journal.close();
    const text = await readFile(file, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    for (const line of text.trimEnd().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });
});
