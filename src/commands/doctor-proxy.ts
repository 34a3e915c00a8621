// The proxy check of `company-data doctor`: which proxy variables are set and whether calls to the
// base URL go through them. It reads them with src/http/proxy-env.ts, the rule the client hands
// to undici (docs/contract.md, "Proxies"), so what it reports is what the calls do.
import { bypassedByNoProxy, proxySettings, redactProxy } from '../http/proxy-env.js';
import { isLoopbackHost } from '../http/target.js';
import type { Check } from './doctor-checks.js';

const VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];

export interface ProxyRoute {
  check: Check;
  /** Said with a failed reachability check when calls go through a proxy. */
  note?: string;
}

const pass = (message: string): ProxyRoute => ({ check: { name: 'proxy', status: 'pass', message } });

/** `sandbox`: the base URL is the in-process sandbox, which the client always reaches directly. */
export function proxyCheck(
  env: NodeJS.ProcessEnv,
  baseUrl: string | undefined,
  { sandbox = false }: { sandbox?: boolean } = {},
): ProxyRoute {
  const set = VARIABLES.filter((name) => env[name]);
  const shown = set.map(
    (name) => `${name}=${name.toLowerCase().includes('no_proxy') ? env[name] : redactProxy(env[name]!)}`,
  );
  const settings = proxySettings(env);
  if (!settings.httpsProxy && !settings.httpProxy) {
    const extra = shown.length > 0 ? ` (${shown.join(', ')} has no effect without a proxy)` : '';
    return pass(`none: direct connections${extra}`);
  }
  const listed = shown.join(', ');
  if (sandbox) return pass(`${listed}; the in-process sandbox is reached directly`);
  let url: URL | undefined;
  try {
    url = baseUrl ? new URL(baseUrl) : undefined;
  } catch {
    url = undefined;
  }
  if (!url) return pass(listed);
  // https falls back to the HTTP proxy; plain http uses HTTP_PROXY only.
  const proxy = url.protocol === 'https:' ? (settings.httpsProxy ?? settings.httpProxy) : settings.httpProxy;
  if (!proxy) return pass(`${listed}; ${url.host} (http) is not proxied: direct`);
  try {
    new URL(proxy);
  } catch {
    return {
      check: {
        name: 'proxy',
        status: 'fail',
        message: `${listed}: the proxy "${redactProxy(proxy)}" is not a URL`,
        fix: 'Set the proxy variable to a URL such as http://proxy.example.com:3128, or unset it.',
        code: 'config_error',
        exitCode: 2,
      },
    };
  }
  if (bypassedByNoProxy(url, settings.noProxy ?? ''))
    return pass(`${listed}; ${url.host} is in NO_PROXY: direct`);
  // Loopback is proxied like any host (as curl and undici do); the proxy then reaches its own.
  const loopback = isLoopbackHost(url.hostname)
    ? " (loopback too: the proxy reaches its own loopback, not this machine's)"
    : '';
  return {
    check: {
      name: 'proxy',
      status: 'pass',
      message: `${listed}; ${url.host} goes through ${redactProxy(proxy)}${loopback}`,
    },
    note: `Calls go through the proxy ${redactProxy(proxy)}: check it, or add ${url.hostname} to NO_PROXY.`,
  };
}
