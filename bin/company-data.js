#!/usr/bin/env node
// The only place that turns the outcome of main() into a process exit code (see DESIGN.md).
// The CLI is a CommonJS bundle (scripts/build.mjs), loaded with the code cache the build made
// for it when that matches (src/cli-loader.ts); `--version` alone loads its own few KB.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const onlyVersion = args.length === 1 && (args[0] === '--version' || args[0] === '-V');
const { main } = onlyVersion
  ? require('../dist/version.cjs')
  : require('../dist/loader.cjs').loadBundle(require.resolve('../dist/cli.cjs')).exports;

// A reader that goes away (`company-data ... | head`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await main(args);
