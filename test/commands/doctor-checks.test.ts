// `company-data doctor` in-process (main() piped, with the real clock), against the sandbox and
// against a small loopback server that only accepts `x-api-key` and answers with another clock and
// contract.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyCheck } from '../../src/commands/doctor-proxy.js';
import { CONTRACT_VERSION } from '../../src/error-catalog.js';
import { bypassedByNoProxy } from '../../src/http/proxy-env.js';
import { type InProcessResult as RunResult, runPiped } from '../helpers/in-process.js';
import { clearRequestLog, readRequestLog, type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

interface CheckJson {
  name: string;
  status: 'pass' | 'fail' | 'warn' | 'skip';
  message: string;
  fix?: string;
  code?: string;
}

let sandbox: SandboxHandle;
let home: string;
let picky: Server;
let pickyUrl: string;
/** What the picky server announces; changed by the tests that need another contract. */
let pickyContract = CONTRACT_VERSION;
const PICKY_KEY = 'picky_key_0123456789';
const SKEW_SECONDS = 300;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  home = mkdtempSync(join(tmpdir(), 'cd-e2e-doctor-'));
  picky = createServer((req, res) => {
    res.sendDate = false;
    const headers = {
      'content-type': 'application/json',
      date: new Date(Date.now() - SKEW_SECONDS * 1000).toUTCString(),
    };
    if (req.url === '/api/errors') {
      res.writeHead(200, headers).end(JSON.stringify({ contract_version: pickyContract, errors: [] }));
    } else if (req.url === '/api/me' && req.headers['x-api-key'] === PICKY_KEY) {
      res.writeHead(200, headers).end(JSON.stringify({ plan: 'pro', balance: 5 }));
    } else {
      res
        .writeHead(401, { ...headers, 'content-type': 'application/problem+json' })
        .end(JSON.stringify({ code: 'invalid_api_key', status: 401, title: 'Invalid API key' }));
    }
  });
  await new Promise<void>((resolve) => picky.listen(0, '127.0.0.1', resolve));
  pickyUrl = `http://127.0.0.1:${(picky.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await sandbox?.close();
  await new Promise((resolve) => picky?.close(resolve));
  if (home) rmSync(home, { recursive: true, force: true });
});

function doctor(args: string[], env: Record<string, string | undefined> = {}): Promise<RunResult> {
  const dir = mkdtempSync(join(home, 'run-'));
  return runPiped([...args, 'doctor'], {
    env: {
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      HTTPS_PROXY: undefined,
      https_proxy: undefined,
      HTTP_PROXY: undefined,
      http_proxy: undefined,
      NO_PROXY: undefined,
      no_proxy: undefined,
      ...env,
    },
  });
}

function checksOf(r: RunResult): Record<string, CheckJson> {
  const parsed = JSON.parse(r.stdout) as { ok: boolean; checks: CheckJson[] };
  return Object.fromEntries(parsed.checks.map((c) => [c.name, c]));
}

describe('against the sandbox', () => {
  it('passes every check with a good key and exits 0', async () => {
    const r = await doctor(['--base-url', sandbox.url, '-o', 'json'], {
      COMPANY_DATA_API_KEY: sandbox.keys.full,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).ok).toBe(true);
    const checks = checksOf(r);
    expect(Object.keys(checks)).toEqual([
      'config file',
      'profile',
      'base URL',
      'proxy',
      'reachable',
      'contract',
      'clock',
      'key',
      'auth header',
      'products layout',
      'fields layout',
      'account layout',
      'credit headers',
      'answer layouts',
    ]);
    // Every check passes; the layouts of paid answers are not checked by a free call.
    for (const [name, check] of Object.entries(checks))
      expect([name, check.status]).toEqual([name, name === 'answer layouts' ? 'skip' : 'pass']);
    expect(checks.key.message).toMatch(/valid \(from environment, plan pro/);
    expect(checks.contract.message).toContain(CONTRACT_VERSION);
    expect(checks.profile.message).toBe("default (none chosen: the config file's top-level settings)");
  });

  it('prints one line per check, ✓ in a UTF-8 locale and ok in ASCII, and never the key', async () => {
    const env = { COMPANY_DATA_API_KEY: sandbox.keys.full };
    const [unicode, ascii] = await Promise.all([
      doctor(['--base-url', sandbox.url, '-o', 'table', '-v'], {
        ...env,
        LANG: 'en_US.UTF-8',
        LC_ALL: undefined,
      }),
      doctor(['--base-url', sandbox.url, '-o', 'table'], { ...env, LC_ALL: 'C' }),
    ]);
    expect(unicode.code).toBe(0);
    expect(unicode.stdout).toMatch(/^✓ key: valid/m);
    expect(unicode.stdout.trim().split('\n')).toHaveLength(14);
    expect(ascii.stdout).toMatch(/^ok {3}reachable: GET \/api\/errors answered HTTP 200/m);
    expect(ascii.stdout).not.toMatch(/[✓✗]/);
    expect(unicode.stderr).toMatch(/GET .*\/api\/me -> 200/);
    for (const r of [unicode, ascii]) expect(r.stdout + r.stderr).not.toContain(sandbox.keys.full);
  });

  it('fails the key check with its fix for a bad key, after trying the other header', async () => {
    await clearRequestLog(sandbox.url);
    const badKey = 'cd_not_a_real_key_123456';
    const r = await doctor(['--base-url', sandbox.url, '-o', 'json'], { COMPANY_DATA_API_KEY: badKey });
    expect(r.code).toBe(3);
    const checks = checksOf(r);
    expect(checks.reachable.status).toBe('pass');
    expect(checks.key).toMatchObject({ status: 'fail', code: 'invalid_api_key' });
    expect(checks.key.fix).toMatch(/config set-key/);
    expect(checks['auth header'].status).toBe('skip');
    const me = (await readRequestLog(sandbox.url)).filter((e) => e.path === '/api/me');
    expect(me.map((e) => e.auth)).toEqual(['bearer', 'x-api-key']);
    expect(r.stdout + r.stderr).not.toContain(badKey);
  });

  it('fails without a base URL, with the fix, and skips the calls', async () => {
    const r = await doctor(['-o', 'json'], { COMPANY_DATA_API_KEY: sandbox.keys.full });
    expect(r.code).toBe(2);
    const checks = checksOf(r);
    expect(checks['base URL']).toMatchObject({ status: 'fail', code: 'config_error' });
    expect(checks['base URL'].fix).toMatch(/--base-url.*COMPANY_DATA_BASE_URL/);
    expect(checks.reachable.status).toBe('skip');
    expect(checks.key.status).toBe('skip');
  });

  it('fails a key file readable by others with chmod 600, and still checks the key in it', async () => {
    const keyFile = join(home, 'loose.key');
    writeFileSync(keyFile, `${sandbox.keys.full}\n`);
    chmodSync(keyFile, 0o644);
    const r = await doctor(['--base-url', sandbox.url, '--api-key-file', keyFile, '-o', 'json']);
    expect(r.code).toBe(2);
    const checks = checksOf(r);
    expect(checks['key file']).toMatchObject({ status: 'fail', code: 'config_error' });
    expect(checks['key file'].message).toContain('mode 644');
    expect(checks['key file'].fix).toBe(`Run: chmod 600 ${keyFile}`);
    expect(checks.key.status).toBe('pass');
    expect(checks.settings).toBeUndefined();

    chmodSync(keyFile, 0o600);
    const fixed = await doctor(['--base-url', sandbox.url, '--api-key-file', keyFile, '-o', 'json']);
    expect(fixed.code).toBe(0);
    expect(checksOf(fixed)['key file'].message).toContain('mode 600');
  });

  it('reports an unusable setting as its own failure and still checks the rest (--sandbox)', async () => {
    const r = await doctor(['--sandbox', '-o', 'json'], { COMPANY_DATA_TIMEOUT: 'abc' });
    expect(r.code).toBe(2);
    const checks = checksOf(r);
    expect(checks.settings).toMatchObject({ status: 'fail', code: 'config_error' });
    expect(checks.settings.message).toContain('COMPANY_DATA_TIMEOUT');
    expect(checks.reachable.status).toBe('pass');
    expect(checks.key.status).toBe('pass');
  });

  it('reports a proxy without its password, and that an http:// service ignores HTTPS_PROXY', async () => {
    const r = await doctor(['--base-url', sandbox.url, '-o', 'json'], {
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      HTTPS_PROXY: 'http://user:s3cret@proxy.invalid:3128',
      NO_PROXY: 'internal.example',
    });
    expect(r.code).toBe(0);
    const proxy = checksOf(r).proxy;
    expect(proxy.message).toContain('HTTPS_PROXY=http://***@proxy.invalid:3128');
    expect(proxy.message).toContain('NO_PROXY=internal.example');
    expect(proxy.message).toMatch(/\(http\) is not proxied: direct/);
    expect(r.stdout).not.toContain('s3cret');
  });
});

describe('against a service that wants x-api-key', () => {
  it('fails the auth header check with the switch to make, warns about the clock', async () => {
    pickyContract = CONTRACT_VERSION;
    const r = await doctor(['--base-url', pickyUrl, '-o', 'json'], { COMPANY_DATA_API_KEY: PICKY_KEY });
    expect(r.code).toBe(3);
    const checks = checksOf(r);
    expect(checks.key).toMatchObject({ status: 'pass' });
    expect(checks.key.message).toMatch(/valid when sent as x-api-key/);
    expect(checks['auth header']).toMatchObject({ status: 'fail', code: 'invalid_api_key' });
    expect(checks['auth header'].fix).toMatch(/--auth-header x-api-key/);
    expect(checks.clock.status).toBe('warn');
    expect(checks.clock.message).toMatch(/ahead of the service/);
  });

  it('passes with --auth-header x-api-key; a contract mismatch then fails with exit 1', async () => {
    pickyContract = CONTRACT_VERSION;
    const ok = await doctor(['--base-url', pickyUrl, '--auth-header', 'x-api-key', '-o', 'json'], {
      COMPANY_DATA_API_KEY: PICKY_KEY,
    });
    expect(ok.code).toBe(0);
    expect(checksOf(ok)['auth header'].status).toBe('pass');

    pickyContract = '1999-01-01';
    const old = await doctor(['--base-url', pickyUrl, '--auth-header', 'x-api-key', '-o', 'json'], {
      COMPANY_DATA_API_KEY: PICKY_KEY,
    });
    expect(old.code).toBe(1);
    expect(checksOf(old).contract).toMatchObject({ status: 'fail' });
    expect(checksOf(old).contract.message).toContain('1999-01-01');
  });
});

describe('proxy routing rules', () => {
  it.each([
    ['https://api.example.com', 'example.com', true],
    ['https://api.example.com', '.example.com', true],
    ['https://api.example.com', '*.example.com', true],
    ['https://api.example.com', 'other.com, api.example.com', true],
    ['https://api.example.com', 'api.example.com:8443', false],
    ['https://api.example.com:8443', 'api.example.com:8443', true],
    ['https://notexample.com', 'example.com', false],
    ['https://api.example.com', '*', true],
    ['https://api.example.com', '', false],
  ])('%s with NO_PROXY=%j bypassed: %s', (url, noProxy, expected) => {
    expect(bypassedByNoProxy(new URL(url), noProxy)).toBe(expected);
  });

  it('names the proxy a remote base URL goes through', () => {
    const route = proxyCheck({ HTTPS_PROXY: 'http://proxy.corp:3128' }, 'https://api.example.com');
    expect(route.check.message).toMatch(/api\.example\.com goes through http:\/\/proxy\.corp:3128/);
    expect(route.note).toMatch(/NO_PROXY/);
    const plain = proxyCheck({ HTTPS_PROXY: 'http://proxy.corp:3128' }, 'http://api.example.com');
    expect(plain.check.message).toMatch(/not proxied: direct/);
  });

  it('proxies loopback like any host unless NO_PROXY lists it; the sandbox is always direct', () => {
    const env = { HTTP_PROXY: 'http://proxy.corp:3128' };
    expect(proxyCheck(env, 'http://127.0.0.1:4100').check.message).toMatch(/127\.0\.0\.1:4100 goes through/);
    const listed = proxyCheck({ ...env, NO_PROXY: '127.0.0.1' }, 'http://127.0.0.1:4100');
    expect(listed.check.message).toMatch(/in NO_PROXY: direct/);
    const sandbox = proxyCheck(env, 'http://127.0.0.1:4100', { sandbox: true });
    expect(sandbox.check.message).toMatch(/sandbox is reached directly/);
  });
});
