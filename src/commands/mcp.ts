// `company-data mcp`: the Company Data tools served to an AI agent over the Model Context Protocol
// (stdio). Read-only unless --allow-spend; the paid tools buy through the same purchase path,
// caps and ledger as every other command (src/mcp/, docs/architecture.md).
import type { Command } from 'commander';
import { BUDGET_MONTH_OPTION, type CommandKit, parseIntOption } from '../command-kit.js';
import { DEFAULT_CONFIRM_ABOVE } from '../mcp/defaults.js';
import type { McpFlags } from '../mcp/session.js';
import type { Context } from '../types.js';

export function register(program: Command, kit: CommandKit): void {
  program
    .command('mcp')
    .description('Serve the tools to an AI agent over MCP (stdio); read-only unless --allow-spend')
    .option(
      '--allow-spend <n>',
      'turn the paid tools on, and never let this session charge more than n credits (default: read-only)',
      parseIntOption('--allow-spend'),
    )
    .option(...BUDGET_MONTH_OPTION)
    .option(
      '--confirm-above <n>',
      `ask the user before a paid call whose worst case is above n credits; 0 asks before every paid call (default: ${DEFAULT_CONFIRM_ABOVE})`,
      parseIntOption('--confirm-above'),
    )
    .addHelpText(
      'after',
      `
An MCP client (Claude Desktop, Claude Code, an IDE) starts this command and talks to it over
stdin and stdout (protocol messages only); the server's own messages go to stderr. It uses the
configured profile, key, base URL and store; global options go before \`mcp\`.

Tools: products, fields, account, spend (free); estimate (free) and enrich, search, breakdown,
lookalike (paid), which refuse, saying how to turn them on, until --allow-spend. A paid call
whose worst case does not fit what --allow-spend (this session), --budget-month or
COMPANY_DATA_BUDGET_MONTH (the key's month) and the balance leave is refused before anything is
sent, saying what would fit. One whose worst case is above --confirm-above asks the user first:
through the client's elicitation when it has it, otherwise by answering confirmation_required
with a token the call must carry once the user agreed (good once, for 10 minutes). Every charge
is recorded in the spend ledger (\`company-data spend\`); answers are capped at 100,000
characters. Protocol versions: 2026-07-28, 2025-11-25 and 2025-06-18. See docs/mcp.md.

Client configuration (mcpServers):
  { "mcpServers": { "company-data": { "command": "company-data", "args": ["mcp", "--allow-spend", "50"] } } }

Examples:
  $ company-data --sandbox mcp
  $ npx @modelcontextprotocol/inspector company-data --sandbox mcp --allow-spend 20
  $ company-data mcp --allow-spend 50 --budget-month 2000
  $ company-data mcp --allow-spend 200 --confirm-above 0
  $ company-data --profile prod mcp --allow-spend 10`,
    )
    .action(kit.withContext(runMcp));
}

export async function runMcp(ctx: Context, flags: McpFlags): Promise<number> {
  const { serve } = await import('../mcp/server.js');
  return serve(ctx, flags);
}
