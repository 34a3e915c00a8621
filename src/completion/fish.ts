// The fish completion script: one `complete` line per command, option and value set. fish decides
// where the cursor is with conditions on the subcommands seen so far.
import { allCommands, type CommandSpec, type OptionSpec, type ValueSpec } from './model.js';
import { commentText } from './sh-data.js';

const CMD = 'company-data';

/** A single-quoted fish string (fish escapes \\ and ' inside single quotes). */
function fishQuote(text: string): string {
  return `'${commentText(text).replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** The condition "the words typed so far lead to this command, and not further". */
function condition(root: CommandSpec, command: CommandSpec): string {
  if (command === root) return '__fish_use_subcommand';
  const names = command.path.split(' ');
  const parts = names.map((n) => `__fish_seen_subcommand_from ${n}`);
  const deeper = command.subcommands.map((s) => s.name);
  if (deeper.length > 0) parts.push(`not __fish_seen_subcommand_from ${deeper.join(' ')}`);
  return parts.join('; and ');
}

function valueArgs(spec: ValueSpec): string {
  if (spec.kind === 'files') return ' -r -F';
  if (spec.kind === 'words') return ` -x -a ${fishQuote(spec.words.join(' '))}`;
  return ' -x';
}

function optionLine(option: OptionSpec, when: string | undefined): string {
  const names = option.names
    .map((n) =>
      n.startsWith('--') ? ` -l ${n.slice(2)}` : n.length === 2 ? ` -s ${n.slice(1)}` : ` -o ${n.slice(1)}`,
    )
    .join('');
  const scope = when ? ` -n ${fishQuote(when)}` : '';
  const value = option.takesValue ? valueArgs(option.values) : '';
  return `complete -c ${CMD}${scope}${names}${value} -d ${fishQuote(option.description)}`;
}

export function fishScript(root: CommandSpec, header: string[]): string {
  const lines = [
    '# fish completion for company-data',
    ...header.map((line) => `# ${commentText(line)}`),
    '# Install: company-data completion fish > ~/.config/fish/completions/company-data.fish',
    '',
    `complete -c ${CMD} -f`,
    ...root.options.map((o) => optionLine(o, undefined)),
  ];
  for (const command of allCommands(root)) {
    const when = condition(root, command);
    for (const sub of command.subcommands)
      lines.push(`complete -c ${CMD} -n ${fishQuote(when)} -a ${sub.name} -d ${fishQuote(sub.description)}`);
    if (command === root) continue;
    for (const option of command.options) lines.push(optionLine(option, when));
    // fish cannot count positionals cheaply: offer every positional's values once in the command.
    const values = new Set(command.positionals.flatMap((p) => (p.kind === 'words' ? p.words : [])));
    if (values.size > 0)
      lines.push(`complete -c ${CMD} -n ${fishQuote(when)} -a ${fishQuote([...values].join(' '))}`);
    if (command.positionals.some((p) => p.kind === 'files'))
      lines.push(`complete -c ${CMD} -n ${fishQuote(when)} -F`);
  }
  return `${lines.join('\n')}\n`;
}
