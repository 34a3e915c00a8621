// The SDK's own MCP client against `company-data mcp`: the built CLI started as an MCP client starts
// it, over real stdio with its stderr collected (`mcpClient`), or main() in this process with two
// streams for its stdio (`startMcp`, for tests that need no process).
import { PassThrough, type Readable, Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { main } from '../../src/cli.js';
import { builtServer, cleanEnv, collected } from './cli.js';

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
  const transport = new StdioClientTransport(builtServer(args, env));
  const stderr = collected(transport.stderr);
  const client = new Client({ name: 'company-data-test', version: '1.0.0' });
  return { client, transport, stderr };
}

/**
 * The client's end of the server's stdio, as the SDK's StdioClientTransport has it: each message
 * one JSON line written to the server's stdin; each line of its stdout read as one (a line that is
 * not a protocol message is an error).
 */
export class StdioStreams implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();

  constructor(
    private readonly toServer: Writable,
    private readonly fromServer: Readable,
  ) {}

  async start(): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) return;
        this.onmessage?.(message);
      }
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
  }
}

/** A session of `company-data <global> mcp <args>` in this process, connected with the SDK's client. */
export async function startMcp(
  argv: string[],
  env: Record<string, string | undefined>,
  now: () => number = Date.now,
): Promise<{ client: Client; errors: Error[]; exit: Promise<number> }> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
  const exit = main(argv, { env: cleanEnv(env), stdin, stdout, stderr, now });
  const client = new Client({ name: 'company-data-test', version: '1.0.0' });
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(new StdioStreams(stdin, stdout));
  return { client, errors, exit };
}
