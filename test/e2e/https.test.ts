// The real service is HTTPS. One-shot calls go over node:tls (src/http/wire.ts) and a batch's
// over undici, so both are run through a TLS front (a test certificate for 127.0.0.1) to the
// sandbox: the CA named by NODE_EXTRA_CA_CERTS is trusted by both, and an unknown certificate is
// a clear TLS failure.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';
import { forwardTo } from '../helpers/server.js';

const TLS = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
const CA = join(TLS, 'cert.pem');

let sandbox: SandboxHandle;
let front: Server;
let base: string;
let home: string;
/** Handshakes the client broke off (it did not trust the certificate). */
let refusedHandshakes = 0;

beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 200 });
  front = createServer({ key: readFileSync(join(TLS, 'key.pem')), cert: readFileSync(CA) }, (req, res) =>
    forwardTo(sandbox.url, req, res),
  );
  front.on('tlsClientError', () => {
    refusedHandshakes++;
  });
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

  it('a batch (undici) trusts it too', async () => {
    const input = join(home, 'in.csv');
    writeFileSync(input, 'domain\nacme-shoes.com\nmissing-domain.example\n');
    const output = join(home, 'out.csv');
    const result = await runCli(
      ['--quiet', '--base-url', base, 'enrich', '--input', input, '--output', output, '--fresh'],
      { env: env({ NODE_EXTRA_CA_CERTS: CA }) },
    );
    expect(result.code).toBe(0);
    const rows = readFileSync(output, 'utf8').trim().split('\n');
    expect(rows).toHaveLength(3);
    expect(rows[1]).toMatch(/^acme-shoes\.com,true,/);
    expect(rows[2]).toMatch(/^missing-domain\.example,false,/);
  });

  it('an unknown certificate is a TLS failure, exit 5, not retried', async () => {
    const before = refusedHandshakes;
    const result = await runCli(['--base-url', base, '-o', 'json', 'me'], { env: env() });
    expect(result.code).toBe(5);
    expect(refusedHandshakes - before).toBe(1);
    const problem = JSON.parse(result.stderr);
    expect(problem.code).toBe('network_error');
    expect(problem.detail).toMatch(/TLS failure talking to 127\.0\.0\.1:\d+ \(\w+\)/);
    expect(result.stdout).toBe('');
  });
});
