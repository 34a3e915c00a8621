// Everything of the MCP SDK and zod that the server uses, in one module. The build bundles it
// apart, into dist/mcp-sdk.cjs (scripts/build.mjs), which the CLI bundle requires only when
// `company-data mcp` runs: the other commands do not load or compile it.
export {
  inputRequired,
  inputResponse,
  parseJSONRPCMessage,
  ResourceNotFoundError,
  Server,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
} from '@modelcontextprotocol/server';
export { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
export * as z from 'zod';
