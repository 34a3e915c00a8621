// Builds the one context object a command receives: { io, config, client } plus the argv,
// environment and clock of its invocation (DESIGN.md). The HTTP client module is loaded on the
// first request only.
import type { Invocation } from './command-kit.js';
import { type GlobalFlags, resolveConfig } from './config.js';
import { usageError } from './problem.js';
import { storeHandle } from './store/handle.js';
import { sandboxStorePath, storePathOf } from './store/location.js';
import type { ApiResponse, Client, Context, Credits, IO, RequestOptions } from './types.js';

export type RunState = Pick<Invocation, 'argv' | 'env' | 'now' | 'cleanups'>;

export async function createContext(
  flags: GlobalFlags,
  state: RunState,
  io: IO,
  command = '',
): Promise<Context> {
  const config = await resolveConfig(flags, state.env, io.isStdoutTTY, {
    missingProfile: command === 'config list' ? 'empty' : 'refuse',
  });
  const storePath = storePathOf(flags.store, state.env);
  // A sandbox run keeps its answers and its spend apart from the real ones (sandboxStorePath).
  const store = storeHandle(
    flags.sandbox && storePath ? sandboxStorePath(storePath) : storePath,
    state.cleanups,
    { sandbox: flags.sandbox === true, env: state.env, connections: config.storeConnections?.value },
  );
  if (flags.sandbox) {
    const { startSandbox, isLayoutName, LAYOUT_NAMES } = await import('./sandbox/index.js');
    // COMPANY_DATA_SANDBOX_LAYOUT: the in-process sandbox in another layout (docs/contract.md).
    const layout = state.env.COMPANY_DATA_SANDBOX_LAYOUT?.trim() || 'flat';
    if (!isLayoutName(layout)) {
      throw usageError(
        `COMPANY_DATA_SANDBOX_LAYOUT is "${layout}", which is no sandbox layout`,
        `Set it to one of ${LAYOUT_NAMES.join(', ')}, or unset it.`,
      );
    }
    const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, layout });
    state.cleanups.push(() => sandbox.close());
    config.baseUrl = { value: sandbox.url, source: 'sandbox' };
    config.apiKey = { value: sandbox.keys.full, source: 'sandbox' };
    // Short enough for one line at 80 columns; the store's path (of any length) makes it two.
    // The sandbox's answers and spend are kept apart from the real ones: the second line says where.
    const kept = store.path ? `\nSandbox store: ${store.path}` : '';
    io.info(`Using the offline sandbox at ${sandbox.url} (demo key, no real credits).${kept}`);
  }
  // The client module loads on the first request, not here: a command answered from the cached
  // catalog (errors, products, fields) never loads it.
  let real: Client | undefined;
  let loading: Promise<Client> | undefined;
  // Listeners of the service's RateLimit headers asked for before the client exists (a batch
  // whose catalogs came from the cache): attached when it is made, so its first answer counts.
  type Watch = { listener: Parameters<NonNullable<Client['watchRateLimits']>>[0]; unwatch?: () => void };
  const watches = new Set<Watch>();
  const load = (): Promise<Client> => {
    loading ??= Promise.all([import('./http/client.js'), import('./spinning-client.js')]).then(
      ([{ createClient }, { spinningClient }]) => {
        const http = createClient(config, {
          // No log at all without --verbose: the client then builds no log lines.
          log: io.verbose ? (line) => io.debug(line) : undefined,
          env: state.env,
          // The in-process sandbox is this machine's own: never through a proxy.
          direct: config.baseUrl?.source === 'sandbox',
        });
        // Charges reach the ledger through the purchase path (src/spend/), not here.
        const created = spinningClient(http, io, config);
        state.cleanups.push(() => created.close());
        for (const watch of watches) watch.unwatch = created.watchRateLimits?.(watch.listener);
        real = created;
        return created;
      },
    );
    return loading;
  };
  const lazy: Client = {
    request<T = unknown>(options: RequestOptions): Promise<ApiResponse<T>> {
      return real ? real.request<T>(options) : load().then((client) => client.request<T>(options));
    },
    get lastCredits(): Credits {
      return real ? real.lastCredits : {};
    },
    watchRateLimits(listener) {
      if (real?.watchRateLimits) return real.watchRateLimits(listener);
      const watch: Watch = { listener };
      watches.add(watch);
      return () => {
        watches.delete(watch);
        watch.unwatch?.();
      };
    },
    async close(): Promise<void> {
      if (loading) await (await loading).close();
    },
  };
  return {
    io,
    config,
    argv: state.argv,
    env: state.env,
    now: state.now,
    command,
    store,
    get client(): Client {
      return real ?? lazy;
    },
  };
}
