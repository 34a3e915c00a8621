// The real binary through a forward proxy on loopback (test/helpers/forward-proxy.ts), against an
// in-process sandbox: the same commands with and without HTTP_PROXY must give the same stdout,
// the same output file and the same failures, and the proxy must have carried the calls. The
// service is plain http://, so the proxy is asked with absolute URIs, never with a CONNECT
// (docs/contract.md, "Proxies").
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunResult, runCli } from '../helpers/cli.js';
import { type ForwardProxy, startForwardProxy } from '../helpers/forward-proxy.js';
import { type SandboxHandle, sandboxAndDirForTests } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let home: string;
let proxy: ForwardProxy;

sandboxAndDirForTests('cd-e2e-proxy-', { host: '127.0.0.1', companies: 200 }, (s, d) => {
  sandbox = s;
  home = d;
});

beforeAll(async () => {
  proxy = await startForwardProxy();
});
afterAll(async () => {
  await proxy?.close();
});

beforeEach(() => {
  sandbox.faults.clear();
  proxy.forwarded.length = 0;
  proxy.tunnels.length = 0;
});

const NO_PROXY_ENV = {
  HTTP_PROXY: undefined,
  http_proxy: undefined,
  HTTPS_PROXY: undefined,
  https_proxy: undefined,
  NO_PROXY: undefined,
  no_proxy: undefined,
};

/** Runs the CLI with a fresh config and cache (the catalogs are fetched too), direct or proxied. */
function cli(args: string[], viaProxy: boolean): Promise<RunResult> {
  const dir = mkdtempSync(join(home, 'run-'));
  return runCli(args, {
    env: {
      ...NO_PROXY_ENV,
      ...(viaProxy ? { HTTP_PROXY: proxy.url } : {}),
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
    },
  });
}

const origin = () => sandbox.url.replace(/\/$/, '');

describe('through HTTP_PROXY, as direct', () => {
  it('a single lookup prints the same, and the proxy forwarded every call by absolute URI', async () => {
    // ndjson: the row with its credits, without the balance, which the first run lowers.
    const args = ['--base-url', sandbox.url, 'enrich', 'acme-shoes.com', '-o', 'ndjson'];
    const direct = await cli(args, false);
    expect(proxy.forwarded).toEqual([]);
    const proxied = await cli(args, true);
    expect(direct.code).toBe(0);
    expect(proxied.code).toBe(0);
    expect(proxied.stdout).toBe(direct.stdout);
    expect(proxied.stderr).toBe(direct.stderr);
    expect(proxy.forwarded).toContain(`GET ${origin()}/api/domains/acme-shoes.com?max_credits=1`);
    expect(proxy.forwarded.every((line) => line.startsWith(`GET ${origin()}/api/`))).toBe(true);
    expect(proxy.tunnels).toEqual([]);
  });

  it('a batch writes the same output file', async () => {
    const input = join(home, 'batch.csv');
    writeFileSync(
      input,
      ['domain', 'acme-shoes.com', 'globex.io', 'missing-1.example', 'not a domain', ''].join('\n'),
    );
    // Each run has a result store of its own (test/helpers/state.ts): both buy every answer.
    const run = (output: string, viaProxy: boolean) =>
      cli(['--quiet', '--base-url', sandbox.url, 'enrich', '--input', input, '--output', output], viaProxy);
    const directOut = join(home, 'direct.csv');
    const proxiedOut = join(home, 'proxied.csv');
    const direct = await run(directOut, false);
    const proxied = await run(proxiedOut, true);
    expect(direct.code).toBe(6); // the row that is not a domain carries an error
    expect(proxied.code).toBe(direct.code);
    expect(readFileSync(proxiedOut, 'utf8')).toBe(readFileSync(directOut, 'utf8'));
    const lookups = proxy.forwarded.filter((line) => line.includes('/api/domains/'));
    expect(lookups).toHaveLength(3);
    expect(proxy.tunnels).toEqual([]);
  });

  it('a call slower than --timeout fails the same way', async () => {
    const args = ['--base-url', sandbox.url, '--timeout', '1', '--retries', '0', 'enrich', 'acme-shoes.com'];
    const outcome = async (viaProxy: boolean) => {
      sandbox.faults.add('delay:3000', { path: '/api/domains/', times: 1 });
      const r = await cli([...args, '-o', 'json'], viaProxy);
      const line = r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .at(-1);
      return { code: r.code, problem: JSON.parse(line ?? '{}').code, stdout: r.stdout };
    };
    const direct = await outcome(false);
    const proxied = await outcome(true);
    expect(direct).toEqual({ code: 5, problem: 'timeout', stdout: '' });
    expect(proxied).toEqual(direct);
    expect(proxy.forwarded).toContain(`GET ${origin()}/api/domains/acme-shoes.com?max_credits=1`);
  });

  it('--sandbox is reached directly, whatever the proxy variables say', async () => {
    const r = await cli(['--sandbox', 'enrich', 'acme-shoes.com', '-o', 'json'], true);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).results[0]).toMatchObject({ domain: 'acme-shoes.com', found: true });
    expect(proxy.forwarded).toEqual([]);
    expect(proxy.tunnels).toEqual([]);
  });
});

describe('a proxy that is not there', () => {
  it('is named with its variable, exit 2, and the call is not retried', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const dir = mkdtempSync(join(home, 'run-'));
    const r = await runCli(['-v', '--base-url', sandbox.url, '--retries', '3', '-o', 'json', 'me'], {
      env: {
        ...NO_PROXY_ENV,
        HTTP_PROXY: `http://127.0.0.1:${port}`,
        COMPANY_DATA_API_KEY: sandbox.keys.full,
        XDG_CONFIG_HOME: join(dir, 'config'),
        XDG_CACHE_HOME: join(dir, 'cache'),
      },
    });
    expect(r.code).toBe(2);
    const said = r.stderr.trim().split('\n');
    expect(JSON.parse(said.at(-1) ?? '')).toMatchObject({
      code: 'proxy_unreachable',
      detail: `The proxy 127.0.0.1:${port} (from HTTP_PROXY) refused the connection: nothing listens there, so ${new URL(sandbox.url).host} was not reached.`,
      retryable: false,
    });
    expect(said.filter((line) => /\(attempt \d+\/4\)/.test(line))).toHaveLength(1);
    expect(r.stdout).toBe('');
  });
});
