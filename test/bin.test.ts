// bin/company-data.js, the one place that turns main()'s outcome into an exit code. Each test
// runs the real bin file against a stand-in for dist/cli.cjs, so main() can be made to misbehave;
// the last ones run the real build.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startProcess } from './helpers/cli.js';

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
  return startProcess(process.execPath, [binWith(name, main), 'me'], { timeoutMs: 30_000 }).done;
}

/** Runs a bash command line (for PIPESTATUS). */
function runBash(script: string) {
  return startProcess('bash', ['-c', script]).done;
}

describe('bin/company-data.js', () => {
  it('exits with the code main() returns', async () => {
    const r = await runWith('returns', 'async () => { process.stdout.write("ran\\n"); return 4; }');
    expect(r).toMatchObject({ code: 4, stdout: 'ran\n', stderr: '' });
  });

  it('exits with 1 when main() rejects (a bug), and says what was thrown', async () => {
    const r = await runWith('rejects', 'async () => { throw new Error("boom in main"); }');
    expect(r.code).toBe(1);
    // Node's report of the unhandled rejection, with the stack: the message is what is ours.
    expect(r.stderr).toContain('Error: boom in main');
    expect(r.stdout).toBe('');
  });

  it('exits with 1, not 0, when main() never settles because nothing is left to wait for', async () => {
    const r = await runWith('never', '() => new Promise(() => {})');
    expect(r).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'company-data: internal error: the command ended without a result\n',
    });
  });

  it('exits once main() settles, with every byte it wrote to a pipe delivered', async () => {
    // 4 MB is far beyond a pipe's buffer: most of it is still queued in the stream when main()
    // returns, and an exit that did not wait for it would cut the output short.
    const r = await runWith(
      'flushes',
      `async () => { ${WRITE_4MB} process.stderr.write("done\\n"); return 3; }`,
    );
    expect(r).toMatchObject({ code: 3, stdout: 'x'.repeat(64 * 65536), stderr: 'done\n' });
  });

  it('exits quietly, with 0, when the reader of stdout goes away', async () => {
    // The real build: `--help | head -c 10` closes the pipe after a few bytes.
    const bin = join(ROOT, 'bin/company-data.js');
    const pipeline = `"${process.execPath}" "${bin}" --help | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`;
    const r = await runBash(pipeline);
    // No stack trace, and the status of the CLI's side of the pipe.
    expect(r).toMatchObject({ code: 0, stdout: '0\n', stderr: '' });
  });

  it('prints the version without the bundle, as Commander would with it', async () => {
    const bin = join(ROOT, 'bin/company-data.js');
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
    for (const flag of ['--version', '-V']) {
      const alone = await startProcess(process.execPath, [bin, flag]).done;
      expect(alone).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
      // With another argument the bundle runs, and Commander prints the same line.
      const viaCommander = await startProcess(process.execPath, [bin, '-q', flag]).done;
      expect(viaCommander).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });

  it('runs as CommonJS, whatever the package root declares', async () => {
    // require.main is the entry's module when the entry is CommonJS, undefined for an ES module.
    const r = await runWith(
      'commonjs',
      'async () => { process.stdout.write(String(require.main?.filename)); return 0; }',
    );
    expect(r).toMatchObject({ code: 0, stdout: join(dir, 'commonjs', 'bin', 'company-data.js'), stderr: '' });
  });
});
