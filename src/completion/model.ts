// What a completion script needs to know, read from the real Commander program so that the scripts
// cannot drift from the flags: commands, their options, which options take a value, and what
// values to offer. The shell renderers (bash.ts, zsh.ts, fish.ts) only turn this into text.
import type { Argument, Command, Option } from 'commander';
import type { CatalogValues } from './catalog-values.js';

/** What to offer for an option's value or a positional argument. */
export type ValueSpec =
  | {
      kind: 'words';
      words: string[] /** comma-separated list: complete after the last comma */;
      list: boolean;
    }
  | { kind: 'files' }
  | { kind: 'none' };

export interface OptionSpec {
  /** e.g. ['-o', '--format']. */
  names: string[];
  takesValue: boolean;
  values: ValueSpec;
  description: string;
}

export interface CommandSpec {
  name: string;
  /** Command names from the root, space separated: '' for the program, 'config set' for a subcommand. */
  path: string;
  description: string;
  /** The command's own options (the program's are global: valid after any command). */
  options: OptionSpec[];
  subcommands: CommandSpec[];
  /** Values for each positional argument, in order. */
  positionals: ValueSpec[];
  /** The last positional takes any number of values. */
  variadic: boolean;
}

/** What completion offers from disk: the cached catalogs' values and the config file's profiles. */
export interface CompletionValues extends CatalogValues {
  /** Profile names (`--profile`, `config use`, `config delete-profile`), read when the script is generated. */
  profiles: string[];
}

export const FORMATS = ['table', 'json', 'ndjson', 'csv'];
const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const API_PATHS = ['/api/me', '/api/products', '/api/fields', '/api/errors', '/api/search', '/api/domains/'];
const NONE: ValueSpec = { kind: 'none' };

/** Words safe to paste into a shell script unquoted: anything else is left out. */
export function safeWords(words: readonly string[]): string[] {
  return [...new Set(words.filter((w) => /^[A-Za-z0-9_./:@%+=-]+$/.test(w)))];
}

function words(list: readonly string[], isList = false): ValueSpec {
  const safe = safeWords(list);
  return safe.length > 0 ? { kind: 'words', words: safe, list: isList } : NONE;
}

function optionValues(option: Option, catalogs: CompletionValues): ValueSpec {
  if (option.argChoices) return words(option.argChoices);
  switch (option.long) {
    case '--profile':
      return words(catalogs.profiles);
    case '--products':
      return words(catalogs.products, true);
    case '--product':
      return words(catalogs.products);
    case '--include':
      return words(catalogs.fields, true);
    case '--filter':
      return words(catalogs.filters);
  }
  // Placeholders name what the option takes: <file>, <path>, <file|->.
  return /<(file|path)\b/.test(option.flags) ? { kind: 'files' } : NONE;
}

function positionalValues(
  path: string,
  index: number,
  argument: Argument,
  catalogs: CompletionValues,
): ValueSpec {
  if (argument.argChoices) return words(argument.argChoices);
  if ((path === 'config use' || path === 'config delete-profile') && index === 0)
    return words(catalogs.profiles);
  if (path === 'breakdown' && index === 0) return words(catalogs.facets);
  if (path === 'api' && index === 0) return words(HTTP_METHODS);
  if (path === 'api' && index === 1) return words(API_PATHS);
  return NONE;
}

function describeOption(option: Option, catalogs: CompletionValues): OptionSpec {
  const names = [option.short, option.long].filter((n): n is string => Boolean(n));
  const takesValue = option.required || option.optional;
  return {
    names,
    takesValue,
    values: takesValue ? optionValues(option, catalogs) : NONE,
    description: option.description,
  };
}

function isHidden(command: Command): boolean {
  return Boolean((command as unknown as { _hidden?: boolean })._hidden);
}

function describeCommand(command: Command, path: string, catalogs: CompletionValues): CommandSpec {
  const help = command.createHelp();
  const args = command.registeredArguments;
  return {
    name: command.name(),
    path,
    description: command.summary() || command.description().split('\n')[0],
    options: help.visibleOptions(command).map((o) => describeOption(o, catalogs)),
    subcommands: command.commands
      .filter((c) => !isHidden(c))
      .map((c) => describeCommand(c, path === '' ? c.name() : `${path} ${c.name()}`, catalogs)),
    positionals: args.map((a, i) => positionalValues(path, i, a, catalogs)),
    variadic: args.length > 0 && args[args.length - 1].variadic,
  };
}

/**
 * The whole tree: the root's options are the global ones, offered after every command too.
 * `help` takes a command's name, so it is offered the commands (never file names).
 */
export function describeProgram(program: Command, catalogs: CompletionValues): CommandSpec {
  const root = describeCommand(program, '', catalogs);
  const help = root.subcommands.find((c) => c.name === 'help');
  if (help) help.positionals = [words(root.subcommands.map((c) => c.name).filter((name) => name !== 'help'))];
  return root;
}

/** Every command of the tree, parents before children, the root first. */
export function allCommands(root: CommandSpec): CommandSpec[] {
  const out: CommandSpec[] = [];
  const visit = (c: CommandSpec) => {
    out.push(c);
    c.subcommands.forEach(visit);
  };
  visit(root);
  return out;
}
