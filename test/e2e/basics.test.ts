// `--version` as the real binary writes it to a stdout that is closed, read by no one, or full.
// The version itself, alone and through Commander: test/bin.test.ts; the command list of --help and
// an unknown command: test/commands/help.test.ts.
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
import { BIN, ROOT, startProcess } from '../helpers/cli.js';

const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8'));

/** What the kernel says process `pid` is blocked in (/proc/<pid>/wchan), and its command line. */
function procOf(pid: number): { wchan: string; cmdline: string } {
  try {
    return {
      wchan: readFileSync(`/proc/${pid}/wchan`, 'utf8'),
      cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '),
    };
  } catch {
    return { wchan: '', cmdline: '' };
  }
}

describe('company-data --version', () => {
  it('with stdout closed, or read by no one, is no error', async () => {
    // bin/ writes the line itself, without the bundle: EBADF and EPIPE are its to handle.
    for (const redirect of ['>&-', '| true']) {
      const script = `"${process.execPath}" "${BIN}" --version ${redirect}; echo "\${PIPESTATUS[0]}"`;
      const r = await startProcess('bash', ['-c', script]).done;
      expect(r).toMatchObject({ code: 0, stdout: '0\n', stderr: '' });
    }
  });

  it('to a full non-blocking pipe waits for the reader instead of losing the line', async () => {
    // When file descriptor 1 is shared in non-blocking mode (a Node parent's stdout pipe, say) and
    // its pipe is full, the write answers EAGAIN, and the line must wait for room.
    // Here fd 1 is the write end of a FIFO filled to the brim. Node's spawn makes a child's stdio
    // blocking, so a first Node process sharing it sets it non-blocking again (as any Node process
    // does to a stdout pipe it uses) and is killed before its exit could undo that; the shell then
    // execs the CLI on the same open file.
    const dir = mkdtempSync(join(tmpdir(), 'cd-version-'));
    const fifo = join(dir, 'out');
    expect((await startProcess('mkfifo', [fifo]).done).code).toBe(0);
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
      const run = startProcess('bash', ['-c', script, process.execPath, BIN], {
        input: 'ignore',
        stdout: writer,
      });
      let exited = false;
      const done = run.done.finally(() => {
        exited = true;
      });
      // The CLI cannot finish while the pipe is full: wait until it is idle in its event loop
      // (epoll), where only the write of its line is left, still alive; on a kernel that does not
      // say (wchan reads 0), 1.5 s, time enough to have got there.
      const pid = run.child.pid ?? 0;
      for (const until = Date.now() + 1500; Date.now() < until && !exited; await sleep(10)) {
        const now = procOf(pid);
        if (now.cmdline.includes('--version') && now.wchan.includes('epoll')) break;
      }
      expect(exited).toBe(false);
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
        else if (exited) break;
        else await sleep(10);
      }
      expect(await done).toMatchObject({ code: 0, stderr: '' });
      const text = Buffer.concat(received).toString('latin1');
      expect(text.length).toBe(filled + pkg.version.length + 1);
      expect(text.slice(filled)).toBe(`${pkg.version}\n`);
    } finally {
      closeSync(writer);
      closeSync(reader);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
