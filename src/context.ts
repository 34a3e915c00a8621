// Builds the one context object a command receives: { io, config, client } (DESIGN.md).
// The HTTP client, and with it undici, is created on first use only.
import { type GlobalFlags, resolveConfig } from './config.js';
import { createIO } from './io.js';
import type { Client, Context, IO } from './types.js';

export interface RunState {
  cleanups: Array<() => Promise<void> | void>;
}

export async function createContext(flags: GlobalFlags, state: RunState, io?: IO): Promise<Context> {
  io ??= createIO({ quiet: flags.quiet, verbose: flags.verbose, color: flags.color });
  const config = await resolveConfig(flags, process.env, io.isStdoutTTY);
  if (flags.sandbox) {
    const { startSandbox } = await import('./sandbox/index.js');
    const sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
    state.cleanups.push(() => sandbox.close());
    config.baseUrl = { value: sandbox.url, source: 'sandbox' };
    config.apiKey = { value: sandbox.keys.full, source: 'sandbox' };
    io.info(`Using the offline sandbox at ${sandbox.url} with its demo key (no real credits are spent).`);
  }
  let client: Client | undefined;
  let clientModule: typeof import('./http/client.js') | undefined;
  clientModule = await import('./http/client.js');
  return {
    io,
    config,
    get client(): Client {
      if (!client) {
        client = clientModule!.createClient(config, io!);
        const created = client;
        state.cleanups.push(() => created.close());
      }
      return client;
    },
  };
}
