#!/usr/bin/env node
// Runs the CLI and turns its outcome into the exit code: the only place that does (DESIGN.md).
// The process ends on its own once everything main() started has finished and every byte
// written to stdout and stderr has gone out.
'use strict';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  // What Commander would print, without loading the bundle (a third of the start-up time). A
  // reader that went away (`| true`) is no error.
  process.stdout.on('error', () => {}).write(`${require('../package.json').version}\n`);
} else {
  require('../dist/cli.cjs')
    .main(args)
    .then((code) => {
      process.exitCode = code;
    });
  // A main() that never settles, with nothing left to wait for, is a bug: Node would exit with 0.
  process.once('beforeExit', () => {
    if (process.exitCode !== undefined) return;
    process.stderr.write('company-data: internal error: the command ended without a result\n');
    process.exitCode = 1;
  });
}
