// The bundle loader (src/cli-loader.ts): the code cache is used only for the exact bytes it was
// made from, and anything else (no cache, other bytes, a damaged file) still runs the bundle.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheLayout, cachePathOf, checksumOf, loadBundle } from '../src/cli-loader.js';
import { cleanEnv, copyBuild, ROOT } from './helpers/cli.js';

interface Exports {
  answer(): string;
  file: string;
  dir: string;
  sep: string;
  where(): string;
}

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cd-loader-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A bundle in a directory of its own; `value` is what answer() returns (keep its length to test staleness). */
function writeBundle(name: string, value: string): string {
  const path = join(dir, name, 'bundle.cjs');
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(
    path,
    [
      `function answer() { return ${JSON.stringify(value)}; }`,
      'function where() { return new Error("here").stack.split("\\n")[1]; }',
      "module.exports = { answer, where, file: __filename, dir: __dirname, sep: require('node:path').sep };",
      '',
    ].join('\n'),
  );
  return path;
}

const LOADER = join(ROOT, 'dist/loader.cjs');

/**
 * Loads a bundle in a fresh process with the built loader (one V8 isolate compiles a source once
 * and then answers from its own compilation cache, which would hide what the code cache did).
 */
function loadInChild(bundle: string, write = false): { cache: string; answer: string } {
  const script = `const loaded = require(${JSON.stringify(LOADER)}).loadBundle(${JSON.stringify(bundle)});
const answer = loaded.exports.answer();
${write ? 'loaded.writeCache();' : ''}
process.stdout.write(JSON.stringify({ cache: loaded.cache, answer }));`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: cleanEnv() });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as { cache: string; answer: string };
}

describe('loadBundle', () => {
  it('runs a bundle without a cache, with the module variables Node would give it', () => {
    const bundle = writeBundle('plain', 'first');
    const loaded = loadBundle<Exports>(bundle);
    expect(loaded.cache).toBe('none');
    expect(loaded.exports.answer()).toBe('first');
    expect(loaded.exports.file).toBe(bundle);
    expect(loaded.exports.dir).toBe(join(dir, 'plain'));
    expect(loaded.exports.sep).toBe('/');
    // Stack traces point at the bundle's own lines.
    expect(loaded.exports.where()).toContain(`${bundle}:2:`);
  });

  it('uses the cache it wrote for the same bytes', () => {
    const bundle = writeBundle('cached', 'first');
    expect(loadInChild(bundle, true)).toEqual({ cache: 'none', answer: 'first' });
    expect(readFileSync(cachePathOf(bundle)).readUInt32LE(0)).toBe(readFileSync(bundle).length);
    expect(loadInChild(bundle)).toEqual({ cache: 'used', answer: 'first' });
  });

  it('loads a file the bundle requires beside it once, with a cache of its own', () => {
    const bundle = join(dir, 'pair', 'bundle.cjs');
    mkdirSync(join(dir, 'pair', 'vendor'), { recursive: true });
    writeFileSync(join(dir, 'pair', 'vendor', 'dep.cjs'), 'module.exports = { made: Symbol("once") };\n');
    writeFileSync(
      bundle,
      "const a = require('./vendor/dep.cjs'); const b = require('./vendor/dep.cjs');\n" +
        "module.exports = { same: a === b, sep: require('node:path').sep, answer: () => 'pair' };\n",
    );
    const script = `const l = require(${JSON.stringify(LOADER)});
const loaded = l.loadBundle(${JSON.stringify(bundle)});
const all = l.loadedBundles();
if (process.argv[1] === 'write') for (const b of all) b.writeCache();
process.stdout.write(JSON.stringify({ same: loaded.exports.same, sep: loaded.exports.sep, caches: all.map((b) => [b.file, b.cache]) }));`;
    const runIt = (mode: string) => {
      const r = spawnSync(process.execPath, ['-e', script, mode], { encoding: 'utf8', env: cleanEnv() });
      expect(r.stderr).toBe('');
      return JSON.parse(r.stdout);
    };
    const dep = join(dir, 'pair', 'vendor', 'dep.cjs');
    expect(runIt('write')).toEqual({
      same: true,
      sep: '/',
      caches: [
        [bundle, 'none'],
        [dep, 'none'],
      ],
    });
    expect(runIt('read')).toEqual({
      same: true,
      sep: '/',
      caches: [
        [bundle, 'used'],
        [dep, 'used'],
      ],
    });
  });

  it('ignores a cache made for other bytes of the same length, and runs the new ones', () => {
    const bundle = writeBundle('stale', 'first');
    loadInChild(bundle, true);
    // Same length, other code: V8's own check (the length) would take this cache.
    writeBundle('stale', 'other');
    expect(loadInChild(bundle)).toEqual({ cache: 'stale', answer: 'other' });
  });

  it('runs the bundle when the cache is damaged, cut short, or refused by V8', () => {
    const bundle = writeBundle('damaged', 'first');
    loadInChild(bundle, true);
    const file = readFileSync(cachePathOf(bundle));
    const { sourceEnd, checksumAt, dataStart } = cacheLayout(file.readUInt32LE(0));
    // V8's data starts on a 4-byte boundary, after zero padding, so the checksum reads it in place.
    expect(dataStart % 4).toBe(0);
    expect(file.subarray(sourceEnd, checksumAt).every((byte) => byte === 0)).toBe(true);
    const outcomes: string[] = [];
    const loadWith = (cache: Buffer) => {
      writeFileSync(cachePathOf(bundle), cache);
      const loaded = loadInChild(bundle);
      expect(loaded.answer).toBe('first');
      outcomes.push(loaded.cache);
    };
    // A sector of V8's data garbled: a release V8 would not notice; the checksum does.
    const garbled = Buffer.from(file);
    const sector = dataStart + ((garbled.length - dataStart) >> 1);
    for (let i = sector; i < sector + 512; i++) garbled[i] = ~garbled[i] & 0xff;
    loadWith(garbled);
    // Cut short anywhere: in the length, in the source, at or inside the data.
    for (const cut of [2, sourceEnd - 3, sourceEnd, dataStart, file.length - 1])
      loadWith(file.subarray(0, cut));
    // Data that is not V8's, with a checksum that matches it: V8 refuses it.
    const foreign = Buffer.alloc(256, 0x5a);
    const checksum = Buffer.alloc(4);
    checksum.writeUInt32LE(checksumOf(foreign), 0);
    loadWith(Buffer.concat([file.subarray(0, checksumAt), checksum, foreign]));
    // And the file as written is used again.
    loadWith(file);
    expect(outcomes).toEqual([
      'damaged',
      'stale',
      'stale',
      'damaged',
      'damaged',
      'damaged',
      'rejected',
      'used',
    ]);
  });
});

describe('cacheLayout', () => {
  it("puts V8's data on a 4-byte boundary, after the source and at most 3 bytes of padding", () => {
    for (let length = 0; length < 12; length++) {
      const { sourceEnd, checksumAt, dataStart } = cacheLayout(length);
      expect(sourceEnd).toBe(4 + length);
      expect(checksumAt - sourceEnd).toBeGreaterThanOrEqual(0);
      expect(checksumAt - sourceEnd).toBeLessThan(4);
      expect(dataStart).toBe(checksumAt + 4);
      expect(dataStart % 4).toBe(0);
    }
  });
});

describe('checksumOf', () => {
  const data = Buffer.from(Array.from({ length: 4099 }, (_, i) => (i * 37 + (i >> 8)) & 0xff));
  const base = checksumOf(data);

  it('changes when any 128-byte stretch is damaged, or the data is cut', () => {
    for (let start = 0; start + 128 <= data.length; start += 61) {
      const damaged = Buffer.from(data);
      for (let i = start; i < start + 128; i++) damaged[i] = ~damaged[i] & 0xff;
      expect(checksumOf(damaged)).not.toBe(base);
    }
    for (const cut of [0, 1, 4096, 4098]) expect(checksumOf(data.subarray(0, cut))).not.toBe(base);
    const tail = Buffer.from(data);
    tail[4098] ^= 0x01; // the last bytes past the final whole word are all read
    expect(checksumOf(tail)).not.toBe(base);
  });

  it('reads unaligned data as aligned', () => {
    const unaligned = Buffer.alloc(data.length + 1).subarray(1);
    data.copy(unaligned);
    expect(unaligned.byteOffset & 3).not.toBe(0);
    expect(checksumOf(unaligned)).toBe(base);
  });
});

describe('the build', () => {
  it.each([
    'cli.cjs',
    'vendor/undici.cjs',
    'vendor/tldts.cjs',
    'vendor/csv-parse.cjs',
    'vendor/csv-stringify.cjs',
    'vendor/cli-table3.cjs',
  ])('leaves a code cache that a fresh process uses for dist/%s', (file) => {
    const bundle = join(ROOT, 'dist', file);
    const check = spawnSync(
      process.execPath,
      [
        '-e',
        `process.stdout.write(require(${JSON.stringify(join(ROOT, 'dist/loader.cjs'))}).loadBundle(${JSON.stringify(bundle)}).cache)`,
      ],
      { encoding: 'utf8', env: cleanEnv() },
    );
    expect(check.stderr).toBe('');
    expect(check.stdout).toBe('used');
  });

  it('still runs the CLI when the cache belongs to another build', () => {
    const app = mkdtempSync(join(dir, 'app-'));
    const bin = copyBuild(app);
    const cache = join(app, 'dist/cli.cjs.cache');
    const bytes = readFileSync(cache);
    bytes[4 + 100] ^= 0x01; // one bit of the recorded source: the cache is for another build
    writeFileSync(cache, bytes);
    const r = spawnSync(process.execPath, [bin, '--help'], {
      encoding: 'utf8',
      env: cleanEnv(),
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('enrich');
  });
});
