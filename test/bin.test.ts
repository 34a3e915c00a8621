// bin/company-data.js, the one place that turns main()'s outcome into an exit code. Each test
// runs the real bin file against a stand-in for dist/cli.cjs, so main() can be made to misbehave;
// the last ones run the real build.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** A copy of the real bin whose main() is `main` (the source of a function). */
function binWith(name: string, main: string): string {
  const app = join(dir, name);
  mkdirSync(join(app, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'bin'), join(app, 'bin'), { recursive: true });
  writeFileSync(join(app, 'dist/cli.cjs'), `exports.main = ${main};\n`);
  return join(app, 'bin/company-data.js');
}

/** Runs the real bin, whose main() is `main`. */
function runWith(name: string, main: string) {
  return spawnSync(process.execPath, [binWith(name, main), 'me'], {
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

  it('exits quietly, with 0, when the reader of stdout goes away', () => {
    // The real build: `--help | head -c 10` closes the pipe after a few bytes.
    const bin = join(ROOT, 'bin/company-data.js');
    const pipeline = `"${process.execPath}" "${bin}" --help | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`;
    const r = spawnSync('bash', ['-c', pipeline], { encoding: 'utf8', env: cleanEnv() });
    expect(r.stderr).toBe(''); // no stack trace
    expect(r.stdout.trim()).toBe('0');
  });

  it('prints the version without the bundle, as Commander would with it', () => {
    const bin = join(ROOT, 'bin/company-data.js');
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
    for (const flag of ['--version', '-V']) {
      const alone = spawnSync(process.execPath, [bin, flag], { encoding: 'utf8', env: cleanEnv() });
      expect(alone).toMatchObject({ status: 0, stdout: `${version}\n`, stderr: '' });
      // With another argument the bundle runs, and Commander prints the same line.
      const viaCommander = spawnSync(process.execPath, [bin, '-q', flag], {
        encoding: 'utf8',
        env: cleanEnv(),
      });
      expect(viaCommander).toMatchObject({ status: 0, stdout: `${version}\n`, stderr: '' });
    }
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
