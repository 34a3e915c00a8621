// `company-data sandbox`: serves the offline sandbox until SIGINT/SIGTERM. Its one JSON line on
// stdout is the machine-readable handshake scripts and benchmarks wait for.
import { type Command, InvalidArgumentError, Option } from 'commander';
import { type CommandKit, parseIntOption } from '../command-kit.js';
import { usageError } from '../problem.js';
import { LAYOUT_NAMES, type LayoutName } from '../sandbox/layout-names.js';
import type { Context } from '../types.js';

export interface SandboxCommandOptions {
  host: string;
  port: number;
  seed: number;
  companies: number;
  latency: number;
  rateLimit: number;
  faultRate: number;
  catalogWithoutDefaults?: boolean;
  layout: LayoutName;
}

function parseProbability(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new InvalidArgumentError(`--fault-rate must be a number between 0 and 1, got "${raw}"`);
  }
  return value;
}

export function register(program: Command, kit: CommandKit): void {
  program
    .command('sandbox')
    .description(
      'Run the offline sandbox: the whole service interface over synthetic data, on this machine, with demo keys',
    )
    .addOption(new Option('--host <host>', 'interface to listen on').default('127.0.0.1'))
    .addOption(
      new Option('--port <port>', 'port to listen on (0 picks a free one)')
        .default(8787)
        .argParser(parseIntOption('--port', 0, 65_535)),
    )
    .addOption(
      new Option('--seed <n>', 'seed of the synthetic dataset and of random faults')
        .default(42)
        .argParser(parseIntOption('--seed', 0, 2 ** 32 - 1)),
    )
    .addOption(
      new Option('--companies <n>', 'number of companies in the dataset')
        .default(10_000)
        .argParser(parseIntOption('--companies', 0, 2_000_000)),
    )
    .addOption(
      new Option('--latency <ms>', 'delay added to every response')
        .default(0)
        .argParser(parseIntOption('--latency', 0, 600_000)),
    )
    .addOption(
      new Option('--rate-limit <n>', 'requests per second per key before 429 (0 = unlimited)')
        .default(0)
        .argParser(parseIntOption('--rate-limit', 0, 1_000_000)),
    )
    .addOption(
      new Option(
        '--fault-rate <p>',
        'probability (0-1) of a random retryable fault on each authenticated request',
      )
        .default(0)
        .argParser(parseProbability),
    )
    .option(
      '--catalog-without-defaults',
      'serve a products catalog that marks no product as default (lookups are unchanged)',
    )
    .addOption(
      new Option(
        '--layout <name>',
        'how answers are shaped where the spec leaves the shape open (docs/contract.md: Sandbox layouts)',
      )
        .choices(LAYOUT_NAMES)
        .default('flat'),
    )
    .addHelpText(
      'after',
      `
On start it prints one JSON line on stdout, {"url": ..., "keys": {"full", "restricted", "free", "empty"}},
and a banner on stderr; it serves until Ctrl-C (SIGINT) or SIGTERM, then closes cleanly (exit 0).
Faults, the request log and balances: see docs/contract.md, "Sandbox-only controls".

Examples:
  $ company-data sandbox
  $ company-data sandbox --port 0 --companies 50000 --seed 7
  $ company-data sandbox --latency 200 --rate-limit 20 --fault-rate 0.05
  $ company-data sandbox --layout grouped
  $ COMPANY_DATA_BASE_URL=http://127.0.0.1:8787 COMPANY_DATA_API_KEY=cd_sandbox_full_7f3a9c2e \\
      company-data enrich acme-shoes.com`,
    )
    .action(kit.withContext((ctx: Context, options: SandboxCommandOptions) => runSandbox(options, ctx)));
}

/** Serves until the process is asked to stop; resolves with exit code 0 once closed. */
export async function runSandbox(options: SandboxCommandOptions, ctx: Context): Promise<number> {
  const { startSandbox } = await import('../sandbox/index.js');
  const sandbox = await startSandbox({
    host: options.host,
    port: options.port,
    seed: options.seed,
    companies: options.companies,
    latencyMs: options.latency,
    rateLimit: options.rateLimit,
    faultRate: options.faultRate,
    catalogWithoutDefaults: options.catalogWithoutDefaults,
    layout: options.layout,
    // A server that runs for a while builds its indexes now, so no client waits for them.
    warm: true,
  }).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    // A taken port or a foreign address is a usage problem, not a bug.
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw usageError(
        `cannot listen on ${options.host}:${options.port} (${code})`,
        'Choose another --port (0 picks a free one) or --host.',
      );
    }
    throw error;
  });
  ctx.io.out(`${JSON.stringify({ url: sandbox.url, keys: sandbox.keys })}\n`);
  const settings = [
    `seed ${options.seed}`,
    `${options.companies} companies`,
    options.latency ? `latency ${options.latency} ms` : '',
    options.rateLimit ? `rate limit ${options.rateLimit}/s per key` : '',
    options.faultRate ? `fault rate ${options.faultRate}` : '',
    options.catalogWithoutDefaults ? 'no default products in the catalog' : '',
    options.layout && options.layout !== 'flat' ? `layout ${options.layout}` : '',
  ].filter(Boolean);
  ctx.io.info(
    [
      `Company Data sandbox listening on ${sandbox.url} (${settings.join(', ')})`,
      'Demo keys (no real credits):',
      ...Object.entries(sandbox.keys).map(([name, key]) => `  ${name.padEnd(10)} ${key}`),
      `Try: COMPANY_DATA_BASE_URL=${sandbox.url} COMPANY_DATA_API_KEY=${sandbox.keys.full} company-data me`,
      'Press Ctrl-C to stop.',
    ].join('\n'),
  );

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (received: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(received);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  ctx.io.info(`Received ${signal}; closing the sandbox.`);
  await sandbox.close();
  ctx.io.info('Sandbox closed.');
  return 0;
}
