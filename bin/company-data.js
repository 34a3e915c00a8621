#!/usr/bin/env node
// The only place that turns the outcome of main() into a process exit code (see DESIGN.md).
// The CLI is a CommonJS bundle (scripts/build.mjs), loaded with the code cache the build made
// for it when that matches (src/cli-loader.ts); `--version` alone loads its own few KB.
//
// This file is CommonJS too (bin/package.json says so, whatever the package root says): Node 20
// starts its ES module loader for an ES module entry, which cost ~9 ms of every start here,
// `--version` and one-request commands alike (docs/performance.md, "Ninth pass").
'use strict';

const args = process.argv.slice(2);
const onlyVersion = args.length === 1 && (args[0] === '--version' || args[0] === '-V');
const { main } = onlyVersion
  ? require('../dist/version.cjs')
  : require('../dist/loader.cjs').loadBundle(require.resolve('../dist/cli.cjs')).exports;

// process.stdout and process.stderr are made on first use, and making the first one loads
// node:stream (~3-4 ms); `--version` never makes either (src/version.ts writes to fd 1 itself).
// Each stream gets its handler when it is made: a reader that goes away
// (`company-data ... | head`) is not an error worth a stack trace.
const streams = [];
for (const name of ['stdout', 'stderr']) {
  const { get, enumerable } = Object.getOwnPropertyDescriptor(process, name);
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable,
    get() {
      const stream = get.call(process);
      Object.defineProperty(process, name, { configurable: true, enumerable, writable: true, value: stream });
      stream.on('error', (error) => {
        if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
        throw error;
      });
      streams.push(stream);
      return stream;
    },
  });
}

/** Exits once what was written to the streams made so far has gone out. */
function exitAfterOutput() {
  const pending = [...streams];
  const next = () => (pending.length > 0 ? pending.shift().write('', next) : process.exit());
  next();
}

// main() reports every failure itself, so a rejection here is a bug: Node prints it and exits
// with 1. So is a main() that never settles because nothing is left to wait for: as an ES module
// awaiting it, this file exited with Node's 13; here, without this, it would exit with 0.
//
// When main() has settled, everything it started has been awaited (files closed, journal synced,
// connections closed or idle and unref'd), so the process exits as soon as what it wrote to stdout
// and stderr has gone out (a zero-length write calls back after the ones queued before it), instead of
// letting Node tear the whole environment down first: ~2.4 ms of every one-request command
// (docs/performance.md, "Eleventh pass"). A slow reader of a pipe still gets every byte.
let settled = false;
main(args).then((code) => {
  settled = true;
  process.exitCode = code;
  exitAfterOutput();
});
process.once('beforeExit', () => {
  if (settled) return;
  process.stderr.write('company-data: internal error: the command ended without a result\n');
  process.exitCode = 1;
});
