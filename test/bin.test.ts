// bin/company-data.js, the one place that turns main()'s outcome into an exit code. It is
// CommonJS (bin/package.json) for a faster start, so it no longer gets an ES module's top-level
// await: these tests hold it to the same outcomes. Each runs the real bin file against a stand-in
// for dist/version.cjs (what `--version` alone loads), so main() can be made to misbehave.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ROOT } from './helpers/cli.js';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cd-bin-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** 4 MB to stdout, far beyond a pipe's buffer: the source of a statement for a stand-in main(). */
const WRITE_4MB = 'for (let i = 0; i < 64; i++) process.stdout.write("x".repeat(65536));';

/** A copy of the real bin whose `--version` main() is `main` (the source of a function). */
function binWith(name: string, main: string): string {
  const app = join(dir, name);
  mkdirSync(join(app, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'bin'), join(app, 'bin'), { recursive: true });
  writeFileSync(join(app, 'dist/version.cjs'), `exports.main = ${main};\n`);
  return join(app, 'bin/company-data.js');
}

/** Runs the real bin with `--version`, whose main() is `main`. */
function runWith(name: string, main: string) {
  return spawnSync(process.execPath, [binWith(name, main), '--version'], {
    encoding: 'utf8',
    env: cleanEnv(),
    maxBuffer: 16 * 1024 * 1024,
    timeout: 30_000,
  });
}

describe('bin/company-data.js', () => {
  it('exits with the code main() returns', () => {
    const r = runWith('returns', 'async () => { process.stdout.write("ran\\n"); return 4; }');
    expect(r.stdout).toBe('ran\n');
    expect(r.status).toBe(4);
  });

  it('exits with 1 when main() rejects (a bug), and says what was thrown', () => {
    const r = runWith('rejects', 'async () => { throw new Error("boom in main"); }');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('boom in main');
  });

  it('exits with 1, not 0, when main() never settles because nothing is left to wait for', () => {
    const r = runWith('never', '() => new Promise(() => {})');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('internal error: the command ended without a result');
  });

  it('exits once main() settles, with every byte it wrote to a pipe delivered', () => {
    // 4 MB is far beyond a pipe's buffer: most of it is still queued in the stream when main()
    // returns, and an exit that did not wait for it would cut the output short.
    const r = runWith('flushes', `async () => { ${WRITE_4MB} process.stderr.write("done\\n"); return 3; }`);
    expect(r.status).toBe(3);
    expect(r.stdout.length).toBe(64 * 65536);
    expect(r.stderr).toBe('done\n');
  });

  it('does not wait for a timer main() left behind: main() awaits its own work', () => {
    const r = runWith('timer', 'async () => { setTimeout(() => {}, 600_000); return 0; }');
    expect(r.signal).toBeNull(); // killed at the spawn's timeout if the timer held it
    expect(r.status).toBe(0);
  });

  it('makes stdout and stderr only when main() uses them (node:stream stays unloaded)', () => {
    const r = runWith(
      'untouched',
      'async () => { require("node:fs").writeSync(1, String(process.moduleLoadList.includes("NativeModule stream"))); return 0; }',
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('false');
  });

  it('exits quietly, with 0, when the reader of stdout goes away', () => {
    // `| head -c 10`: the reader closes after a few bytes; the writes after that fail with EPIPE.
    const bin = binWith('epipe', `async () => { ${WRITE_4MB} return 0; }`);
    const pipeline = `"${process.execPath}" "${bin}" --version | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`;
    const r = spawnSync('bash', ['-c', pipeline], { encoding: 'utf8', env: cleanEnv() });
    expect(r.stderr).toBe(''); // no stack trace
    expect(r.stdout.trim()).toBe('0');
  });

  it('runs as CommonJS, whatever the package root declares', () => {
    // require.main is the entry's module when the entry is CommonJS, undefined for an ES module.
    const r = runWith(
      'commonjs',
      'async () => { process.stdout.write(String(require.main?.filename)); return 0; }',
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(join(dir, 'commonjs', 'bin', 'company-data.js'));
  });
});
