// The proxy check of `company-data doctor`: which proxy variables are set and whether calls to the
// base URL go through them. It mirrors src/http/transport.ts (loopback always direct; upper-case
// names first) and undici's EnvHttpProxyAgent (NO_PROXY matching), which do the real routing.
import { isLoopbackHost } from '../http/target.js';
import type { Check } from './doctor-checks.js';

const VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];

/** A proxy URL without its password or user name: they are secrets like the key. */
export function redactProxy(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.username || url.password) {
      url.username = '***';
      url.password = '';
    }
    return url.toString().replace(/\/$/, '');
  } catch {
    return raw.includes('@') ? `***@${raw.slice(raw.lastIndexOf('@') + 1)}` : raw;
  }
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** undici's rule: an entry matches the host itself or any subdomain; `*` matches everything. */
export function bypassedByNoProxy(url: URL, noProxy: string): boolean {
  const value = noProxy.trim();
  if (value === '') return false;
  if (value === '*') return true;
  const host = url.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number.parseInt(url.port, 10) || DEFAULT_PORTS[url.protocol] || 0;
  for (const entry of value.split(/[,\s]/)) {
    if (!entry) continue;
    const parsed = entry.match(/^(.+):(\d+)$/);
    const name = (parsed ? parsed[1] : entry).replace(/^\*?\./, '').toLowerCase();
    const entryPort = parsed ? Number.parseInt(parsed[2], 10) : 0;
    if (entryPort && entryPort !== port) continue;
    if (host === name || host.endsWith(`.${name}`)) return true;
  }
  return false;
}

export interface ProxyRoute {
  check: Check;
  /** Said with a failed reachability check when calls go through a proxy. */
  note?: string;
}

export function proxyCheck(env: NodeJS.ProcessEnv, baseUrl: string | undefined): ProxyRoute {
  const set = VARIABLES.filter((name) => env[name]);
  const shown = set.map(
    (name) => `${name}=${name.toLowerCase().includes('no_proxy') ? env[name] : redactProxy(env[name]!)}`,
  );
  const https = env.HTTPS_PROXY ?? env.https_proxy;
  const http = env.HTTP_PROXY ?? env.http_proxy;
  if (!https && !http) {
    const extra = shown.length > 0 ? ` (${shown.join(', ')} has no effect without a proxy)` : '';
    return { check: { name: 'proxy', status: 'pass', message: `none: direct connections${extra}` } };
  }
  const listed = shown.join(', ');
  let url: URL | undefined;
  try {
    url = baseUrl ? new URL(baseUrl) : undefined;
  } catch {
    url = undefined;
  }
  if (!url) return { check: { name: 'proxy', status: 'pass', message: `${listed}` } };
  if (isLoopbackHost(url.hostname))
    return {
      check: { name: 'proxy', status: 'pass', message: `${listed}; ${url.host} is loopback: direct` },
    };
  // undici: https falls back to the HTTP proxy; plain http uses HTTP_PROXY only.
  const proxy = url.protocol === 'https:' ? (https ?? http) : http;
  if (!proxy)
    return {
      check: {
        name: 'proxy',
        status: 'pass',
        message: `${listed}; ${url.host} (http) is not proxied: direct`,
      },
    };
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
  if (bypassedByNoProxy(url, env.NO_PROXY ?? env.no_proxy ?? ''))
    return {
      check: { name: 'proxy', status: 'pass', message: `${listed}; ${url.host} is in NO_PROXY: direct` },
    };
  return {
    check: {
      name: 'proxy',
      status: 'pass',
      message: `${listed}; ${url.host} goes through ${redactProxy(proxy)}`,
    },
    note: `Calls go through the proxy ${redactProxy(proxy)}: check it, or add ${url.hostname} to NO_PROXY.`,
  };
}
