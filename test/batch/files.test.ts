// The files of a batch: paid data is readable by its owner only, and an output that is the input
// (or the result store) under another spelling is refused before anything is read or bought.
import { chmodSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertSeparateFiles, openOutputTarget } from '../../src/batch/files.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { IO } from '../../src/types.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cd-files-'));
  writeFileSync(join(dir, 'in.csv'), 'domain\nacme-shoes.com\n');
  symlinkSync(join(dir, 'in.csv'), join(dir, 'link.csv'));
  linkSync(join(dir, 'in.csv'), join(dir, 'hard.csv'));
  mkdirSync(join(dir, 'sub'));
  symlinkSync(dir, join(dir, 'dirlink'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe('modes of the files that hold paid data', () => {
  it('creates the result store 0600, in a 0700 directory, with its -wal file 0600', async () => {
    const path = join(dir, 'state', 'company-data', 'store.db');
    const store = await openSqliteStore(path);
    await store.settle({
      entry: { at: 1, baseUrl: 'b', keyId: 'k', command: 'enrich', credits: 1, outcome: 'charged' },
    });
    expect(await mode(path)).toBe(0o600);
    expect(await mode(`${path}-wal`)).toBe(0o600);
    expect(await mode(join(dir, 'state', 'company-data'))).toBe(0o700);
    await store.close();
  });

  it('writes the output through a 0600 temporary file; a new output stays 0600', async () => {
    const path = join(dir, 'sub', 'out.csv');
    const target = await openOutputTarget(path, {} as IO);
    const [temp] = (await readdir(join(dir, 'sub'))).filter((name) => name.endsWith('.tmp'));
    expect(await mode(join(dir, 'sub', temp))).toBe(0o600);
    target.stream.write('domain\n');
    await target.commit();
    expect(await mode(path)).toBe(0o600);
  });

  it('keeps the mode of an output it replaces', async () => {
    const path = join(dir, 'sub', 'shared.csv');
    writeFileSync(path, 'old\n');
    chmodSync(path, 0o640);
    const target = await openOutputTarget(path, {} as IO);
    target.stream.write('domain\n');
    await target.commit();
    expect(await mode(path)).toBe(0o640);
  });
});

describe('an output that is the input or the result store', () => {
  const input = () => join(dir, 'in.csv');
  const refused = async (options: { input: string; output: string; store?: string }) =>
    assertSeparateFiles(options).then(
      () => undefined,
      (error: Error & { exitCode?: number }) => error,
    );

  it.each([
    ['the same path', () => input()],
    ['another spelling', () => join(dir, 'sub', '..', 'in.csv')],
    ['a relative path', () => relative(process.cwd(), input())],
    ['a symbolic link', () => join(dir, 'link.csv')],
    ['a hard link', () => join(dir, 'hard.csv')],
    ['a path through a linked directory', () => join(dir, 'dirlink', 'in.csv')],
  ])('refuses the input as the output through %s (exit 2)', async (_, output) => {
    const error = await refused({ input: input(), output: output() });
    expect(error?.exitCode).toBe(2);
    expect(error?.message).toContain('--input and --output are the same file');
  });

  it('refuses the store as the output, existing or not', async () => {
    for (const name of ['in.csv', 'not-yet.csv']) {
      const error = await refused({
        input: join(dir, 'other.csv'),
        output: join(dir, name),
        store: join(dir, 'dirlink', name),
      });
      expect(error?.exitCode).toBe(2);
      expect(error?.message).toBe(
        `Usage error: --output is the result store (${join(dir, name)}): the finished output would replace every stored answer`,
      );
    }
  });

  it('refuses an output whose folder does not exist, naming it, before anything is bought', async () => {
    const problem = (await refused({ input: input(), output: join(dir, 'missing', 'out.csv') })) as
      | (Error & { code?: string; detail?: string })
      | undefined;
    expect({ code: problem?.code, detail: problem?.detail }).toEqual({
      code: 'usage_error',
      detail: `the folder of --output ${join(dir, 'missing', 'out.csv')} does not exist: ${join(dir, 'missing')}`,
    });
  });

  it('accepts separate files, stdin and stdout', async () => {
    expect(await refused({ input: input(), output: join(dir, 'out.csv') })).toBeUndefined();
    expect(await refused({ input: '-', output: input() })).toBeUndefined();
    expect(await refused({ input: input(), output: '-' })).toBeUndefined();
  });
});
