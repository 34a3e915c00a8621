// Set-up mistakes on the way to the service: a certificate that fails verification, a proxy that
// wants credentials, refuses a tunnel or cannot be reached, a server that refuses HTTP/1.1. No retry can fix them
// and the user can, so each is named with its cause, tried once, and exits 2 (docs/contract.md,
// "Set-up mistakes"). Only undici's and Node's errors are read here; src/http/problems.ts asks.
import { Problem } from '../problem.js';
import type { ErrorContext } from './problems.js';
import { proxyHasCredentials, proxyHost } from './proxy-env.js';

/** OpenSSL's names for a certificate that failed verification, and Node's for a wrong host. */
const CERT_ISSUER = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'INVALID_CA',
]);
const CERT_HOST = new Set(['ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH']);
// Alerts from the other side (ERR_SSL_..._ALERT_BAD_CERTIFICATE: it wanted a client certificate)
// are not about the server's certificate, so only verification codes are matched.
const isCertificateCode = (code: string) =>
  !code.startsWith('ERR_SSL_') && (CERT_HOST.has(code) || /CERT|^UNABLE_TO_|^INVALID_CA$/.test(code));

/**
 * The errors that mean no connection could be made: nothing was sent. Through a proxy, the proxy
 * is the only host the client connects to, so these name it (proxy_unreachable).
 */
export const CONNECTION_NOT_MADE: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** An HTTP/2 frame header of a SETTINGS frame on stream 0: how an h2c server opens a connection. */
function isHttp2Settings(data: string | undefined): boolean {
  return (
    data !== undefined && data.length >= 9 && data.charCodeAt(3) === 4 && /^\0{4}$/.test(data.slice(5, 9))
  );
}

/** The first error in the chain (causes, aggregates) that `test` accepts. */
function findError(error: unknown, test: (e: { name?: unknown; data?: unknown }) => boolean) {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const candidate = current as { name?: unknown; data?: unknown; errors?: unknown[]; cause?: unknown };
    if (test(candidate)) return candidate;
    current =
      Array.isArray(candidate.errors) && candidate.errors.length > 0 ? candidate.errors[0] : candidate.cause;
  }
  return undefined;
}

/**
 * The set-up mistake behind a transport error, or undefined when it is none. `code` is the
 * error's code (found through causes) and `message` its one-line, redacted message.
 */
export function setupProblem(
  error: unknown,
  code: string | undefined,
  message: string,
  ctx: ErrorContext,
): Problem | undefined {
  const make = (problemCode: string, title: string, detail: string) =>
    new Problem({ code: problemCode, title, detail, retryable: false, source: 'network', cause: code });
  // Named by host:port and variable: the proxy URL itself may hold a password.
  const proxy = ctx.proxy && {
    host: proxyHost(ctx.proxy.url),
    variable: ctx.proxy.variable,
    hasCredentials: proxyHasCredentials(ctx.proxy.url),
  };

  if (code && isCertificateCode(code)) {
    const through = proxy
      ? ` It came through the proxy ${proxy.host} (from ${proxy.variable}), which presents a certificate of its own if it inspects TLS.`
      : '';
    return make(
      'untrusted_certificate',
      'Untrusted certificate',
      `${certificateCause(code, message, ctx.target)}${through}`,
    );
  }

  if (code && /NO_APPLICATION_PROTOCOL$/.test(code))
    return make(
      'http1_refused',
      'HTTP/1.1 refused',
      `${ctx.target} refused HTTP/1.1 while setting up TLS (no application protocol in common, ALPN): it speaks HTTP/2 only, and company-data speaks HTTP/1.1.`,
    );
  if (findError(error, (e) => e.name === 'HTTPParserError' && isHttp2Settings(e.data as string | undefined)))
    return make(
      'http1_refused',
      'HTTP/1.1 refused',
      `${ctx.target} answered an HTTP/1.1 request with HTTP/2 frames: it speaks HTTP/2 only (h2c), and company-data speaks HTTP/1.1.`,
    );

  // undici's words for a 407: "Proxy Authentication Required (407)" when forwarding a plain http
  // request, "Proxy response (407) !== 200 when HTTP Tunneling" for a CONNECT.
  if ((code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_ABORTED') && /proxy[^(]*\(407\)/i.test(message)) {
    let detail = 'A proxy on the way asks for a user name and password (HTTP 407).';
    if (proxy?.hasCredentials)
      detail = `The proxy ${proxy.host} (from ${proxy.variable}) refused the user name and password in ${proxy.variable} (HTTP 407).`;
    else if (proxy)
      detail = `The proxy ${proxy.host} (from ${proxy.variable}) asks for a user name and password (HTTP 407), and ${proxy.variable} gives none.`;
    return make('proxy_auth_required', 'Proxy authentication required', detail);
  }

  // Any other answer to a CONNECT: the proxy will not tunnel to the service (a stock squid allows
  // CONNECT to port 443 only). undici: "Proxy response (403) !== 200 when HTTP Tunneling".
  const tunnel = /proxy response \((\d{3})\) !== 200 when HTTP Tunneling/i.exec(message);
  if ((code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_ABORTED') && tunnel) {
    const who = proxy ? `The proxy ${proxy.host} (from ${proxy.variable})` : 'A proxy on the way';
    return make(
      'proxy_refused',
      'Proxy refused the tunnel',
      `${who} answered HTTP ${tunnel[1]} to CONNECT ${ctx.target}: it will not open a tunnel to the service, so the service was not reached.`,
    );
  }

  // Through a proxy, the only connection this client opens is to the proxy: a failure to open
  // one is the proxy's, whatever the service is doing.
  if (proxy && code && CONNECTION_NOT_MADE.has(code)) {
    const from = `The proxy ${proxy.host} (from ${proxy.variable})`;
    const detail =
      code === 'ECONNREFUSED'
        ? `${from} refused the connection: nothing listens there, so ${ctx.target} was not reached.`
        : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? `${from} cannot be found: its host name does not resolve (${code}), so ${ctx.target} was not reached.`
          : `${from} cannot be reached (${code}), so ${ctx.target} was not reached.`;
    return make('proxy_unreachable', 'Proxy unreachable', detail);
  }
  return undefined;
}

function certificateCause(code: string, message: string, target: string): string {
  const of = `The certificate of ${target}`;
  if (code === 'CERT_HAS_EXPIRED')
    return `${of} has expired (${code}); the server must renew it, unless this machine's clock is wrong.`;
  if (code === 'CERT_NOT_YET_VALID') return `${of} is not valid yet (${code}); check this machine's clock.`;
  if (CERT_HOST.has(code)) return `${of} is for another host (${code}: ${message.trim()}); check --base-url.`;
  if (CERT_ISSUER.has(code))
    return `${of} is not signed by an authority this machine trusts (${code}: ${message}).`;
  return `${of} was refused (${code}: ${message}).`;
}
