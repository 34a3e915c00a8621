// Set-up mistakes are named, with their fix, and never retried: a certificate this machine does
// not trust (self-signed, expired), a proxy that wants credentials, a proxy that is not there, a
// server that refuses HTTP/1.1 (HTTP/2 only, over TLS or in clear text). Each runs main() in this
// process against a real loopback server, compares the whole stderr, and counts the connections
// the server or proxy saw: one attempt, although --retries allows four.
//
// The certificates that must be trusted to reach the check at issue (a host name that does not
// match) are in test/e2e/https.test.ts: NODE_EXTRA_CA_CERTS is read when a process starts.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { createServer as createH2cServer, createSecureServer, type Http2Server } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ForwardProxy, startForwardProxy } from '../helpers/forward-proxy.js';
import { runInProcess } from '../helpers/in-process.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';
import { cannotRunHere } from '../helpers/skips.js';

const TLS = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
const KEY = readFileSync(join(TLS, 'key.pem'));
const CERT = readFileSync(join(TLS, 'cert.pem'));

const CERT_HINT =
  'If the service, or a proxy that inspects TLS, uses a private certificate authority, trust it with NODE_EXTRA_CA_CERTS=/path/to/ca.pem (an expired certificate, or one for another host, must be fixed on the server); --allow-insecure-http is not the fix, and certificate checks always stay on.';
const PROXY_AUTH_HINT =
  "Put the proxy's user name and password in the proxy URL, as in HTTPS_PROXY=http://user:password@proxy.example.com:3128 (percent-encode any @, : or / in them).";
const PROXY_DOWN_HINT =
  'Start the proxy, correct the proxy variable, or unset it (or list the service in NO_PROXY) to connect directly.';
const HTTP1_HINT =
  "Point --base-url at an address that accepts HTTP/1.1 (the service's documented URL), or have the server accept HTTP/1.1 too.";

let home: string;
let sandbox: SandboxHandle;
let expiredPair: { key: Buffer; cert: Buffer } | undefined;
const servers: Array<Server | HttpServer | Http2Server> = [];

/** An expired certificate for 127.0.0.1, made with openssl (undefined when openssl is missing). */
function makeExpiredCertificate(dir: string): { key: Buffer; cert: Buffer } | undefined {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  // `openssl req -days` refuses a past end date; `openssl ca` takes any start and end.
  const ca = join(dir, 'expired-ca');
  mkdirSync(ca);
  writeFileSync(join(ca, 'index.txt'), '');
  writeFileSync(join(ca, 'serial'), '01\n');
  writeFileSync(
    join(ca, 'ca.cnf'),
    [
      '[ca]',
      'default_ca = expired',
      '[expired]',
      'database = index.txt',
      'new_certs_dir = .',
      'serial = serial',
      'default_md = sha256',
      'policy = any',
      'x509_extensions = ext',
      'unique_subject = no',
      '[any]',
      'commonName = supplied',
      '[ext]',
      'basicConstraints = critical,CA:TRUE',
      'subjectAltName = IP:127.0.0.1',
      '',
    ].join('\n'),
  );
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: ca, stdio: 'ignore' });
  const key = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout key.pem';
  run(`req -new ${key} -out req.csr -subj /CN=127.0.0.1`.split(' '));
  const dates = '-startdate 20200101000000Z -enddate 20200102000000Z -notext';
  run(`ca -batch -selfsign -config ca.cnf -keyfile key.pem -in req.csr ${dates} -out cert.pem`.split(' '));
  return { key: readFileSync(join(ca, 'key.pem')), cert: readFileSync(join(ca, 'cert.pem')) };
}

interface Listening {
  url: string;
  host: string;
  /** TCP connections accepted so far. */
  connections(): number;
}

async function listen(
  server: Server | HttpServer | Http2Server,
  scheme: 'http' | 'https',
): Promise<Listening> {
  let connections = 0;
  server.on('connection', () => {
    connections++;
  });
  // A refused handshake is the point of these servers, not an error of theirs.
  server.on('tlsClientError', () => {});
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: `${scheme}://${host}`, host, connections: () => connections };
}

/** A loopback port nothing listens on (free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'cd-setup-'));
  sandbox = await startTestSandbox({ companies: 200 });
  expiredPair = makeExpiredCertificate(home);
});

afterAll(async () => {
  for (const server of servers) {
    (server as HttpServer).closeAllConnections?.();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await sandbox?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** main() on a pretend terminal, with a private config and cache and fast retries. */
async function run(argv: string[], env: Record<string, string> = {}, stderrTTY = true) {
  const dir = mkdtempSync(join(home, 'run-'));
  const result = await runInProcess(argv, {
    tty: true,
    stderrTTY,
    env: {
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      COMPANY_DATA_RETRY_BASE_MS: '1',
      NO_COLOR: '1',
      ...env,
    },
  });
  return { ...result, dir };
}

const lines = (...text: string[]) => `${text.join('\n')}\n`;

describe('a certificate this machine does not trust', () => {
  it('self-signed: named, NODE_EXTRA_CA_CERTS suggested, exit 2, one attempt', async () => {
    const server = await listen(createHttpsServer({ key: KEY, cert: CERT }), 'https');
    const r = await run(['--base-url', server.url, '--retries', '3', 'me']);
    expect(r.stderr).toBe(
      lines(
        'error: Untrusted certificate (untrusted_certificate)',
        `  The certificate of ${server.host} is not signed by an authority this machine trusts (DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate).`,
        `  ${CERT_HINT}`,
      ),
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(server.connections()).toBe(1);
  });

  it('expired: named as expired, exit 2, one attempt', async (t) => {
    const missing = expiredPair ? undefined : 'openssl is not installed: no expired certificate can be made';
    if (cannotRunHere('openssl', missing)) t.skip(missing);
    const server = await listen(createHttpsServer(expiredPair!), 'https');
    // stderr not a terminal: -o json makes the failure one JSON line (stderr follows stderr).
    const r = await run(['--base-url', server.url, '--retries', '3', '-o', 'json', 'me'], {}, false);
    expect(JSON.parse(r.stderr)).toEqual({
      code: 'untrusted_certificate',
      status: 0,
      title: 'Untrusted certificate',
      detail: `The certificate of ${server.host} has expired (CERT_HAS_EXPIRED); the server must renew it, unless this machine's clock is wrong.`,
      retryable: false,
      hint: CERT_HINT,
    });
    expect(r.code).toBe(2);
    expect(server.connections()).toBe(1);
  });

  it('through a proxy: the proxy is named, as one that may present its own certificate', async () => {
    const server = await listen(createHttpsServer({ key: KEY, cert: CERT }), 'https');
    const proxy = await startForwardProxy();
    try {
      const r = await run(['--base-url', server.url, '--retries', '3', 'me'], { HTTPS_PROXY: proxy.url });
      expect(r.stderr).toBe(
        lines(
          'error: Untrusted certificate (untrusted_certificate)',
          `  The certificate of ${server.host} is not signed by an authority this machine trusts (DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate). It came through the proxy ${new URL(proxy.url).host} (from HTTPS_PROXY), which presents a certificate of its own if it inspects TLS.`,
          `  ${CERT_HINT}`,
        ),
      );
      expect(r.code).toBe(2);
      expect(proxy.tunnels).toEqual([server.host]);
    } finally {
      await proxy.close();
    }
  });
});

describe('a proxy that wants credentials (407)', () => {
  let proxy: ForwardProxy;
  let tls: Listening;
  beforeAll(async () => {
    proxy = await startForwardProxy({ credentials: 'alice:s3cret-pw' });
    tls = await listen(createHttpsServer({ key: KEY, cert: CERT }), 'https');
  });
  afterAll(() => proxy?.close());

  const proxyHost = () => new URL(proxy.url).host;
  const withCredentials = (credentials: string) => proxy.url.replace('http://', `http://${credentials}@`);

  it('none given, an http:// service: says so and how to give them, exit 2, one attempt', async () => {
    const before = proxy.refused.length;
    const r = await run(['--base-url', sandbox.url, '--retries', '3', 'me'], { HTTP_PROXY: proxy.url });
    expect(r.stderr).toBe(
      lines(
        'error: Proxy authentication required (proxy_auth_required)',
        `  The proxy ${proxyHost()} (from HTTP_PROXY) asks for a user name and password (HTTP 407), and HTTP_PROXY gives none.`,
        `  ${PROXY_AUTH_HINT}`,
      ),
    );
    expect(r.code).toBe(2);
    // One request (undici may open a second connection after the 407, but sends nothing on it).
    expect(proxy.refused.slice(before)).toEqual([`GET ${sandbox.url.replace(/\/$/, '')}/api/me`]);
    expect(proxy.forwarded).toEqual([]);
  });

  it('wrong ones, an https:// service (CONNECT): refused, the password never printed', async () => {
    const before = proxy.connections();
    const r = await run(['--base-url', tls.url, '--retries', '3', 'me'], {
      https_proxy: withCredentials('alice:wrong-pw%40x'),
    });
    expect(r.stderr).toBe(
      lines(
        'error: Proxy authentication required (proxy_auth_required)',
        `  The proxy ${proxyHost()} (from https_proxy) refused the user name and password in https_proxy (HTTP 407).`,
        `  ${PROXY_AUTH_HINT}`,
      ),
    );
    expect(r.code).toBe(2);
    expect(proxy.connections() - before).toBe(1);
    expect(proxy.refused.at(-1)).toBe(`CONNECT ${tls.host}`);
    expect(r.stderr).not.toContain('wrong-pw');
  });

  it('the right ones in the proxy URL: the call goes through', async () => {
    const r = await run(['--base-url', sandbox.url, '-o', 'json', 'me'], {
      HTTP_PROXY: withCredentials('alice:s3cret-pw'),
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ key_name: 'full' });
  });

  it('doctor fails the reachable check with the same problem and fix, exit 2', async () => {
    const r = await run(['--base-url', sandbox.url, 'doctor'], { HTTP_PROXY: proxy.url });
    expect(r.stdout.split('\n').slice(4, 6)).toEqual([
      `✗ reachable: Proxy authentication required (proxy_auth_required): The proxy ${proxyHost()} (from HTTP_PROXY) asks for a user name and password (HTTP 407), and HTTP_PROXY gives none.`,
      `    fix: ${PROXY_AUTH_HINT}`,
    ]);
    expect(r.code).toBe(2);
  });
});

describe('a proxy that refuses to tunnel (CONNECT answered 403, as a stock squid does but for port 443)', () => {
  const REFUSED_HINT =
    "Have the proxy allow CONNECT to the service's host and port (many allow port 443 only), correct the proxy variable, or list the service's host in NO_PROXY to connect directly.";

  it('names the proxy, its variable and the status, points to NO_PROXY, exit 2, one attempt', async () => {
    const tls = await listen(createHttpsServer({ key: KEY, cert: CERT }), 'https');
    const proxy = await startForwardProxy({ refuseConnect: 403 });
    try {
      const host = new URL(proxy.url).host;
      const r = await run(['--base-url', tls.url, '--retries', '3', 'me'], { HTTPS_PROXY: proxy.url });
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: lines(
          'error: Proxy refused the tunnel (proxy_refused)',
          `  The proxy ${host} (from HTTPS_PROXY) answered HTTP 403 to CONNECT ${tls.host}: it will not open a tunnel to the service, so the service was not reached.`,
          `  ${REFUSED_HINT}`,
        ),
      });
      expect(proxy.refused).toEqual([`CONNECT ${tls.host}`]);
      expect(tls.connections()).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it('doctor fails the reachable check with the same problem and fix, exit 2', async () => {
    const tls = await listen(createHttpsServer({ key: KEY, cert: CERT }), 'https');
    const proxy = await startForwardProxy({ refuseConnect: 403 });
    try {
      const host = new URL(proxy.url).host;
      const r = await run(['--base-url', tls.url, 'doctor'], { https_proxy: proxy.url });
      expect(
        r.stdout
          .split('\n')
          .filter((line) => /^(✗| {4}fix)/.test(line))
          .slice(0, 2),
      ).toEqual([
        `✗ reachable: Proxy refused the tunnel (proxy_refused): The proxy ${host} (from https_proxy) answered HTTP 403 to CONNECT ${tls.host}: it will not open a tunnel to the service, so the service was not reached.`,
        `    fix: ${REFUSED_HINT}`,
      ]);
      expect(r.code).toBe(2);
    } finally {
      await proxy.close();
    }
  });
});

describe('a proxy that is not there', () => {
  it('named with its address and variable, not blamed on the service, exit 2, one attempt', async () => {
    const port = await closedPort();
    const r = await run(['-v', '--base-url', sandbox.url, '--retries', '3', 'me'], {
      HTTP_PROXY: `http://bob:hunter2@127.0.0.1:${port}`,
    });
    const said = r.stderr.split('\n').filter((line) => !line.startsWith('http: '));
    expect(said.join('\n')).toBe(
      lines(
        'error: Proxy unreachable (proxy_unreachable)',
        `  The proxy 127.0.0.1:${port} (from HTTP_PROXY) refused the connection: nothing listens there, so ${new URL(sandbox.url).host} was not reached.`,
        `  ${PROXY_DOWN_HINT}`,
      ),
    );
    expect(r.code).toBe(2);
    // One attempt, no retry.
    expect(r.stderr.match(/\(attempt \d+\/4\)/g)).toEqual(['(attempt 1/4)']);
    expect(r.stderr).not.toContain('retrying');
    expect(r.stderr).not.toContain('hunter2');
  });

  it('doctor fails the reachable check naming the proxy, exit 2', async () => {
    const port = await closedPort();
    const down = await run(['--base-url', sandbox.url, 'doctor'], { HTTP_PROXY: `http://127.0.0.1:${port}` });
    expect(down.stdout.split('\n').slice(3, 6)).toEqual([
      `✓ proxy: HTTP_PROXY=http://127.0.0.1:${port}; ${new URL(sandbox.url).host} goes through http://127.0.0.1:${port} (loopback too: the proxy reaches its own loopback, not this machine's)`,
      `✗ reachable: Proxy unreachable (proxy_unreachable): The proxy 127.0.0.1:${port} (from HTTP_PROXY) refused the connection: nothing listens there, so ${new URL(sandbox.url).host} was not reached.`,
      `    fix: ${PROXY_DOWN_HINT}`,
    ]);
    expect(down.code).toBe(2);
  });
});

describe('a server that refuses HTTP/1.1', () => {
  it('HTTP/2 only over TLS (no ALPN protocol in common): named, exit 2, one attempt', async () => {
    const server = await listen(createSecureServer({ key: KEY, cert: CERT, allowHTTP1: false }), 'https');
    const r = await run(['--base-url', server.url, '--retries', '3', 'me']);
    expect(r.stderr).toBe(
      lines(
        'error: HTTP/1.1 refused (http1_refused)',
        `  ${server.host} refused HTTP/1.1 while setting up TLS (no application protocol in common, ALPN): it speaks HTTP/2 only, and company-data speaks HTTP/1.1.`,
        `  ${HTTP1_HINT}`,
      ),
    );
    expect(r.code).toBe(2);
    expect(server.connections()).toBe(1);
  });

  it('HTTP/2 only in clear text (h2c): named, exit 2, one attempt', async () => {
    const server = await listen(createH2cServer(), 'http');
    const r = await run(['--base-url', server.url, '--retries', '3', 'me']);
    expect(r.stderr).toBe(
      lines(
        'error: HTTP/1.1 refused (http1_refused)',
        `  ${server.host} answered an HTTP/1.1 request with HTTP/2 frames: it speaks HTTP/2 only (h2c), and company-data speaks HTTP/1.1.`,
        `  ${HTTP1_HINT}`,
      ),
    );
    expect(r.code).toBe(2);
    expect(server.connections()).toBe(1);
  });

  it('doctor fails the reachable check with the same problem, exit 2', async () => {
    const server = await listen(createSecureServer({ key: KEY, cert: CERT, allowHTTP1: false }), 'https');
    const r = await run(['--base-url', server.url, 'doctor']);
    expect(r.stdout.split('\n').slice(4, 6)).toEqual([
      `✗ reachable: HTTP/1.1 refused (http1_refused): ${server.host} refused HTTP/1.1 while setting up TLS (no application protocol in common, ALPN): it speaks HTTP/2 only, and company-data speaks HTTP/1.1.`,
      `    fix: ${HTTP1_HINT}`,
    ]);
    expect(r.code).toBe(2);
    expect(server.connections()).toBe(1);
  });
});

describe('doctor on an untrusted certificate', () => {
  it('the whole report: reachable fails with the certificate problem, exit 2, one attempt', async () => {
    const server = await listen(createHttpsServer({ key: KEY, cert: CERT }), 'https');
    const r = await run(['--base-url', server.url, 'doctor']);
    expect(r.stdout.replaceAll(r.dir, 'DIR')).toBe(
      lines(
        '✓ config file: none at DIR/config/company-data/config.json (optional)',
        "✓ profile: default (none chosen: the config file's top-level settings)",
        `✓ base URL: ${server.url} (from flag)`,
        '✓ proxy: none: direct connections',
        `✗ reachable: Untrusted certificate (untrusted_certificate): The certificate of ${server.host} is not signed by an authority this machine trusts (DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate).`,
        `    fix: ${CERT_HINT}`,
        '- contract: not checked: the service did not answer',
        '- clock: not checked: the service did not answer',
        '- key: present (from environment); not checked: the service did not answer',
        '- auth header: not checked: the service did not answer',
      ),
    );
    expect(r.stderr).toBe(lines('1 check failed.'));
    expect(r.code).toBe(2);
    expect(server.connections()).toBe(1);
  });
});
