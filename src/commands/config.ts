// Placeholder: registered so the program builds; implemented by its issue.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('config')
    .description('not implemented yet')
    .action(() => {
      throw new Error('config is not implemented yet');
    });
}
