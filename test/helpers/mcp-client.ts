// The built CLI's `mcp` started the way an MCP client starts it: by the SDK's own client over real
// stdio, its stderr collected.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, cleanEnv, ROOT } from './cli.js';

export interface McpProcess {
  client: Client;
  /** What the server wrote to stderr so far. */
  stderr(): string;
}

/** Starts `company-data <args>` under the SDK's client (not yet connected) with a clean environment. */
export function mcpClient(
  args: string[],
  env: Record<string, string | undefined>,
): McpProcess & {
  transport: StdioClientTransport;
} {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...args],
    env: cleanEnv(env) as Record<string, string>,
    cwd: ROOT,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'company-data-test', version: '1.0.0' });
  return { client, transport, stderr: () => stderr };
}
