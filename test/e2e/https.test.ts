// The real service is HTTPS. One-shot calls and a batch's are run through a TLS front (a test
// certificate for 127.0.0.1) to the sandbox: the CA named by NODE_EXTRA_CA_CERTS (read by Node at
// the start of a process) is trusted, a trusted certificate for another host is named as such
// (exit 2, not retried), a batch's later connections resume the TLS session of its first, and
// through a proxy the calls go in a CONNECT tunnel. An unknown (self-signed) certificate, which
// needs no NODE_EXTRA_CA_CERTS, in-process: test/commands/setup-mistakes.test.ts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startForwardProxy } from '../helpers/forward-proxy.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';
import { forwardTo } from '../helpers/server.js';
import { cannotRunHere } from '../helpers/skips.js';

const TLS = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
const CA = join(TLS, 'cert.pem');

let sandbox: SandboxHandle;
let front: Server;
let base: string;
let home: string;
/** Each TLS connection made, and whether it resumed an earlier session. */
const handshakes: boolean[] = [];

beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 200 });
  front = createServer({ key: readFileSync(join(TLS, 'key.pem')), cert: readFileSync(CA) }, (req, res) =>
    forwardTo(sandbox.url, req, res),
  );
  front.on('secureConnection', (socket: TLSSocket) => handshakes.push(socket.isSessionReused()));
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(front.address() as AddressInfo).port}`;
  home = mkdtempSync(join(tmpdir(), 'cd-e2e-https-'));
});

afterAll(async () => {
  front?.closeAllConnections();
  await new Promise<void>((resolve) => (front ? front.close(() => resolve()) : resolve()));
  await sandbox?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

function env(extra: Record<string, string | undefined> = {}) {
  const dir = mkdtempSync(join(home, 'run-'));
  return {
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    COMPANY_DATA_API_KEY: sandbox.keys.full,
    COMPANY_DATA_RETRY_BASE_MS: '1',
    ...extra,
  };
}

describe('over HTTPS', () => {
  it('a one-shot command trusts the CA given by NODE_EXTRA_CA_CERTS', async () => {
    const result = await runCli(['--base-url', base, '-o', 'json', 'me'], {
      env: env({ NODE_EXTRA_CA_CERTS: CA }),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ key_name: 'full' });
  });

  it('a batch trusts it too, and its later connections resume an earlier TLS session', async () => {
    const input = join(home, 'in.csv');
    const domains = Array.from({ length: 12 }, (_, i) => `missing-${i}.example`);
    writeFileSync(input, ['domain', 'acme-shoes.com', ...domains, ''].join('\n'));
    const output = join(home, 'out.csv');
    const before = handshakes.length;
    const result = await runCli(
      ['--quiet', '--base-url', base, 'enrich', '--input', input, '--output', output, '--concurrency', '4'],
      { env: env({ NODE_EXTRA_CA_CERTS: CA }) },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const rows = readFileSync(output, 'utf8').trim().split('\n');
    expect(rows).toHaveLength(14);
    expect(rows[1]).toMatch(/^acme-shoes\.com,true,/);
    expect(rows[2]).toMatch(/^missing-0\.example,false,/);
    // The two catalogs' calls (the cache is empty) open the first connections, at once; the
    // lookups' others resume a session of theirs.
    const made = handshakes.slice(before);
    expect(made.filter((resumed) => !resumed).length).toBeLessThanOrEqual(2);
    expect(made.filter(Boolean).length).toBeGreaterThan(0);
  });

  it('through HTTPS_PROXY, a CONNECT tunnel carries every call', async () => {
    const proxy = await startForwardProxy();
    try {
      const result = await runCli(['--base-url', base, '-o', 'json', 'me'], {
        env: env({
          NODE_EXTRA_CA_CERTS: CA,
          HTTPS_PROXY: proxy.url,
          NO_PROXY: undefined,
          no_proxy: undefined,
        }),
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ key_name: 'full' });
      expect(proxy.tunnels).toEqual([new URL(base).host]);
      expect(proxy.forwarded).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('a trusted certificate for another host is named as such, exit 2, not retried', async (t) => {
    let missing: string | undefined;
    try {
      execFileSync('openssl', ['version'], { stdio: 'ignore' });
    } catch {
      missing = 'openssl is not installed: no certificate for another host can be made';
    }
    if (cannotRunHere('openssl', missing)) t.skip(missing);
    // Made here: a certificate authority for another name, trusted with NODE_EXTRA_CA_CERTS below.
    const dir = mkdtempSync(join(home, 'other-host-'));
    const key = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout key.pem';
    const name = '-subj /CN=other.invalid -addext subjectAltName=DNS:other.invalid';
    execFileSync(
      'openssl',
      `req -x509 ${key} -out cert.pem -days 2 ${name} -addext basicConstraints=critical,CA:TRUE`.split(' '),
      { cwd: dir, stdio: 'ignore' },
    );
    const other = createServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (_req, res) => res.end('{}'),
    );
    let connections = 0;
    other.on('connection', () => connections++);
    other.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const host = `127.0.0.1:${(other.address() as AddressInfo).port}`;
      const result = await runCli(['--base-url', `https://${host}`, '--retries', '3', '-o', 'json', 'me'], {
        env: env({ NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') }),
      });
      expect(result.code).toBe(2);
      expect(JSON.parse(result.stderr)).toMatchObject({
        code: 'untrusted_certificate',
        detail: `The certificate of ${host} is for another host (ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list:); check --base-url.`,
        retryable: false,
      });
      expect(connections).toBe(1);
    } finally {
      other.closeAllConnections();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });
});
