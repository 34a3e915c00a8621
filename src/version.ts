// The version, and the entry `--version` runs on its own: bin/company-data.js loads this (a few
// KB bundled as dist/version.cjs) instead of the whole CLI when that is the only argument.
import { Readable } from 'node:stream';
import { createIO } from './io.js';

declare const __VERSION__: string | undefined;

export function version(): string {
  return typeof __VERSION__ === 'string' ? __VERSION__ : '0.0.0-dev';
}

/** Prints what Commander prints for --version, without loading Commander. */
export async function main(_argv: string[]): Promise<number> {
  // An empty stdin: touching process.stdin would set up a stream this never reads.
  createIO({ stdin: Readable.from([]) }).out(`${version()}\n`);
  return 0;
}
