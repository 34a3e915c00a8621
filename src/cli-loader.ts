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
// The same goes for the files the bundle requires beside it (dist/vendor/*.cjs: undici, the public
// suffix list, the CSV parser, ...): each is loaded through loadBundle with a cache of its own, made
// by the build after a batch and a few other commands. A batch loads ~800 KB of them before its
// first lookup leaves; compiled from source that took ~20 ms more (docs/performance.md, "Tenth
// pass").
//
// A cache file is `<file>.cache` beside its file: the file's length (4 bytes), its exact bytes,
// zero to three bytes of padding (so that V8's data starts on a 4-byte boundary, where the
// checksum reads it in place), a checksum of V8's data (4 bytes), then that data. Before the data
// is used, the bytes are compared with the file's (one memcmp) and the checksum is taken again.
// V8 itself checks only the source's length and its own version and flags, so a cache for other
// source of the same length would run stale bytecode; and a release build of V8 does not
// checksum the data, so a damaged file could crash it. Anything that does not match (another
// build, another Node, other V8 flags, a damaged file) is ignored, and the file compiles from
// source as it would without a cache.
//
// V8 flags: a cache is refused when V8's flags differ from those it was made under, and the CLI
// sets two at run time (--liftoff-only for undici's parser, --no-allocation-site-pretenuring for a
// batch). Both are set after the files they would otherwise invalidate have loaded, and the build
// makes every cache with neither set (scripts/code-cache.mjs).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** What became of the cache: used, refused by V8, made for other bytes, damaged, or missing. */
export type CacheOutcome = 'used' | 'rejected' | 'stale' | 'damaged' | 'none';

export interface LoadedBundle<T> {
  /** The file's path. */
  file: string;
  /** What the file left in module.exports (read after it ran). */
  readonly exports: T;
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
  // A cache file puts V8's data on a 4-byte boundary of the file's own allocation, so it is read
  // in place; anything else is copied first.
  const aligned = (data.byteOffset & 3) === 0 ? data : Buffer.from(data);
  const view = new Int32Array(aligned.buffer, aligned.byteOffset, words);
  let hash = Math.imul(0x811c9dc5 ^ data.length, 0x01000193);
  for (let i = 0; i < words; i += STRIDE) hash = Math.imul(hash ^ view[i], 0x01000193);
  for (let i = words * WORD; i < data.length; i++) hash = Math.imul(hash ^ data[i], 0x01000193);
  return hash >>> 0;
}

/** Where the checksum and V8's data start in a cache file for a source of `sourceLength` bytes. */
export function cacheLayout(sourceLength: number): {
  sourceEnd: number;
  checksumAt: number;
  dataStart: number;
} {
  const sourceEnd = WORD + sourceLength;
  const checksumAt = (sourceEnd + WORD - 1) & ~(WORD - 1);
  return { sourceEnd, checksumAt, dataStart: checksumAt + WORD };
}

function readCache(path: string, source: Buffer): { data?: Buffer; outcome: CacheOutcome } {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return { outcome: 'none' };
  }
  if (file.length < WORD) return { outcome: 'stale' };
  const { sourceEnd, checksumAt, dataStart } = cacheLayout(file.readUInt32LE(0));
  if (
    sourceEnd - WORD !== source.length ||
    file.length < sourceEnd ||
    !file.subarray(WORD, sourceEnd).equals(source)
  ) {
    return { outcome: 'stale' };
  }
  if (file.length <= dataStart) return { outcome: 'damaged' };
  const data = file.subarray(dataStart);
  if (checksumOf(data) !== file.readUInt32LE(checksumAt)) return { outcome: 'damaged' };
  return { data, outcome: 'used' };
}

const loaded = new Map<string, LoadedBundle<unknown>>();

/** Every file loaded through loadBundle in this process, in the order they were loaded. */
export function loadedBundles(): LoadedBundle<unknown>[] {
  return [...loaded.values()];
}

/**
 * The require() a bundle gets: a file beside it (`./vendor/undici.cjs`) through loadBundle, with
 * its own cache; a built-in module as Node has it. The bundles need nothing else (esbuild put
 * every package into one of them); anything else goes to Node's resolution from the bundle's
 * directory. node:module, which createRequire() needs, is loaded only then (~0.5 ms of a start).
 */
function requireFor(bundle: string): (specifier: string) => unknown {
  const dir = dirname(bundle);
  let fallback: ((specifier: string) => unknown) | undefined;
  return (specifier) => {
    if (specifier.startsWith('./') || specifier.startsWith('../')) {
      return loadBundle(join(dir, specifier)).exports;
    }
    const builtin = process.getBuiltinModule(specifier);
    if (builtin !== undefined) return builtin;
    fallback ??= process.getBuiltinModule('node:module').createRequire(bundle);
    return fallback(specifier);
  };
}

/**
 * Runs a CommonJS bundle as Node's loader would, with its cache when one matches; once per
 * process, as require() would.
 */
export function loadBundle<T>(bundle: string): LoadedBundle<T> {
  const known = loaded.get(bundle);
  if (known) return known as LoadedBundle<T>;
  const bytes = readFileSync(bundle);
  const cache = readCache(cachePathOf(bundle), bytes);
  // The same parameters as Node's own CommonJS wrapper; the source starts on the wrapper's line,
  // so line numbers in stack traces are the bundle's.
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname) {${bytes.toString('utf8')}\n})`,
    { filename: bundle, cachedData: cache.data },
  );
  const module = { exports: {} as T };
  const entry: LoadedBundle<T> = {
    file: bundle,
    get exports() {
      return module.exports;
    },
    cache: cache.data && script.cachedDataRejected ? 'rejected' : cache.outcome,
    writeCache() {
      const data = script.createCachedData();
      const { sourceEnd, checksumAt, dataStart } = cacheLayout(bytes.length);
      const length = Buffer.alloc(WORD);
      length.writeUInt32LE(bytes.length, 0);
      // The padding (zeros) and the checksum, between the source and V8's data.
      const checksum = Buffer.alloc(dataStart - sourceEnd);
      checksum.writeUInt32LE(checksumOf(data), checksumAt - sourceEnd);
      const path = cachePathOf(bundle);
      const partial = `${path}.${process.pid}.tmp`;
      writeFileSync(partial, Buffer.concat([length, bytes, checksum, data]));
      renameSync(partial, path);
    },
  };
  // Registered before it runs, as Node does, so a cycle of requires ends instead of recursing.
  loaded.set(bundle, entry as LoadedBundle<unknown>);
  const run = script.runInThisContext() as (
    exports: T,
    require: (specifier: string) => unknown,
    module: { exports: T },
    filename: string,
    dirname: string,
  ) => void;
  try {
    run(module.exports, requireFor(bundle), module, bundle, dirname(bundle));
  } catch (error) {
    loaded.delete(bundle);
    throw error;
  }
  return entry;
}
