// The connections: one undici dispatcher per client. An Agent when calls go direct; undici's
// EnvHttpProxyAgent when the environment names a proxy (it then applies NO_PROXY per call).
// From undici's own modules rather than its entry point: a one-request command loads only these.

import type { ProxySettings } from './proxy-env.js';
import { Agent, type Dispatcher, EnvHttpProxyAgent } from './undici-parts.js';

export const CONNECT_TIMEOUT_MS = 10_000;

export interface TransportOptions {
  /** Idle timeout of one attempt, for the headers and then between chunks of the body. */
  timeoutMs: number;
  /** How long a connection may take to open. */
  connectMs: number;
  /** The proxies the environment names (none for the in-process sandbox), read once by the client. */
  proxies: ProxySettings;
}

export function createDispatcher({ timeoutMs, connectMs, proxies }: TransportOptions): Dispatcher {
  const common = {
    connect: { timeout: connectMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  };
  if (!proxies.httpProxy && !proxies.httpsProxy) return new Agent(common);
  // The values are passed even when unset (as ""), so that undici never reads process.env
  // behind an `env` given to the client.
  return new EnvHttpProxyAgent({
    ...common,
    httpProxy: proxies.httpProxy ?? '',
    httpsProxy: proxies.httpsProxy ?? '',
    noProxy: proxies.noProxy ?? '',
    // An http:// service is reached with an absolute-URI request to the proxy, as curl does,
    // not through a CONNECT tunnel, which many proxies refuse to any port but 443 (squid's
    // default). https:// is always tunnelled.
    proxyTunnel: false,
  });
}
