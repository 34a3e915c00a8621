// Where a call goes and whether the key may go with it. Every check here runs before any DNS
// lookup or connection, so a refused call sends nothing at all.
import { Problem } from '../problem.js';
import type { Config, RequestOptions } from '../types.js';
import { redactProxy } from './proxy-env.js';

/** 127.0.0.0/8, ::1 and localhost: traffic that never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  if (/^::ffff:127\.\d+\.\d+\.\d+$/.test(host)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function configProblem(detail: string): Problem {
  return new Problem({ code: 'config_error', title: 'Configuration error', detail, source: 'client' });
}

/** The parsed base URL, or a config_error that says how to set one. */
export function resolveBaseUrl(config: Config, redact: (text: string) => string = (t) => t): URL {
  const raw = config.baseUrl?.value?.trim();
  if (!raw) {
    const profile = config.profile?.value;
    // A named profile holding only a key: the top-level base_url is the default profile's own.
    const named =
      profile && profile !== 'default'
        ? ` The profile in force, "${profile}", has no base_url, and profiles inherit nothing from the config file's top-level settings: \`company-data --profile ${profile} config set base-url <url>\` gives it one.`
        : '';
    throw configProblem(
      `No service URL is configured: set --base-url or COMPANY_DATA_BASE_URL, or use --sandbox.${named}`,
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw configProblem(
      redact(`The base URL "${raw.slice(0, 200)}" is not a URL (expected https://host[/path]).`),
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw configProblem(`The base URL must start with https:// or http://, not ${url.protocol}//.`);
  if (url.username || url.password)
    throw configProblem('The base URL must not contain a user name or password.');
  return url;
}

/** Joins the base URL (which may carry a path prefix) with an /api/ path and the query. */
export function buildUrl(base: URL, path: string, query?: RequestOptions['query']): URL {
  const url = new URL(base.toString());
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  url.search = '';
  url.hash = '';
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined) continue;
    url.searchParams.append(name, String(value));
  }
  return url;
}

// Paths the URL parser would give back unchanged: no dot segments, nothing it percent-encodes.
const PLAIN_PATH = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;
const FORM_EXTRA = /[!'()~]/g;

/** A query value as application/x-www-form-urlencoded encodes it (what URLSearchParams does). */
function formEncode(value: string): string {
  return encodeURIComponent(value)
    .replaceAll('%20', '+')
    .replace(FORM_EXTRA, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The path and query of a call, as `buildUrl(base, path, query)` would give them, without
 * parsing a URL per call (a batch makes hundreds of thousands). Falls back to buildUrl for any
 * path or value the fast form might spell differently.
 */
export function pathAndQuery(base: URL, path: string, query?: RequestOptions['query']): string {
  const prefix = prefixOf(base);
  const tail = path.replace(LEADING_SLASHES, '');
  // A dot segment cannot straddle the prefix and the path: a slash always joins them.
  if (prefix === undefined || !PLAIN_PATH.test(tail) || DOT_SEGMENT.test(tail)) {
    const url = buildUrl(base, path, query);
    return `${url.pathname}${url.search}`;
  }
  let search = '';
  if (query) {
    try {
      for (const name in query) {
        const value = query[name];
        if (value === undefined) continue;
        search += `${search === '' ? '?' : '&'}${formEncode(name)}=${formEncode(String(value))}`;
      }
    } catch {
      // A lone surrogate: encodeURIComponent refuses it, URLSearchParams writes U+FFFD.
      const url = buildUrl(base, path, query);
      return `${url.pathname}${url.search}`;
    }
  }
  return `${prefix}/${tail}${search}`;
}

const LEADING_SLASHES = /^\/+/;
// The base URL's path without trailing slashes, or undefined when it needs the URL parser; worked
// out once per base URL (a client parses its base once), not per call.
const prefixes = new WeakMap<URL, string | undefined>();

function prefixOf(base: URL): string | undefined {
  if (prefixes.has(base)) return prefixes.get(base);
  const prefix = base.pathname.replace(/\/+$/, '');
  const plain = PLAIN_PATH.test(prefix) && !DOT_SEGMENT.test(prefix) ? prefix : undefined;
  prefixes.set(base, plain);
  return plain;
}

/**
 * For an authenticated call: the key to send, or the problem that stops the call. The key
 * never travels in clear text to another machine unless the user explicitly allowed it: a
 * loopback service reached through a proxy on another machine counts as another machine.
 */
export function keyFor(config: Config, url: URL, proxy?: string): string {
  const key = config.apiKey?.value;
  if (!key)
    throw new Problem({
      code: 'invalid_api_key',
      status: 401,
      title: 'No API key',
      detail: 'No API key configured.',
      source: 'client',
    });
  if (url.protocol !== 'http:' || config.allowInsecureHttp) return key;
  if (!isLoopbackHost(url.hostname))
    throw insecureHttp(`Refusing to send the API key over plain http:// to ${url.host}; nothing was sent.`);
  if (proxy !== undefined && !isLoopbackProxy(proxy))
    throw insecureHttp(
      `Refusing to send the API key over plain http:// to ${url.host} through the proxy ${redactProxy(proxy)}; nothing was sent. Add ${url.hostname} to NO_PROXY to reach it directly.`,
    );
  return key;
}

function insecureHttp(detail: string): Problem {
  return new Problem({ code: 'insecure_http', title: 'Insecure HTTP refused', detail, source: 'client' });
}

function isLoopbackProxy(proxy: string): boolean {
  try {
    return isLoopbackHost(new URL(proxy).hostname);
  } catch {
    return false;
  }
}

/** The headers that carry the key in the configured style. */
export function authHeaders(config: Config, key: string): Record<string, string> {
  return config.authHeader.value === 'x-api-key' ? { 'x-api-key': key } : { authorization: `Bearer ${key}` };
}
