// Everything of the MCP SDK and zod that the server uses, in one module. The build bundles it
// apart, into dist/mcp-sdk.cjs (scripts/build.mjs), which the CLI bundle requires only when
// `company-data mcp` runs: the other commands do not load or compile its 0.7 MB.
export { Server } from '@modelcontextprotocol/sdk/server/index.js';
export { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
export { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
export {
  inputRequired,
  inputResponse,
  parseJSONRPCMessage,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
} from '@modelcontextprotocol/server';
export * as z from 'zod';
