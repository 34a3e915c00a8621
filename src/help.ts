// The help of the program, as issue 46 left it: `help <command> [<subcommand>...]` and `help
// environment`, a bare group's help on stdout, and the text each command adds after its options
// refilled to the terminal's width. src/cli.ts calls these once every command is registered.
import { type Command, CommanderError } from 'commander';
import { reflowHelpText } from './output/wrap.js';

/**
 * The text each command adds after its options (addHelpText) is written by hand for no width in
 * particular: it is filled again to the terminal's width when printed (src/output/wrap.ts), as
 * Commander already does for the descriptions of options and commands.
 */
export function fitHelpText(command: Command, widthFor: (error: boolean) => number): void {
  // A Command is an EventEmitter (addHelpText listens on it), which its type declarations omit.
  const emitter = command as unknown as import('node:events').EventEmitter;
  for (const event of ['afterHelp', 'beforeHelp'] as const) {
    const listeners = emitter.listeners(event) as Array<(context: HelpEventContext) => void>;
    emitter.removeAllListeners(event);
    for (const listener of listeners) {
      emitter.on(event, (context: HelpEventContext) =>
        listener({
          ...context,
          write: (text: string) => context.write(reflowHelpText(text, widthFor(context.error))),
        }),
      );
    }
  }
  for (const sub of command.commands) fitHelpText(sub, widthFor);
}

interface HelpEventContext {
  error: boolean;
  write: (text: string) => void;
  command: Command;
}

/**
 * The bare program and a bare group (`company-data`, `company-data store`) print their help on
 * stdout and exit 0, as `gh` and `git` do: asking what there is is no mistake. Commander would
 * print it on stderr as an error ("(outputHelp)", exit 1); it calls help({ error: true }) only
 * for a command with subcommands given none.
 */
export function helpWhenBare(command: Command): void {
  if (command.commands.length === 0) return;
  const original = command.help.bind(command);
  command.help = ((context?: { error?: boolean }) => {
    if (!context?.error) return original(context as Parameters<Command['help']>[0] & object);
    command.outputHelp();
    throw new CommanderError(0, 'commander.help', '(outputHelp)');
  }) as Command['help'];
  for (const sub of command.commands) helpWhenBare(sub);
}

/**
 * `help <command> [<subcommand>...]` prints exactly what `<command> [<subcommand>...] --help`
 * prints. Commander's own help command reads only the first name, so `help config set-key`
 * would show the help of `config`.
 */
export function addHelpCommand(program: Command, width: () => number): void {
  program.helpCommand(false);
  program
    .command('help')
    .description(
      'Show the help of a command, or of a subcommand (help config set-key); help environment lists the environment variables',
    )
    .argument('[command...]', 'the command and subcommands, or environment')
    .action(async (path: string[]) => {
      if (path.length === 1 && path[0] === 'environment') {
        const [{ environmentHelp }, { wrapLine }] = await Promise.all([
          import('./environment.js'),
          import('./output/wrap.js'),
        ]);
        program.configureOutput().writeOut?.(environmentHelp(width(), wrapLine));
        return;
      }
      let target = program;
      for (const name of path) {
        const next = target.commands.find((c) => c.name() === name || c.aliases().includes(name));
        if (!next) {
          const where = target === program ? '' : ` of '${target.name()}'`;
          target.error(`error: unknown command '${name}'${where}`, { code: 'commander.unknownCommand' });
        }
        target = next as Command;
      }
      target.outputHelp();
    });
}
