// Which proxy a call goes through, read from the environment exactly as undici's
// EnvHttpProxyAgent reads it (src/http/transport.ts hands it these values; undici does the
// routing). The same answer serves the key's safety check (src/http/target.ts) and `doctor`.
//
// The rule (docs/contract.md, "Proxies"): lower-case names win over upper-case ones; an https://
// service goes through HTTPS_PROXY, else HTTP_PROXY; an http:// service through HTTP_PROXY only;
// NO_PROXY lists hosts (and their subdomains, optionally with a port) that go direct, `*` all of
// them. A loopback service is no exception: only NO_PROXY sends it direct. The in-process
// sandbox is, and never reads these (createClient's `direct`).

export interface ProxySettings {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
  /** The variable each proxy was read from (`https_proxy` or `HTTPS_PROXY`, say), for messages. */
  from?: { httpProxy?: string; httpsProxy?: string };
}

/** The proxy a call goes through, and the variable that named it. */
export interface ProxyRoute {
  url: string;
  variable: string;
}

// `??`, as undici: a lower-case variable set to "" hides the upper-case one.
const which = (env: NodeJS.ProcessEnv, name: string): string =>
  env[name] !== undefined ? name : name.toUpperCase();

export function proxySettings(env: NodeJS.ProcessEnv): ProxySettings {
  const http = which(env, 'http_proxy');
  const https = which(env, 'https_proxy');
  return {
    httpProxy: env[http] || undefined,
    httpsProxy: env[https] || undefined,
    noProxy: env.no_proxy ?? env.NO_PROXY,
    from: { httpProxy: http, httpsProxy: https },
  };
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

/** The proxy a call to `url` goes through, or undefined when it goes direct. */
export function proxyFor(url: URL, settings: ProxySettings): string | undefined {
  return proxyRoute(url, settings)?.url;
}

/** The proxy a call to `url` goes through and the variable it came from; undefined when direct. */
export function proxyRoute(url: URL, settings: ProxySettings): ProxyRoute | undefined {
  const key = url.protocol === 'https:' && settings.httpsProxy ? 'httpsProxy' : 'httpProxy';
  const proxy = settings[key];
  if (!proxy || bypassedByNoProxy(url, settings.noProxy ?? '')) return undefined;
  return {
    url: proxy,
    variable: settings.from?.[key] ?? (key === 'httpsProxy' ? 'HTTPS_PROXY' : 'HTTP_PROXY'),
  };
}

/** host:port of a proxy URL, without its user name or password. */
export function proxyHost(raw: string): string {
  try {
    const url = new URL(raw);
    return url.port ? url.host : `${url.host}:${DEFAULT_PORTS[url.protocol] ?? ''}`.replace(/:$/, '');
  } catch {
    return redactProxy(raw);
  }
}

/** Whether a proxy URL carries a user name or password. */
export function proxyHasCredentials(raw: string): boolean {
  try {
    const url = new URL(raw);
    return Boolean(url.username || url.password);
  } catch {
    return raw.includes('@');
  }
}

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
