import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv, ROOT, runCli } from '../helpers/cli.js';

const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8'));

describe('company-data basics', () => {
  it('prints the package version', async () => {
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('--version with stdout closed, or read by no one, is no error', () => {
    // It writes to file descriptor 1 itself (src/version.ts): EBADF and EPIPE are its to handle.
    for (const redirect of ['>&-', '| true']) {
      const script = `"${process.execPath}" "${BIN}" --version ${redirect}; echo "\${PIPESTATUS[0]}"`;
      const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', env: cleanEnv() });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe('0');
    }
  });

  it('--version to a full non-blocking pipe waits for the reader instead of losing the line', async () => {
    // src/version.ts writes to file descriptor 1 itself. When that descriptor is shared in
    // non-blocking mode (a Node parent's stdout pipe, say) and its pipe is full, the write answers
    // EAGAIN, and the line must then go through process.stdout, which waits for room.
    // Here fd 1 is the write end of a FIFO filled to the brim. Node's spawn makes a child's stdio
    // blocking, so a first Node process sharing it sets it non-blocking again (as any Node process
    // does to a stdout pipe it uses) and is killed before its exit could undo that; the shell then
    // execs the CLI on the same open file.
    const dir = mkdtempSync(join(tmpdir(), 'cd-version-'));
    const fifo = join(dir, 'out');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // Each end is its own open file: what the child's side does to its end's mode is not ours.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const chunk = Buffer.alloc(4096, 0x2e);
    let filled = 0;
    try {
      for (;;) filled += writeSync(writer, chunk);
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('EAGAIN');
    }
    const script =
      '{ "$0" -e "process.stdout; process.kill(process.pid, 9)"; } 2>/dev/null; exec "$0" "$1" --version';
    try {
      const child = spawn('bash', ['-c', script, process.execPath, BIN], {
        env: cleanEnv(),
        stdio: ['ignore', writer, 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (data) => {
        stderr += data;
      });
      let status: number | null | undefined;
      const exited = new Promise<number | null>((resolve) =>
        child.on('exit', (code) => {
          status = code;
          resolve(code);
        }),
      );
      // The CLI cannot finish while the pipe is full: its line is waiting for room.
      await sleep(1500);
      expect(status).toBeUndefined();
      const received: Buffer[] = [];
      const buffer = Buffer.alloc(65536);
      for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
        let n = 0;
        try {
          n = readSync(reader, buffer);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        }
        if (n > 0) received.push(Buffer.from(buffer.subarray(0, n)));
        else if (status !== undefined) break;
        else await sleep(10);
      }
      expect(await exited).toBe(0);
      expect(stderr).toBe('');
      const text = Buffer.concat(received).toString('latin1');
      expect(text.length).toBe(filled + pkg.version.length + 1);
      expect(text.slice(filled)).toBe(`${pkg.version}\n`);
    } finally {
      closeSync(writer);
      closeSync(reader);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lists every command in --help', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const cmd of [
      'enrich',
      'search',
      'breakdown',
      'lookalike',
      'products',
      'fields',
      'errors',
      'me',
      'sandbox',
      'config',
    ]) {
      expect(r.stdout).toMatch(new RegExp(`^  ${cmd}\\b`, 'm'));
    }
  });

  it('exits 2 with a message on an unknown command', async () => {
    const r = await runCli(['bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'bogus'");
    expect(r.stdout).toBe('');
  });
});
