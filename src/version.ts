// The version, and the entry `--version` runs on its own: bin/company-data.js loads this (a few
// KB bundled as dist/version.cjs) instead of the whole CLI when that is the only argument.
import { writeSync } from 'node:fs';

declare const __VERSION__: string | undefined;

export function version(): string {
  return typeof __VERSION__ === 'string' ? __VERSION__ : '0.0.0-dev';
}

/**
 * Prints what Commander prints for --version, without loading Commander. The line goes straight
 * to file descriptor 1: making process.stdout loads node:stream first, which was most of what
 * `--version` cost beyond a bare `node` (49.0 -> 39.7 ms against 38.2; docs/performance.md,
 * "Eleventh pass").
 */
export async function main(_argv: string[]): Promise<number> {
  const line = `${version()}\n`;
  try {
    writeSync(1, line);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A non-blocking descriptor that is full: the stream waits for it (bin/ flushes it at exit).
    if (code === 'EAGAIN') process.stdout.write(line);
    // A reader that went away, or no stdout at all: nothing to print to, as with `| head -0`.
    else if (code !== 'EPIPE' && code !== 'EBADF') throw error;
  }
  return 0;
}
