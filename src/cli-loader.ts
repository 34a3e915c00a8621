// Loads the CLI bundle (dist/cli.cjs) with V8's code cache, when the build left one for exactly
// this bundle. Built to dist/loader.cjs on its own, so that bin/company-data.js can use it before
// anything of the CLI is compiled.
//
// Why: Node 20 compiles a CommonJS file from source at every start, and a command runs several
// hundred of the bundle's functions before its request leaves (Commander, the config, the HTTP
// layer, the output). A cache made after a run of a few ordinary commands holds their bytecode:
// measured in alternating runs, `errors -o json` and `search` finished 15-20 ms sooner
// (docs/performance.md, "Sixth pass").
//
// The cache file is `cli.cjs.cache` beside the bundle: the bundle's length (4 bytes), its exact
// bytes, a checksum of V8's data (4 bytes), then that data. Before the data is used, the bytes
// are compared with the bundle's (one memcmp) and the checksum is taken again. V8 itself checks
// only the source's length and its own version and flags, so a cache for other source of the
// same length would run stale bytecode; and a release build of V8 does not checksum the data,
// so a damaged file could crash it. Anything that does not match (another build, another Node,
// other V8 flags, a damaged file) is ignored, and the bundle compiles from source as it would
// without a cache.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

/** What became of the cache: used, refused by V8, made for other bytes, damaged, or missing. */
export type CacheOutcome = 'used' | 'rejected' | 'stale' | 'damaged' | 'none';

export interface LoadedBundle<T> {
  exports: T;
  cache: CacheOutcome;
  /** Writes a cache of every function compiled so far (the build's warm-up calls it at exit). */
  writeCache(): void;
}

const WORD = 4;

export function cachePathOf(bundle: string): string {
  return `${bundle}.cache`;
}

/** Words apart that the checksum reads: one in every 128 bytes. */
const STRIDE = 32;

/**
 * FNV-1a over one 32-bit word in every 128 bytes, the length and the last bytes. Storage fails a
 * sector (512 bytes or more) at a time, and a cut file changes the length, so this sees any
 * damage a disk does. Every word would see a single flipped bit too, but took ~3 ms of a start of
 * ~150 ms (a fresh process runs the loop unoptimised); this takes ~0.6 ms, its first call included.
 */
export function checksumOf(data: Buffer): number {
  const words = data.length >>> 2;
  // Large buffers read from a file start on their own allocation; a copy when one does not.
  const aligned = (data.byteOffset & 3) === 0 ? data : Buffer.from(data);
  const view = new Int32Array(aligned.buffer, aligned.byteOffset, words);
  let hash = Math.imul(0x811c9dc5 ^ data.length, 0x01000193);
  for (let i = 0; i < words; i += STRIDE) hash = Math.imul(hash ^ view[i], 0x01000193);
  for (let i = words * WORD; i < data.length; i++) hash = Math.imul(hash ^ data[i], 0x01000193);
  return hash >>> 0;
}

function readCache(path: string, source: Buffer): { data?: Buffer; outcome: CacheOutcome } {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return { outcome: 'none' };
  }
  if (file.length < WORD) return { outcome: 'stale' };
  const sourceEnd = WORD + file.readUInt32LE(0);
  if (
    sourceEnd - WORD !== source.length ||
    file.length < sourceEnd ||
    !file.subarray(WORD, sourceEnd).equals(source)
  ) {
    return { outcome: 'stale' };
  }
  const dataStart = sourceEnd + WORD;
  if (file.length <= dataStart) return { outcome: 'damaged' };
  const data = file.subarray(dataStart);
  if (checksumOf(data) !== file.readUInt32LE(sourceEnd)) return { outcome: 'damaged' };
  return { data, outcome: 'used' };
}

/** Runs a CommonJS bundle as Node's loader would, with its cache when one matches. */
export function loadBundle<T>(bundle: string): LoadedBundle<T> {
  const bytes = readFileSync(bundle);
  const cache = readCache(cachePathOf(bundle), bytes);
  // The same parameters as Node's own CommonJS wrapper; the source starts on the wrapper's line,
  // so line numbers in stack traces are the bundle's.
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname) {${bytes.toString('utf8')}\n})`,
    { filename: bundle, cachedData: cache.data },
  );
  const outcome: CacheOutcome = cache.data && script.cachedDataRejected ? 'rejected' : cache.outcome;
  const module = { exports: {} as T };
  const run = script.runInThisContext() as (
    exports: T,
    require: NodeJS.Require,
    module: { exports: T },
    filename: string,
    dirname: string,
  ) => void;
  run(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  return {
    exports: module.exports,
    cache: outcome,
    writeCache() {
      const data = script.createCachedData();
      const length = Buffer.alloc(WORD);
      length.writeUInt32LE(bytes.length, 0);
      const checksum = Buffer.alloc(WORD);
      checksum.writeUInt32LE(checksumOf(data), 0);
      const path = cachePathOf(bundle);
      const partial = `${path}.${process.pid}.tmp`;
      writeFileSync(partial, Buffer.concat([length, bytes, checksum, data]));
      renameSync(partial, path);
    },
  };
}
