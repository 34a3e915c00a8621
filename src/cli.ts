// Builds the Commander program. Commands are loaded lazily: only the module of the command
// being run is evaluated (in the CommonJS bundle, import() becomes a require() of a module
// initialised on first use), so `--help` and each command start close to bare node. Commander
// itself loads in main(); `--version` alone never reaches it (bin/ runs dist/version.cjs).
import type { Command } from 'commander';
import type { CliRun } from './command-kit.js';
import type { GlobalFlags } from './config.js';
import { version } from './version.js';

export { version };

type CommandModule = { register(program: Command): void };

/** name -> [one-line description, loader]. The loader's module registers the full command. */
const COMMANDS: Record<string, [string, () => Promise<CommandModule>]> = {
  enrich: ['Enrich companies by domain: a few lookups, or a CSV batch', () => import('./commands/enrich.js')],
  search: [
    'Search companies by description and filters, with exclusions',
    () => import('./commands/search.js'),
  ],
  breakdown: [
    'Break a segment down by a facet (country, category, ...)',
    () => import('./commands/breakdown.js'),
  ],
  lookalike: ['Find companies similar to a seed domain', () => import('./commands/lookalike.js')],
  products: [
    'List the data products and their credit units (no key needed)',
    () => import('./commands/products.js'),
  ],
  fields: ['List fields, filters and breakdown facets (no key needed)', () => import('./commands/fields.js')],
  errors: ['List the problem codes of the service (no key needed)', () => import('./commands/errors.js')],
  me: ['Show the plan, balance and capabilities of your key', () => import('./commands/me.js')],
  sandbox: ['Run the offline sandbox server', () => import('./commands/sandbox.js')],
  config: ['Show and change settings (key, base URL, format)', () => import('./commands/config.js')],
  doctor: ['Check the setup: URL, key, permissions, clock, proxy', () => import('./commands/doctor.js')],
  api: ['Send a raw request to an /api/ endpoint; prints the response', () => import('./commands/api.js')],
  completion: ['Print a shell completion script (bash, zsh, fish)', () => import('./commands/completion.js')],
};

/** Global options that take a value, so the command name can be found without parsing. */
const VALUE_OPTIONS = new Set([
  '--base-url',
  '--api-key-file',
  '--auth-header',
  '-o',
  '--format',
  '--timeout',
  '--retries',
]);

function findCommandName(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') return argv[i + 1];
    if (arg.startsWith('-')) {
      if (VALUE_OPTIONS.has(arg)) i++;
      continue;
    }
    return arg;
  }
  return undefined;
}

type Commander = typeof import('commander');
let commander: Commander | undefined;

/** Loads Commander once; buildProgram() needs it loaded first. */
export async function loadCommander(): Promise<Commander> {
  commander ??= await import('commander');
  return commander;
}

export function buildProgram(): Command {
  if (!commander) throw new Error('buildProgram() before loadCommander()');
  const { Command, Option } = commander;
  const program = new Command('company-data');
  program
    .description(
      'Command-line client for the Company Data Service: enrichment, search, breakdowns and lookalikes.',
    )
    .version(version(), '-V, --version', 'print the version')
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
    .option('--allow-insecure-http', 'allow sending the key over plain http to a non-loopback host')
    .option('--csv-raw', 'do not neutralise spreadsheet formulas in CSV output')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();
  program.addHelpText(
    'after',
    `
Examples:
  $ company-data --sandbox enrich acme-shoes.com
  $ company-data --sandbox enrich --input examples/companies.csv --output enriched.csv
  $ company-data --sandbox search "shopify shoes" --filter country=US --limit 5

Exit codes: 0 ok, 1 bug, 2 usage/input, 3 key/permission, 4 credits/budget, 5 unavailable,
6 batch finished with row errors, 130 interrupted.`,
  );
  return program;
}

/** Runs the CLI and returns the process exit code. Never calls process.exit. */
export async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    return (await import('./version.js')).main(argv);
  }
  const [{ CommanderError }, { currentRun }] = await Promise.all([
    loadCommander(),
    import('./command-kit.js'),
  ]);
  const program = buildProgram();
  const name = findCommandName(argv);
  const entry = name ? COMMANDS[name] : undefined;
  if (entry) {
    const mod = await entry[1]();
    mod.register(program);
  } else {
    for (const [cmd, [description]] of Object.entries(COMMANDS))
      program.command(cmd).description(description);
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return currentRun.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are "errors" only to exitOverride; Commander already printed them.
      return error.exitCode === 0 ? 0 : 2;
    }
    return await reportFailure(error, program.opts() as GlobalFlags, currentRun);
  } finally {
    for (const cleanup of currentRun.cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // closing is best effort; the outcome is already decided
      }
    }
  }
}

async function reportFailure(error: unknown, flags: GlobalFlags, currentRun: CliRun): Promise<number> {
  const [{ reportProblem }, { Problem }] = await Promise.all([
    import('./output/problem.js'),
    import('./problem.js'),
  ]);
  const io =
    currentRun.context?.io ??
    (await import('./io.js')).createIO({ quiet: flags.quiet, verbose: flags.verbose, color: flags.color });
  const format = currentRun.context?.config.format.value ?? flags.format;
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
