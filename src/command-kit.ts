// Glue between Commander and the commands: builds the context for an action and records its
// exit code, so that main() (not the command) decides how the process ends.
import { type Command, InvalidArgumentError } from 'commander';
import type { GlobalFlags } from './config.js';
import type { RunState } from './context.js';
import type { Context } from './types.js';

export interface CliRun extends RunState {
  exitCode: number;
  context?: Context;
}

export const currentRun: CliRun = { exitCode: 0, cleanups: [] };

/**
 * Wraps a command's run function as a Commander action. Commander calls actions with
 * (...positionals, options, command); the run function receives (ctx, ...positionals, options).
 */
export function withContext<A extends unknown[]>(
  run: (ctx: Context, ...args: A) => Promise<number | undefined> | Promise<void>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const flags = command.optsWithGlobals() as GlobalFlags;
    const { createContext } = await import('./context.js');
    const ctx = await createContext(flags, currentRun);
    currentRun.context = ctx;
    const code = await run(ctx, ...(args.slice(0, -1) as A));
    currentRun.exitCode = typeof code === 'number' ? code : 0;
  };
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
