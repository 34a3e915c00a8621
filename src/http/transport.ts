// The connection pool. undici is imported on the first call only, so commands that never reach
// the network (help, config) do not load it. One pool serves every call of the client, so
// connections are kept alive across the calls of a batch.
import type { Dispatcher } from 'undici';
import { isLoopbackHost } from './target.js';

export const CONNECT_TIMEOUT_MS = 10_000;

export interface Transport {
  /** The dispatcher for a URL: through the proxy of the environment, except for loopback. */
  dispatcherFor(url: URL): Dispatcher;
  close(): Promise<void>;
}

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'];

/** Whether the environment asks for a proxy (NO_PROXY is then read by undici itself). */
export function proxyConfigured(env: NodeJS.ProcessEnv): boolean {
  return PROXY_VARIABLES.some((name) => Boolean(env[name]));
}

export async function openTransport(timeoutMs: number, env: NodeJS.ProcessEnv): Promise<Transport> {
  // Node gives a CommonJS module's exports as named exports; esbuild's split bundle gives them
  // only as the default export. Accept both.
  const loaded: Partial<typeof import('undici')> & { default?: typeof import('undici') } = await import(
    'undici'
  );
  const { Agent, EnvHttpProxyAgent } = loaded.Agent ? (loaded as typeof import('undici')) : loaded.default!;
  // headersTimeout and bodyTimeout are idle timeouts per attempt; the overall deadline of a
  // call is enforced above this layer with an abort signal. undici runs these on coarse timers
  // (about 1 s resolution), so a sub-second --timeout fires after roughly a second.
  const options = {
    connect: { timeout: CONNECT_TIMEOUT_MS },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  };
  const direct = new Agent(options);
  // Loopback (the sandbox) always goes direct: a proxy's own loopback is not ours.
  const proxied = proxyConfigured(env)
    ? new EnvHttpProxyAgent({
        ...options,
        httpProxy: env.HTTP_PROXY ?? env.http_proxy,
        httpsProxy: env.HTTPS_PROXY ?? env.https_proxy,
        noProxy: env.NO_PROXY ?? env.no_proxy,
      })
    : undefined;
  return {
    dispatcherFor(url) {
      return proxied && !isLoopbackHost(url.hostname) ? proxied : direct;
    },
    async close() {
      await Promise.all([direct.close(), proxied?.close()]);
    },
  };
}
