// The built `company-data mcp` (dist/, through bin/company-data.js) under the SDK's 2.x client, at
// a protocol version of the test's choosing: 2026-07-28 opens with server/discover, the 2025
// versions with initialize. The client answers elicitation when the test gives it answers, and
// every method it sends is recorded, so a test can show which opening it took.

import { join } from 'node:path';
import {
  type CallToolResult,
  Client,
  type ElicitRequestFormParams,
  type ElicitResult,
  type Tool,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, expect } from 'vitest';
import { builtServer, collected } from './cli.js';
import { type SandboxHandle, sandboxAndDirForTests } from './sandbox.js';

/** The protocol versions the server serves (docs/mcp.md). */
export const PROTOCOLS = ['2026-07-28', '2025-11-25', '2025-06-18'] as const;
export type ProtocolVersion = (typeof PROTOCOLS)[number];

/** The SDK's stdio transport, recording the method of every message the client sends. */
class RecordingTransport extends StdioClientTransport {
  readonly sent: string[] = [];

  override send(...args: Parameters<StdioClientTransport['send']>): ReturnType<StdioClientTransport['send']> {
    const [message] = args;
    if ('method' in message) this.sent.push(message.method);
    return super.send(...args);
  }
}

export interface BuiltOptions {
  protocol: ProtocolVersion;
  /**
   * The person's answer to each elicitation (the client then declares form elicitation); each
   * question asked is kept in `questions`. Without it the client declares no elicitation.
   */
  answer?: (question: ElicitRequestFormParams) => ElicitResult;
}

export interface BuiltSession {
  client: Client;
  /** The methods the client sent, in order. */
  sent: string[];
  /** The elicitation questions the server asked. */
  questions: ElicitRequestFormParams[];
  /** Errors the client saw outside a request (a line on stdout that is not a message, say). */
  errors: Error[];
  stderr(): string;
  close(): Promise<void>;
}

/** Starts `company-data <args>` from dist/ with a clean environment and connects the 2.x client. */
export async function connectBuilt(
  args: string[],
  env: Record<string, string | undefined>,
  options: BuiltOptions,
): Promise<BuiltSession> {
  const transport = new RecordingTransport(builtServer(args, env));
  const stderrSoFar = collected(transport.stderr);
  const modern = options.protocol === '2026-07-28';
  const client = new Client(
    { name: 'company-data-test', version: '2.0.0' },
    {
      capabilities: options.answer ? { elicitation: { form: {} } } : {},
      ...(modern
        ? { versionNegotiation: { mode: { pin: options.protocol } } }
        : { supportedProtocolVersions: [options.protocol] }),
    },
  );
  const questions: ElicitRequestFormParams[] = [];
  const answer = options.answer;
  if (answer) {
    client.setRequestHandler('elicitation/create', async (request) => {
      const question = request.params as ElicitRequestFormParams;
      questions.push(question);
      return answer(question);
    });
  }
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  return {
    client,
    sent: transport.sent,
    questions,
    errors,
    stderr: stderrSoFar,
    close: () => client.close(),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: a JSON answer, walked by the assertions
export type Answer = Record<string, any>;

/** Checks each answer against the outputSchema its tool was listed with, and keeps it by label. */
export function validator(tools: Tool[]) {
  const ajv = new Ajv2020({ strict: true });
  const compiled = new Map(
    tools.map((tool) => [tool.name, tool.outputSchema && ajv.compile(tool.outputSchema)]),
  );
  const seen: string[] = [];
  return {
    seen,
    check(name: string, label: string, result: CallToolResult): Answer {
      const validate = compiled.get(name);
      expect(validate, `${name} has an outputSchema`).toBeTruthy();
      expect(validate?.(result.structuredContent), `${label}: ${JSON.stringify(validate?.errors)}`).toBe(
        true,
      );
      seen.push(label);
      return result.structuredContent as Answer;
    },
  };
}

/**
 * For the tests of a file: a loopback sandbox and a directory, a session's state of its own in it
 * (config, cache, store), and every session closed after its test, having seen no error.
 */
export function builtServerForTests(prefix: string) {
  let sandbox: SandboxHandle | undefined;
  let dir = '';
  let next = 0;
  const open: BuiltSession[] = [];
  sandboxAndDirForTests(prefix, { companies: 2000 }, (started, made) => {
    sandbox = started;
    dir = made;
  });
  afterEach(async () => {
    for (const session of open.splice(0)) {
      await session.close();
      expect(session.errors).toEqual([]);
    }
  });
  const served = {
    get sandbox(): SandboxHandle {
      if (!sandbox) throw new Error('the sandbox starts before the tests');
      return sandbox;
    },
    /** The sandbox's key, and config, cache and store in a fresh directory. */
    env(): Record<string, string> {
      const home = join(dir, `s${next++}`);
      return {
        COMPANY_DATA_API_KEY: served.sandbox.keys.full,
        XDG_CONFIG_HOME: join(home, 'config'),
        XDG_CACHE_HOME: join(home, 'cache'),
        COMPANY_DATA_STORE: join(home, 'store.db'),
      };
    },
    /** `company-data --base-url <sandbox> <args>` under the 2.x client, closed after the test. */
    async start(args: string[], options: BuiltOptions): Promise<BuiltSession> {
      const session = await connectBuilt(['--base-url', served.sandbox.url, ...args], served.env(), options);
      open.push(session);
      return session;
    },
  };
  return served;
}
