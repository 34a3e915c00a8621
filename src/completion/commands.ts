// Every command module, so completion can register them all on one program and read the real
// flags from Commander. cli.ts loads the same modules lazily from its COMMANDS table, which it
// does not export; test/e2e/completion.test.ts fails when the two lists differ.
import type { Command } from 'commander';
import { buildProgram, loadCommander } from '../cli.js';

type CommandModule = { register(program: Command): void };

export const COMMAND_MODULES: Record<string, () => Promise<CommandModule>> = {
  enrich: () => import('../commands/enrich.js'),
  search: () => import('../commands/search.js'),
  breakdown: () => import('../commands/breakdown.js'),
  lookalike: () => import('../commands/lookalike.js'),
  products: () => import('../commands/products.js'),
  fields: () => import('../commands/fields.js'),
  errors: () => import('../commands/errors.js'),
  me: () => import('../commands/me.js'),
  sandbox: () => import('../commands/sandbox.js'),
  config: () => import('../commands/config.js'),
  doctor: () => import('../commands/doctor.js'),
  api: () => import('../commands/api.js'),
  completion: () => import('../commands/completion.js'),
};

/** A program with every command registered: what `--help` of each command would show. */
export async function buildFullProgram(): Promise<Command> {
  await loadCommander();
  const program = buildProgram();
  const modules = await Promise.all(Object.values(COMMAND_MODULES).map((load) => load()));
  for (const mod of modules) mod.register(program);
  return program;
}
