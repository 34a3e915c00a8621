// `help <command> [<subcommand>...]` prints exactly what `<command> [<subcommand>...] --help`
// prints, for every command the program has: the list is read from the program itself, so a new
// command is covered without touching this file.
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { usageLine } from '../helpers/command-cases.js';
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
      'config path',
      'config set-key',
      'config set',
      'config unset',
      'store',
      'store info',
      'store prune',
      'store clear',
      'store export',
      'doctor',
      'api',
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
    '-o %s: a usage error is one JSON line even on a terminal',
    async (format) => {
      expect(await runInProcess(['-o', format, 'search', '--bogus'], { tty: true })).toEqual({
        code: 2,
        stdout: '',
        stderr: usageLine("unknown option '--bogus'"),
      });
    },
  );

  it('help enrich shows the options and examples, not only a usage line', async () => {
    const { stdout } = await runInProcess(['help', 'enrich']);
    expect(stdout).toContain('--input <file>');
    expect(stdout).toContain('Examples:');
  });
});
