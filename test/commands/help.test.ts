// `help <command> [<subcommand>...]` prints exactly what `<command> [<subcommand>...] --help`
// prints, for every command the program has: the list is read from the program itself, so a new
// command is covered without touching this file.
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { lines, usageLine } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';

function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    return [path, ...commandPaths(sub, path)];
  });
}

const paths = commandPaths(buildProgram());

describe('help <command>', () => {
  it('covers every command and subcommand', () => {
    expect(paths.map((p) => p.join(' '))).toEqual([
      'enrich',
      'search',
      'breakdown',
      'lookalike',
      'products',
      'fields',
      'errors',
      'me',
      'spend',
      'sandbox',
      'config',
      'config show',
      'config list',
      'config use',
      'config path',
      'config set-key',
      'config set',
      'config unset',
      'config delete-profile',
      'store',
      'store info',
      'store prune',
      'store clear',
      'store export',
      'doctor',
      'api',
      'mcp',
      'completion',
      'help',
    ]);
  });

  it.each(paths.map((p) => [p.join(' '), p]))('help %s prints what --help prints', async (_name, path) => {
    const viaHelp = await runInProcess(['help', ...path]);
    const viaFlag = await runInProcess([...path, '--help']);
    expect(viaHelp).toEqual(viaFlag);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stderr).toBe('');
    expect(viaHelp.stdout).toMatch(new RegExp(`^Usage: company-data ${path.join(' ')} `));
    // Help lives with the command: every command but `help` itself has options or an example.
    if (path[0] !== 'help') expect(viaHelp.stdout).toMatch(/\nOptions:\n/);
  });

  it('help alone prints the program help, as --help does', async () => {
    expect(await runInProcess(['help'])).toEqual(await runInProcess(['--help']));
  });

  it.each([
    [['bogus'], "unknown command 'bogus'"],
    [['help', 'nope'], "unknown command 'nope'"],
    [['help', 'config', 'nope'], "unknown command 'nope' of 'config'"],
  ])(
    '%j is a usage error naming the command: text on a terminal, one JSON line piped',
    async (argv, detail) => {
      expect(await runInProcess(argv, { tty: true })).toEqual({
        code: 2,
        stdout: '',
        stderr: `error: ${detail}\n(add --help for usage)\n`,
      });
      expect(await runInProcess(argv)).toEqual({ code: 2, stdout: '', stderr: usageLine(detail) });
    },
  );

  it.each([['json'], ['ndjson']])(
    '-o %s with stderr piped: a usage error is one JSON line, even with stdout on a terminal',
    async (format) => {
      expect(
        await runInProcess(['-o', format, 'search', '--bogus'], { tty: true, stderrTTY: false }),
      ).toEqual({
        code: 2,
        stdout: '',
        stderr: usageLine("unknown option '--bogus'"),
      });
    },
  );

  it.each([['json'], ['ndjson']])(
    '-o %s with stderr on a terminal: a usage error stays human text (stderr follows stderr)',
    async (format) => {
      expect(
        await runInProcess(['-o', format, 'search', '--bogus'], { tty: false, stderrTTY: true }),
      ).toEqual({
        code: 2,
        stdout: '',
        stderr: lines("error: unknown option '--bogus'", '(add --help for usage)'),
      });
    },
  );

  it.each([
    [[], 'Usage: company-data [options] [command]'],
    [['store'], 'Usage: company-data store [options] [command]'],
    [['config'], 'Usage: company-data config [options] [command]'],
  ])(
    'bare %j: its help on stdout, exit 0, nothing on stderr, on a terminal and piped',
    async (argv, first) => {
      for (const tty of [true, false]) {
        const run = await runInProcess(argv, { tty });
        expect({ code: run.code, first: run.stdout.split('\n')[0], stderr: run.stderr }).toEqual({
          code: 0,
          first,
          stderr: '',
        });
        expect(run.stdout).toBe((await runInProcess([...argv, '--help'], { tty })).stdout);
      }
    },
  );

  it('--help lists the global options, --profile first: exactly, the same on a terminal and piped', async () => {
    const options = lines(
      'Options:',
      '  -V, --version                        print the version',
      '  --profile <name>                     settings profile of the config file (env:',
      '                                       COMPANY_DATA_PROFILE; see `config list`)',
      '  --base-url <url>                     service root URL (env:',
      '                                       COMPANY_DATA_BASE_URL)',
      '  --api-key-file <path>                file holding the API key (default: env',
      '                                       COMPANY_DATA_API_KEY, then the config',
      '                                       file)',
      '  --auth-header <kind>                 how the key is sent (env:',
      '                                       COMPANY_DATA_AUTH_HEADER) (choices:',
      '                                       "bearer", "x-api-key")',
      '  --sandbox                            run against an in-process offline sandbox',
      '                                       with its demo key',
      '  -o, --format <format>                output format (default: table on a',
      '                                       terminal, json otherwise; env:',
      '                                       COMPANY_DATA_FORMAT) (choices: "table",',
      '                                       "json", "ndjson", "csv")',
      '  --timeout <seconds>                  per-attempt timeout for headers and body',
      '                                       idle (default 30)',
      '  --retries <n>                        retries of retryable failures (default 3)',
      '  -q, --quiet                          no progress or summaries on stderr',
      '  -v, --verbose                        log each request on stderr (key redacted)',
      '  --no-color                           no colour (also NO_COLOR)',
      '  --log-format <format>                stderr for a log: timestamped starts',
      '                                       every line with the UTC time, and puts it',
      '                                       in a JSON problem line as "time" (env:',
      '                                       COMPANY_DATA_LOG_FORMAT; default plain)',
      '                                       (choices: "plain", "timestamped")',
      '  --no-pager                           no pager: on a terminal, output longer',
      '                                       than the screen otherwise goes through',
      '                                       COMPANY_DATA_PAGER, PAGER or less -FRX',
      '  --allow-insecure-http                allow sending the key over plain http to',
      '                                       a non-loopback host',
      '  --csv-raw                            do not neutralise spreadsheet formulas in',
      '                                       CSV output',
      '  --store <path>                       result store and spend ledger (default:',
      '                                       $XDG_STATE_HOME/company-data/store.db;',
      '                                       env: COMPANY_DATA_STORE)',
      '  --no-store                           keep nothing: answers are neither reused',
      '                                       nor stored, and charges not recorded',
      '  -h, --help                           display help for command',
      '',
    );
    for (const tty of [true, false]) {
      // At the 80 columns of a terminal that reports no width, or of a pipe.
      const { code, stdout, stderr } = await runInProcess(['--help'], { tty, env: { COLUMNS: undefined } });
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout.slice(stdout.indexOf('Options:\n'), stdout.indexOf('Commands:\n'))).toBe(options);
    }
  });

  it('--help lists every command, each with what it does', async () => {
    const commands = lines(
      'Commands:',
      '  enrich [options] [domains...]        Enrich companies by domain: a few',
      '                                       lookups, or a CSV batch with --input',
      '  search [options] [query]             Search companies by a business-language',
      '                                       description and exact filters, with',
      '                                       exclusions',
      '  breakdown [options] <field> [query]  Break a segment down by a facet (country,',
      '                                       site_category, primary_platform,',
      '                                       employee_range)',
      '  lookalike [options] [seeds...]       Find companies similar to one or more',
      '                                       seed domains, ranked by similarity',
      '  products                             List the data products, their credit',
      '                                       units and fields (public: no key needed)',
      '  fields [options]                     List fields, search filters and breakdown',
      '                                       facets (public: no key needed)',
      '  errors                               List the problem codes of the service',
      '                                       (public: no key needed)',
      '  me                                   Show the plan, balance and capabilities',
      '                                       of your key (never charged)',
      '  spend [options]                      Show the credits spent, from the spend',
      '                                       ledger of the store (never charged)',
      '  sandbox [options]                    Run the offline sandbox: the whole',
      '                                       service interface over synthetic data, on',
      '                                       this machine, with demo keys',
      '  config                               Show and change settings and profiles',
      '                                       (key, base URL, format)',
      '  store                                Inspect, prune, clear or export the',
      '                                       result store (never charged)',
      '  doctor                               Check the setup: base URL, key, auth',
      '                                       header, contract, permissions, clock,',
      '                                       proxy',
      '  api [options] <method> <path>        Send a raw request to an /api/ endpoint',
      '                                       with your key; prints the response JSON',
      '  mcp [options]                        Serve the tools to an AI agent over MCP',
      '                                       (stdio); read-only unless --allow-spend',
      '  completion <shell>                   Print a shell completion script for bash,',
      '                                       zsh or fish',
      '  help [command...]                    Show the help of a command, or of a',
      '                                       subcommand (help config set-key); help',
      '                                       environment lists the environment',
      '                                       variables',
      '',
    );
    const { code, stdout, stderr } = await runInProcess(['--help'], { env: { COLUMNS: undefined } });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.slice(stdout.indexOf('Commands:\n'), stdout.indexOf('Examples:\n'))).toBe(commands);
  });

  it('help enrich shows the options and examples, not only a usage line', async () => {
    const { stdout } = await runInProcess(['help', 'enrich']);
    expect(stdout).toContain('--input <file>');
    expect(stdout).toContain('Examples:');
  });
});
