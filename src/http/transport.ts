// The connections. Two transports behind one choice:
// - HTTP/1.1 straight over node:net / node:tls (src/http/wire.ts) for every call going direct,
//   one-shot commands and batches alike: undici costs ~50 ms of start-up, node:http's first
//   request ~9 ms more than this, and a 2,000-row batch spends ~25% less CPU per row over it
//   than over undici's pool (docs/performance.md, "Twelfth pass");
// - undici for a call through a proxy (EnvHttpProxyAgent tunnels, and reads NO_PROXY itself).
// undici is imported on the first call that needs it, so a command going direct never loads it.
import type { Dispatcher } from 'undici';
import { isLoopbackHost } from './target.js';
import { createWireDispatcher, type Dispatch, type WireDispatcher } from './wire.js';

export const CONNECT_TIMEOUT_MS = 10_000;

export interface Transport {
  /** Where a call to `url` goes; a promise only while undici is still loading (proxied calls). */
  dispatcherFor(url: URL): Dispatch | Promise<Dispatch>;
  close(): Promise<void>;
}

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'];

/** Whether the environment asks for a proxy (NO_PROXY is then read by undici itself). */
export function proxyConfigured(env: NodeJS.ProcessEnv): boolean {
  return PROXY_VARIABLES.some((name) => Boolean(env[name]));
}

export function createTransport(timeoutMs: number, env: NodeJS.ProcessEnv): Transport {
  const proxy = proxyConfigured(env);
  let direct: WireDispatcher | undefined;
  let proxied: Dispatcher | undefined;
  let loading: Promise<Dispatcher> | undefined;

  return {
    dispatcherFor(url) {
      // Loopback (the sandbox) always goes direct: a proxy's own loopback is not ours.
      if (!proxy || isLoopbackHost(url.hostname)) {
        direct ??= createWireDispatcher({ connectMs: CONNECT_TIMEOUT_MS, idleMs: timeoutMs });
        return direct;
      }
      if (proxied) return proxied;
      loading ??= openProxyAgent(timeoutMs, env).then((agent) => {
        proxied = agent;
        return agent;
      });
      return loading;
    },
    async close() {
      direct?.close();
      direct = undefined;
      const agent = proxied ?? (loading ? await loading.catch(() => undefined) : undefined);
      proxied = undefined;
      loading = undefined;
      await agent?.close();
    },
  };
}

async function openProxyAgent(timeoutMs: number, env: NodeJS.ProcessEnv): Promise<Dispatcher> {
  // Node gives a CommonJS module's exports as named exports; esbuild's split bundle gives them
  // only as the default export. Accept both.
  const loaded: Partial<typeof import('undici')> & { default?: typeof import('undici') } = await import(
    'undici'
  );
  // After the load, so that undici's code cache was made under the same V8 flags as it is used
  // (src/cli-loader.ts), and before the first connection compiles the parser.
  await keepWasmOnBaseline();
  const { EnvHttpProxyAgent } = loaded.EnvHttpProxyAgent
    ? (loaded as typeof import('undici'))
    : loaded.default!;
  // headersTimeout and bodyTimeout are idle timeouts per attempt; the overall deadline of a
  // call is enforced above this layer. undici runs these on coarse timers (about 1 s
  // resolution), so a sub-second --timeout fires after roughly a second.
  return new EnvHttpProxyAgent({
    connect: { timeout: CONNECT_TIMEOUT_MS },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    httpProxy: env.HTTP_PROXY ?? env.http_proxy,
    httpsProxy: env.HTTPS_PROXY ?? env.https_proxy,
    noProxy: env.NO_PROXY ?? env.no_proxy,
  });
}

/**
 * undici parses HTTP with a WebAssembly build of llhttp. By default V8 also compiles it (and the
 * JS-to-wasm wrappers) with its optimising compiler on background threads, and a process waits
 * for those compiles before it can exit: about 100 ms of CPU and wall time on a 16-row batch,
 * with no gain in a long one (20,000 rows, 6 alternating runs: 4,170 ms CPU Liftoff-only against
 * 4,240 with tier-up; docs/performance.md). So llhttp stays on the baseline compiler. V8 reads the
 * flag when the module compiles, on undici's first connection, so it is set before any.
 */
async function keepWasmOnBaseline(): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--liftoff-only');
}
