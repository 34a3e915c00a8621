// The files of a batch: paid data is readable by its owner only.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOutputTarget } from '../../src/batch/files.js';
import { openJournal } from '../../src/batch/journal.js';
import type { IO } from '../../src/types.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cd-files-'));
  mkdirSync(join(dir, 'sub'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe('modes of the files that hold paid data', () => {
  it('creates the journal 0600', async () => {
    const path = join(dir, 'new.journal');
    await (await openJournal(path, 'fp')).close();
    expect(await mode(path)).toBe(0o600);
    await (await openJournal(join(dir, 'fresh.journal'), 'fp', { fresh: true })).close();
    expect(await mode(join(dir, 'fresh.journal'))).toBe(0o600);
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
