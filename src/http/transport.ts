// The connections. Two transports behind one choice:
// - HTTP/1.1 straight over node:net / node:tls (src/http/wire.ts) for the calls of one-shot
//   commands going direct: undici costs about 50 ms of start-up, node:http's first request ~9 ms
//   more than this;
// - undici for the calls of a batch (`bulk`: less CPU per call, one pool kept alive across the
//   run) and for every call through a proxy (EnvHttpProxyAgent reads NO_PROXY itself).
// undici is imported on the first call that needs it, so most commands never load it.
import type { Dispatcher } from 'undici';
import { isLoopbackHost } from './target.js';
import { createWireDispatcher, type Dispatch, type WireDispatcher } from './wire.js';

export const CONNECT_TIMEOUT_MS = 10_000;

export interface Transport {
  /** Where a call to `url` goes; a promise only while undici is still loading. */
  dispatcherFor(url: URL, bulk: boolean): Dispatch | Promise<Dispatch>;
  /** At most this many connections per host for bulk calls. */
  limitBulkConnections(connections: number): void;
  close(): Promise<void>;
}

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'];

/** Whether the environment asks for a proxy (NO_PROXY is then read by undici itself). */
export function proxyConfigured(env: NodeJS.ProcessEnv): boolean {
  return PROXY_VARIABLES.some((name) => Boolean(env[name]));
}

interface UndiciPair {
  /** One pool per origin, used directly: the Agent's own per-call lookup costs ~1% of a batch. */
  poolFor(origin: string): Dispatcher;
  proxied?: Dispatcher;
  close(): Promise<void>;
}

export function createTransport(timeoutMs: number, env: NodeJS.ProcessEnv): Transport {
  const proxy = proxyConfigured(env);
  let light: WireDispatcher | undefined;
  let undici: UndiciPair | undefined;
  let loading: Promise<UndiciPair> | undefined;
  let bulkConnections: number | undefined;

  const pick = (pair: UndiciPair, url: URL): Dispatch =>
    // Loopback (the sandbox) always goes direct: a proxy's own loopback is not ours.
    pair.proxied && !isLoopbackHost(url.hostname) ? pair.proxied : pair.poolFor(url.origin);

  return {
    dispatcherFor(url, bulk) {
      if (!bulk && !(proxy && !isLoopbackHost(url.hostname))) {
        light ??= createWireDispatcher({ connectMs: CONNECT_TIMEOUT_MS, idleMs: timeoutMs });
        return light;
      }
      if (undici) return pick(undici, url);
      loading ??= openUndici(timeoutMs, env, proxy, () => bulkConnections).then((pair) => {
        undici = pair;
        return pair;
      });
      return loading.then((pair) => pick(pair, url));
    },
    limitBulkConnections(connections) {
      bulkConnections = connections;
    },
    async close() {
      light?.close();
      light = undefined;
      const pair = undici ?? (loading ? await loading.catch(() => undefined) : undefined);
      undici = undefined;
      loading = undefined;
      await pair?.close();
    },
  };
}

async function openUndici(
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
  proxy: boolean,
  connections: () => number | undefined,
): Promise<UndiciPair> {
  // Node gives a CommonJS module's exports as named exports; esbuild's split bundle gives them
  // only as the default export. Accept both.
  const loaded: Partial<typeof import('undici')> & { default?: typeof import('undici') } = await import(
    'undici'
  );
  // After the load, so that undici's code cache was made under the same V8 flags as it is used
  // (src/cli-loader.ts), and before the first connection compiles the parser.
  await keepWasmOnBaseline();
  const { Pool, EnvHttpProxyAgent } = loaded.Pool ? (loaded as typeof import('undici')) : loaded.default!;
  // headersTimeout and bodyTimeout are idle timeouts per attempt; the overall deadline of a
  // call is enforced above this layer. undici runs these on coarse timers (about 1 s
  // resolution), so a sub-second --timeout fires after roughly a second.
  const options = {
    connect: { timeout: CONNECT_TIMEOUT_MS },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  };
  const pools = new Map<string, Dispatcher>();
  const proxied = proxy
    ? new EnvHttpProxyAgent({
        ...options,
        httpProxy: env.HTTP_PROXY ?? env.http_proxy,
        httpsProxy: env.HTTPS_PROXY ?? env.https_proxy,
        noProxy: env.NO_PROXY ?? env.no_proxy,
      })
    : undefined;
  return {
    poolFor(origin) {
      let pool = pools.get(origin);
      if (!pool) {
        const limit = connections();
        pool = new Pool(origin, limit === undefined ? options : { ...options, connections: limit });
        pools.set(origin, pool);
      }
      return pool;
    },
    proxied,
    async close() {
      await Promise.all([...[...pools.values()].map((pool) => pool.close()), proxied?.close()]);
    },
  };
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
