// Builds the Commander program with every command registered, so `--help`, `help <command>` and
// shell completion all read the same declarations. A command's register() only declares flags,
// help and examples; its run function loads what it needs (the HTTP client, the output layer, the
// batch machinery) when it runs.
import { Command, CommanderError, Option } from 'commander';
import {
  type CommandKit,
  commandKit,
  type Invocation,
  ioOf,
  LOG_FORMATS,
  newInvocation,
  type Surroundings,
} from './command-kit.js';
import * as api from './commands/api.js';
import * as breakdown from './commands/breakdown.js';
import * as completion from './commands/completion.js';
import * as config from './commands/config.js';
import * as doctor from './commands/doctor.js';
import * as enrich from './commands/enrich.js';
import * as errors from './commands/errors.js';
import * as fields from './commands/fields.js';
import * as lookalike from './commands/lookalike.js';
import * as mcp from './commands/mcp.js';
import * as me from './commands/me.js';
import * as products from './commands/products.js';
import * as sandbox from './commands/sandbox.js';
import * as search from './commands/search.js';
import * as spend from './commands/spend.js';
import * as store from './commands/store.js';
import type { GlobalFlags } from './config.js';
import { addHelpCommand, fitHelpText, helpWhenBare } from './help.js';
import { terminalColumns } from './io.js';
import { Problem } from './problem.js';
import { version } from './version.js';

// For scripts/build.mjs, which writes the man page from the same declarations as --help.
export { renderManPage } from './man-page.js';
export { version };

/** Every command, in the order `--help` lists them. */
export const COMMANDS: ReadonlyArray<{ register(program: Command, kit: CommandKit): void }> = [
  enrich,
  search,
  breakdown,
  lookalike,
  products,
  fields,
  errors,
  me,
  spend,
  sandbox,
  config,
  store,
  doctor,
  api,
  mcp,
  completion,
];

/** The whole program. Its output (help, usage errors) goes to the invocation's streams. */
export function buildProgram(invocation: Invocation = newInvocation([])): Command {
  const program = new Command('company-data');
  invocation.program = program;
  const stdout = () => invocation.streams.stdout ?? process.stdout;
  const stderr = () => invocation.streams.stderr ?? process.stderr;
  const outWidth = () => terminalColumns(stdout(), invocation.env);
  const errWidth = () => terminalColumns(stderr(), invocation.env);
  program
    .description(
      'Command-line client for the Company Data Service: enrichment, search, breakdowns and lookalikes.',
    )
    .version(version(), '-V, --version', 'print the version')
    .option(
      '--profile <name>',
      'settings profile of the config file (env: COMPANY_DATA_PROFILE; see `config list`)',
    )
    .option('--base-url <url>', 'service root URL (env: COMPANY_DATA_BASE_URL)')
    .option(
      '--api-key-file <path>',
      'file holding the API key (default: env COMPANY_DATA_API_KEY, then the config file)',
    )
    .addOption(
      // No .env() here or below: resolveConfig reads the environment itself, so `config show`
      // can tell a flag from an environment value and a bad value names its real source.
      new Option('--auth-header <kind>', 'how the key is sent (env: COMPANY_DATA_AUTH_HEADER)').choices([
        'bearer',
        'x-api-key',
      ]),
    )
    .option('--sandbox', 'run against an in-process offline sandbox with its demo key')
    .addOption(
      new Option(
        '-o, --format <format>',
        'output format (default: table on a terminal, json otherwise; env: COMPANY_DATA_FORMAT)',
      ).choices(['table', 'json', 'ndjson', 'csv']),
    )
    .option('--timeout <seconds>', 'per-attempt timeout for headers and body idle (default 30)')
    .option('--retries <n>', 'retries of retryable failures (default 3)')
    .option('-q, --quiet', 'no progress or summaries on stderr')
    .option('-v, --verbose', 'log each request on stderr (key redacted)')
    .option('--no-color', 'no colour (also NO_COLOR)')
    .addOption(
      new Option(
        '--log-format <format>',
        'stderr for a log: timestamped starts every line with the UTC time, and puts it in a JSON problem line as "time" (env: COMPANY_DATA_LOG_FORMAT; default plain)',
      ).choices(LOG_FORMATS),
    )
    .option(
      '--no-pager',
      'no pager: on a terminal, output longer than the screen otherwise goes through COMPANY_DATA_PAGER, PAGER or less -FRX',
    )
    .option('--allow-insecure-http', 'allow sending the key over plain http to a non-loopback host')
    .option('--csv-raw', 'do not neutralise spreadsheet formulas in CSV output')
    .option(
      '--store <path>',
      'result store and spend ledger (default: $XDG_STATE_HOME/company-data/store.db; env: COMPANY_DATA_STORE)',
    )
    .option('--no-store', 'keep nothing: answers are neither reused nor stored, and charges not recorded')
    .configureOutput({
      writeOut: (text) => stdout().write(text),
      writeErr: (text) => stderr().write(text),
      // Help fits the terminal it is read on; 80 columns in a file or a pipe (issue 46).
      getOutHelpWidth: outWidth,
      getErrHelpWidth: errWidth,
      // A usage error is held until main() knows whether it is reported as text or as JSON.
      outputError: (text) => {
        invocation.usageError = (invocation.usageError ?? '') + text;
      },
    })
    .exitOverride();
  program.addHelpText(
    'after',
    `
Examples:
  $ company-data --sandbox enrich acme-shoes.com
  $ company-data --sandbox enrich --input examples/companies.csv --output enriched.csv
  $ company-data --sandbox search "shopify shoes" --filter country=US --limit 5

Exit codes: 0 ok, 1 bug, 2 usage/input, 3 key/permission, 4 credits/budget, 5 unavailable,
6 batch finished with row errors, 7 another run holds the batch's output, 8 output could not be
written, 130 interrupted.

Environment variables: company-data help environment. Manual: man company-data.`,
  );
  const kit = commandKit(invocation);
  for (const command of COMMANDS) command.register(program, kit);
  addHelpCommand(program, outWidth);
  helpWhenBare(program);
  fitHelpText(program, (error) => (error ? errWidth() : outWidth()));
  return program;
}

/** Runs the CLI and returns the process exit code. Never calls process.exit. */
export async function main(argv: string[], surroundings: Surroundings = {}): Promise<number> {
  const invocation = newInvocation(argv, surroundings);
  const program = buildProgram(invocation);
  const stdout = watchStreams(invocation);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return await unlessStdoutFailed(invocation.exitCode, stdout, program, invocation);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are "errors" only to exitOverride; Commander already printed them.
      if (error.exitCode === 0) return await unlessStdoutFailed(0, stdout, program, invocation);
      await reportUsageError(invocation.usageError ?? `${error.message}\n`, program, invocation);
      return 2;
    }
    return await reportFailure(error, program.opts() as GlobalFlags, invocation);
  } finally {
    // Held output is written, or the pager awaited until the person quits it.
    await invocation.io?.finish();
    stdout.dispose();
    for (const cleanup of invocation.cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // closing is best effort; the outcome is already decided
      }
    }
  }
}

interface StdoutWatch {
  /** The first error of stdout during this invocation. */
  readonly failure: NodeJS.ErrnoException | undefined;
  dispose(): void;
}

/**
 * An error on stdout or stderr never becomes a stack trace. A reader that goes away
 * (`company-data ... | head`) is no failure of a one-request command: what is still written is
 * dropped and the command's own outcome decides the exit code (a batch, which would go on buying
 * rows nobody reads, stops itself: src/batch/run.ts). A stdout that refuses data (a full disk,
 * `> /dev/full`) is: exit 8 (unlessStdoutFailed). Nothing is said about stderr: there is nowhere
 * left to say it.
 */
function watchStreams(invocation: Invocation): StdoutWatch {
  const stdout = invocation.streams.stdout ?? process.stdout;
  // This listener stays after main() returns: a write still queued may fail after that.
  for (const stream of [stdout, invocation.streams.stderr ?? process.stderr]) {
    if (stream.listeners('error').includes(ignoreStreamError)) continue;
    stream.on('error', ignoreStreamError);
  }
  let failure: NodeJS.ErrnoException | undefined;
  const record = (error: NodeJS.ErrnoException) => {
    failure ??= error;
  };
  stdout.on('error', record);
  return {
    get failure() {
      // A write refused synchronously is reported on the next tick; the stream knows at once.
      return failure ?? (stdout.errored as NodeJS.ErrnoException | null) ?? undefined;
    },
    dispose: () => stdout.off('error', record),
  };
}

function ignoreStreamError(): void {}

/** `code`, unless stdout refused what the command wrote (not a closed reader): then exit 8. */
async function unlessStdoutFailed(
  code: number,
  stdout: StdoutWatch,
  program: Command,
  invocation: Invocation,
): Promise<number> {
  const failure = stdout.failure;
  if (!failure || failure.code === 'EPIPE') return code;
  const { writeProblem } = await import('./write-failures.js');
  return reportFailure(writeProblem(failure, 'stdout'), program.opts() as GlobalFlags, invocation);
}

/**
 * The format a failure is reported in when the settings may not have been read (a usage error,
 * settings that fail to resolve): the flag, the environment, else JSON when stdout is not a
 * terminal, as for results.
 */
function failureFormat(invocation: Invocation, flags: GlobalFlags): string {
  const chosen =
    invocation.context?.config.format.value ?? flags.format ?? invocation.env.COMPANY_DATA_FORMAT;
  if (chosen) return chosen;
  const stdout = invocation.streams.stdout ?? process.stdout;
  return (stdout as { isTTY?: boolean }).isTTY ? 'table' : 'json';
}

/** Commander's message as it wrote it, or one JSON problem line for scripts asking for JSON. */
async function reportUsageError(text: string, program: Command, invocation: Invocation): Promise<void> {
  const flags = program.opts() as GlobalFlags;
  const format = failureFormat(invocation, flags);
  const io = await ioOf(invocation, flags);
  if ((format !== 'json' && format !== 'ndjson') || io.isStderrTTY) {
    io.error(`${text}(add --help for usage)`);
    return;
  }
  const [{ reportProblem }, { usageError }] = await Promise.all([
    import('./output/problem.js'),
    import('./problem.js'),
  ]);
  const detail = text.trim().replace(/^error: /, '');
  reportProblem(io, usageError(detail, 'Add --help for usage.'), format);
}

async function reportFailure(error: unknown, flags: GlobalFlags, invocation: Invocation): Promise<number> {
  const { reportProblem } = await import('./output/problem.js');
  const io = await ioOf(invocation, flags);
  const format = failureFormat(invocation, flags);
  const problem =
    error instanceof Problem
      ? error
      : new Problem({
          code: 'internal_bug',
          title: 'Unexpected failure',
          detail: error instanceof Error ? error.message : String(error),
          source: 'client',
          cause: error,
        });
  reportProblem(io, problem, format);
  if (!(error instanceof Problem) && flags.verbose && error instanceof Error && error.stack)
    io.error(error.stack);
  return problem.exitCode;
}
