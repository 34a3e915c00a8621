// Glue between Commander and the commands. One `Invocation` exists per call of main(): it holds
// what the outside world gave this run (argv, environment, clock, streams) and what the run
// leaves behind (its exit code, the cleanups to await). Nothing here is global, so two
// invocations in one process (the in-process tests) never see each other's state.
import type { Readable, Writable } from 'node:stream';
import { type Command, InvalidArgumentError } from 'commander';
import type { GlobalFlags } from './config.js';
import type { Context, IO } from './types.js';

/** What main() receives from bin/ (or from a test) besides argv. */
export interface Surroundings {
  env?: NodeJS.ProcessEnv;
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  /** The clock, in epoch milliseconds. */
  now?: () => number;
}

export interface Invocation {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly now: () => number;
  readonly streams: Pick<Surroundings, 'stdin' | 'stdout' | 'stderr'>;
  exitCode: number;
  /** The program being run, with every command registered (completion reads it). */
  program?: Command;
  /** Commander's message for a usage error, held until main() reports it. */
  usageError?: string;
  /** The IO of this run, once a command made one (failures are reported through it). */
  io?: IO;
  context?: Context;
  /** Awaited in reverse order when the command has finished, whatever its outcome. */
  cleanups: Array<() => Promise<void> | void>;
}

export function newInvocation(argv: readonly string[], surroundings: Surroundings = {}): Invocation {
  const { env = process.env, now = Date.now, ...streams } = surroundings;
  return { argv, env, now, streams, exitCode: 0, cleanups: [] };
}

/** What a command's register() receives: ways to turn its run function into an action. */
export interface CommandKit {
  /** An action that builds the full context ({ io, config, client, ... }) and runs `run`. */
  withContext<A extends unknown[]>(
    run: (ctx: Context, ...args: A) => Promise<number | undefined> | Promise<void>,
  ): (...args: unknown[]) => Promise<void>;
  /**
   * An action that needs only the streams and the environment: building a context resolves the
   * settings, and a broken setting must not stop the commands that report or repair it.
   */
  withIO<A extends unknown[]>(
    run: (
      io: IO,
      invocation: Invocation,
      flags: GlobalFlags,
      ...args: A
    ) => Promise<number | undefined> | Promise<void>,
  ): (...args: unknown[]) => Promise<void>;
}

/** The IO of an invocation, made once, from its streams and environment and the global flags. */
export async function ioOf(invocation: Invocation, flags: GlobalFlags): Promise<IO> {
  if (invocation.io) return invocation.io;
  const { createIO } = await import('./io.js');
  const fromEnv = invocation.env.COMPANY_DATA_LOG_FORMAT?.trim();
  const unknownEnv = !flags.logFormat && fromEnv && !LOG_FORMATS.includes(fromEnv);
  const logFormat = flags.logFormat ?? (unknownEnv ? undefined : fromEnv);
  invocation.io = createIO({
    ...invocation.streams,
    env: invocation.env,
    quiet: flags.quiet,
    verbose: flags.verbose,
    color: flags.color,
    pager: flags.pager,
    logFormat: logFormat === 'timestamped' ? 'timestamped' : 'plain',
    now: invocation.now,
  });
  // A log format is a courtesy to the log's reader: a misspelt one is said, not fatal to the run.
  if (unknownEnv)
    invocation.io.warn(
      `warning: COMPANY_DATA_LOG_FORMAT="${fromEnv}" is not one of ${LOG_FORMATS.join(', ')}; using plain.`,
    );
  return invocation.io;
}

/** The values of --log-format and COMPANY_DATA_LOG_FORMAT. */
export const LOG_FORMATS = ['plain', 'timestamped'];

export function commandKit(invocation: Invocation): CommandKit {
  // Commander calls actions with (...positionals, options, command).
  const split = (args: unknown[]) => ({
    command: args[args.length - 1] as Command,
    positionals: args.slice(0, -1),
  });
  const record = (code: unknown) => {
    invocation.exitCode = typeof code === 'number' ? code : 0;
  };
  // Commander has checked the positionals against the command's arguments: they are what `run`
  // declares, which the types cannot see through Commander.
  type Loose = (...args: unknown[]) => Promise<unknown>;
  return {
    withContext(run) {
      return async (...args: unknown[]) => {
        const { command, positionals } = split(args);
        const flags = command.optsWithGlobals() as GlobalFlags;
        const { createContext } = await import('./context.js');
        const ctx = await createContext(
          flags,
          invocation,
          await ioOf(invocation, flags),
          commandPath(command),
        );
        invocation.context = ctx;
        try {
          record(await (run as Loose)(ctx, ...positionals));
        } catch (error) {
          throw await asStoreProblem(error, ctx);
        }
      };
    },
    withIO(run) {
      return async (...args: unknown[]) => {
        const { command, positionals } = split(args);
        const flags = command.optsWithGlobals() as GlobalFlags;
        // The options object is dropped: what a command needs of it, it reads from `flags`.
        const rest = positionals.slice(0, -1);
        record(await (run as Loose)(await ioOf(invocation, flags), invocation, flags, ...rest));
      };
    },
  };
}

/** 'enrich', 'store info': the command's names below the program. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Parses a non-negative integer option, with a usage error naming the option. */
export function parseIntOption(name: string, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    const value = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new InvalidArgumentError(
        `${name} must be a whole number between ${min} and ${max}, got "${raw}"`,
      );
    }
    return value;
  };
}

/**
 * --budget-month, on every command that can charge: the key's month cap, across runs and commands
 * (src/spend/purse.ts reads it, or COMPANY_DATA_BUDGET_MONTH when it is absent).
 */
export const BUDGET_MONTH_OPTION = [
  '--budget-month <n>',
  "never let this key's spend in the calendar month (UTC) pass n credits, across runs and commands (env: COMPANY_DATA_BUDGET_MONTH)",
  parseIntOption('--budget-month'),
] as const;

/** --dry-run of search, breakdown and lookalike (src/commands/cost-preview.ts). */
export const DRY_RUN_OPTION = [
  '--dry-run',
  'print what would be sent and its worst-case credits against the caps and the balance; buy nothing',
] as const;

/**
 * An error of SQLite that reached a command unconverted (a page found damaged while reading, say)
 * is a problem of the store, named with its file: exit 2 or 8, never a bug.
 */
async function asStoreProblem(error: unknown, ctx: Context): Promise<unknown> {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_') || ctx.store.path === false) return error;
  const { storeProblem } = await import('./store/sqlite.js');
  return storeProblem(ctx.store.path, error);
}
