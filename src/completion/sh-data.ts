// The data half of the bash and zsh scripts: small `case` functions, valid in both shells, that
// answer "which subcommands / options / values here?" for a command path. The drivers (bash.ts,
// zsh.ts) walk the words typed so far and ask these functions.
import { allCommands, type CommandSpec, type OptionSpec, type ValueSpec } from './model.js';

/** A single-quoted shell word: nothing inside is expanded. */
export function shQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Text for a one-line `#` comment: no newline may end the comment early. */
export function commentText(text: string): string {
  return text.replace(/[\x00-\x1f\x7f]+/g, ' ');
}

function valueWord(spec: ValueSpec): string | undefined {
  if (spec.kind === 'files') return 'files:';
  if (spec.kind === 'words') return `${spec.list ? 'list' : 'words'}:${spec.words.join(' ')}`;
  return undefined;
}

function caseFunction(name: string, why: string, arms: Array<[string, string]>): string {
  // An arm without a value would print an empty line, which zsh's _describe shows as a blank entry.
  const lines = arms
    .filter(([, value]) => value !== '')
    .map(([pattern, value]) => `    ${pattern}) printf '%s\\n' ${shQuote(value)} ;;`);
  return [`# ${why}`, `${name}() {`, '  case "$1" in', ...lines, '  esac', '}'].join('\n');
}

const optionNames = (options: OptionSpec[]) => options.flatMap((o) => o.names);

/** Summary and description words for zsh's _describe: "name:description". */
function described(name: string, description: string): string {
  return `${name.replaceAll(':', '\\:')}:${commentText(description)}`;
}

export function shDataFunctions(root: CommandSpec, prefix: string): string {
  const commands = allCommands(root);
  const globalOptions = root.options;
  const rootNames = new Set(globalOptions.flatMap((o) => o.names));
  // A command's own options; the global ones are added by the *_all_* functions below.
  const own = (c: CommandSpec) =>
    c === root ? c.options : c.options.filter((o) => !o.names.some((n) => rootNames.has(n)));
  const key = (c: CommandSpec) => shQuote(c.path);

  const subcommands: Array<[string, string]> = commands
    .filter((c) => c.subcommands.length > 0)
    .map((c) => [key(c), c.subcommands.map((s) => s.name).join(' ')]);
  const subcommandDescriptions: Array<[string, string]> = commands
    .filter((c) => c.subcommands.length > 0)
    .map((c) => [key(c), c.subcommands.map((s) => described(s.name, s.description)).join('\n')]);
  const options: Array<[string, string]> = commands.map((c) => [key(c), optionNames(own(c)).join(' ')]);
  const optionDescriptions: Array<[string, string]> = commands.map((c) => [
    key(c),
    own(c)
      .flatMap((o) => o.names.map((n) => described(n, o.description)))
      .join('\n'),
  ]);
  const valueOptions: Array<[string, string]> = commands.map((c) => [
    key(c),
    optionNames(own(c).filter((o) => o.takesValue)).join(' '),
  ]);

  // "<path>|<option>": a command's own options first, then the global ones after any path.
  const optionValues: Array<[string, string]> = [];
  const addOptionValues = (pathPattern: string, list: OptionSpec[]) => {
    for (const option of list) {
      const value = valueWord(option.values);
      if (!value) continue;
      const patterns = option.names.map((n) => `${pathPattern}${shQuote(`|${n}`)}`).join('|');
      optionValues.push([patterns, value]);
    }
  };
  for (const c of commands) if (c !== root) addOptionValues(shQuote(c.path), c.options);
  addOptionValues('*', globalOptions);

  // "<path>|<index>"; a variadic last positional also answers for every later index.
  const positionalValues: Array<[string, string]> = [];
  for (const c of commands) {
    c.positionals.forEach((spec, index) => {
      const value = valueWord(spec);
      if (!value) return;
      positionalValues.push([shQuote(`${c.path}|${index}`), value]);
      if (c.variadic && index === c.positionals.length - 1)
        positionalValues.push([`${shQuote(`${c.path}|`)}*`, value]);
    });
  }

  return [
    caseFunction(`${prefix}_commands`, 'subcommands of a command path', subcommands),
    caseFunction(
      `${prefix}_commands_described`,
      'the same, as name:description lines',
      subcommandDescriptions,
    ),
    caseFunction(
      `${prefix}_options`,
      'options valid after a command path (its own and the global ones)',
      options,
    ),
    caseFunction(`${prefix}_options_described`, 'the same, as name:description lines', optionDescriptions),
    caseFunction(`${prefix}_value_options`, 'options that take a value', valueOptions),
    caseFunction(
      `${prefix}_option_values`,
      '"<path>|<option>" -> words:<values>, list:<comma-list values> or files:',
      optionValues,
    ),
    caseFunction(
      `${prefix}_positional_values`,
      '"<path>|<index>" -> values of a positional argument',
      positionalValues,
    ),
    `# options valid after command path $1: its own and the global ones
${prefix}_all_options() {
  ${prefix}_options "$1"
  [ -n "$1" ] && ${prefix}_options ''
  return 0
}

${prefix}_all_options_described() {
  ${prefix}_options_described "$1"
  [ -n "$1" ] && ${prefix}_options_described ''
  return 0
}

# whether option $2 takes a value after command path $1
${prefix}_takes_value() {
  case " $(${prefix}_value_options "$1") $(${prefix}_value_options '') " in
    *" $2 "*) return 0 ;;
  esac
  return 1
}`,
  ].join('\n\n');
}
