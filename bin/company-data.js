#!/usr/bin/env node
// The only place that turns the outcome of main() into a process exit code (see DESIGN.md).
import { main } from '../dist/cli.js';

// A reader that goes away (`company-data ... | head`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await main(process.argv.slice(2));
