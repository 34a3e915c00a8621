// `help <command> [<subcommand>...]` prints exactly what `<command> [<subcommand>...] --help`
// prints, for every command the program has: the list is read from the program itself, so a new
// command is covered without touching this file.
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
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
      'sandbox',
      'config',
      'config show',
      'config path',
      'config set-key',
      'config set',
      'config unset',
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
    [['help', 'nope'], "error: unknown command 'nope'\n(add --help for usage)\n"],
    [['help', 'config', 'nope'], "error: unknown command 'nope' of 'config'\n(add --help for usage)\n"],
  ])('%j is a usage error naming the command', async (argv, stderr) => {
    expect(await runInProcess(argv)).toEqual({ code: 2, stdout: '', stderr });
  });

  it('help enrich shows the options and examples, not only a usage line', async () => {
    const { stdout } = await runInProcess(['help', 'enrich']);
    expect(stdout).toContain('--input <file>');
    expect(stdout).toContain('Examples:');
  });
});
