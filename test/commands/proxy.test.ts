// main() in-process, piped with the real clock (test/helpers/in-process.ts `runPiped`), through
// a forward proxy on loopback (test/helpers/forward-proxy.ts), against a loopback sandbox: the same
// commands with and without HTTP_PROXY must give the same stdout, the same output file and the
// same failures, and the proxy must have carried the calls. The service is plain http://, so the
// proxy is asked with absolute URIs, never with a CONNECT (docs/contract.md, "Proxies"). Through
// HTTPS_PROXY to a TLS service, by the built binary: test/e2e/https.test.ts.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ACME } from '../helpers/command-cases.js';
import { type ForwardProxy, startForwardProxy } from '../helpers/forward-proxy.js';
import { type InProcessResult, runPiped } from '../helpers/in-process.js';
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
function cli(args: string[], viaProxy: boolean): Promise<InProcessResult> {
  const dir = mkdtempSync(join(home, 'run-'));
  return runPiped(args, {
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
    expect(direct).toEqual({
      code: 0,
      stdout: `${JSON.stringify({ ...ACME, credits_charged: 1, bought_at: null })}\n`,
      stderr: '',
    });
    expect(proxied).toEqual(direct);
    // The catalogs (the cache is new) and the lookup.
    expect(proxy.forwarded).toEqual([
      `GET ${origin()}/api/products`,
      `GET ${origin()}/api/fields`,
      `GET ${origin()}/api/domains/acme-shoes.com?max_credits=1`,
    ]);
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
    // The row that is not a domain carries an error: exit 6.
    expect(direct).toEqual({ code: 6, stdout: '', stderr: '' });
    expect(proxied).toEqual(direct);
    expect(readFileSync(directOut, 'utf8')).toBe(
      [
        'domain,found,cd_domain,company_name,country,site_category,employee_range,founded_year,credits_charged,bought_at,error_code,error_detail',
        'acme-shoes.com,true,acme-shoes.com,Acme Shoes,US,fashion,51-200,2009,1,,,',
        'globex.io,true,globex.io,Globex Corporation,US,b2b_software,1001-5000,1989,1,,,',
        'missing-1.example,false,,,,,,,0,,,',
        'not a domain,,,,,,,,0,,invalid_domain,domain contains spaces',
        '',
      ].join('\n'),
    );
    expect(readFileSync(proxiedOut, 'utf8')).toBe(readFileSync(directOut, 'utf8'));
    expect(proxy.forwarded).toEqual([
      `GET ${origin()}/api/products`,
      `GET ${origin()}/api/fields`,
      `GET ${origin()}/api/me`,
      `GET ${origin()}/api/domains/acme-shoes.com?max_credits=1`,
      `GET ${origin()}/api/domains/globex.io?max_credits=1`,
      `GET ${origin()}/api/domains/missing-1.example?max_credits=1`,
    ]);
    expect(proxy.tunnels).toEqual([]);
  });

  it('a call slower than --timeout fails the same way', async () => {
    const args = ['--base-url', sandbox.url, '--timeout', '1', '--retries', '0', 'enrich', 'acme-shoes.com'];
    const outcome = (viaProxy: boolean) => {
      sandbox.faults.add('delay:3000', { path: '/api/domains/', times: 1 });
      return cli([...args, '-o', 'json'], viaProxy);
    };
    // Both at once (each takes one of the two slow answers): they wait on the timeout, not the CPU.
    const [direct, proxied] = await Promise.all([outcome(false), outcome(true)]);
    expect(direct).toEqual({
      code: 5,
      stdout: '',
      stderr: `${JSON.stringify({
        code: 'timeout',
        status: 0,
        title: 'timeout',
        detail: `No response from ${new URL(sandbox.url).host} within 1s (--timeout).`,
        retryable: true,
        hint: 'The service is temporarily unavailable; try again later (retries are automatic, see --retries).',
      })}\n`,
    });
    expect(proxied).toEqual(direct);
    expect(proxy.forwarded).toContain(`GET ${origin()}/api/domains/acme-shoes.com?max_credits=1`);
  });

  it('--sandbox is reached directly, whatever the proxy variables say', async () => {
    const r = await cli(['--sandbox', 'enrich', 'acme-shoes.com', '-o', 'json'], true);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      results: [{ ...ACME, credits_charged: 1, bought_at: null }],
      credits: { charged: 1, remaining: 999999 },
    });
    // Its port, and where its own store is (a directory of this test run's, test/helpers/state.ts).
    const said = r.stderr.replace(/127\.0\.0\.1:\d+/, '127.0.0.1:PORT').replace(/: \/\S+\//, ': <state>/');
    expect(said).toBe(
      'Using the offline sandbox at http://127.0.0.1:PORT (demo key, no real credits).\nSandbox store: <state>/store.sandbox.db\n',
    );
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
    const r = await runPiped(['-v', '--base-url', sandbox.url, '--retries', '3', '-o', 'json', 'me'], {
      env: {
        ...NO_PROXY_ENV,
        HTTP_PROXY: `http://127.0.0.1:${port}`,
        COMPANY_DATA_API_KEY: sandbox.keys.full,
        XDG_CONFIG_HOME: join(dir, 'config'),
        XDG_CACHE_HOME: join(dir, 'cache'),
      },
    });
    const detail = `The proxy 127.0.0.1:${port} (from HTTP_PROXY) refused the connection: nothing listens there, so ${new URL(sandbox.url).host} was not reached.`;
    // One attempt of the four --retries 3 allows; how long it took (src/http/client.ts) masked.
    expect({ ...r, stderr: r.stderr.replace(/ after \d+ ms /, ' after N ms ') }).toEqual({
      code: 2,
      stdout: '',
      stderr: [
        `http: GET ${origin()}/api/me -> proxy_unreachable: ${detail} after N ms (attempt 1/4)`,
        JSON.stringify({
          code: 'proxy_unreachable',
          status: 0,
          title: 'Proxy unreachable',
          detail,
          retryable: false,
          hint: 'Start the proxy, correct the proxy variable, or unset it (or list the service in NO_PROXY) to connect directly.',
        }),
        '',
      ].join('\n'),
    });
  });
});
