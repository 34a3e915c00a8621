import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { checkContractVersion, resetContractWarning } from '../../src/http/contract.js';
import { buildUrl, isLoopbackHost, keyFor, resolveBaseUrl } from '../../src/http/target.js';
import { createIO } from '../../src/io.js';
import { Problem } from '../../src/problem.js';
import type { Config } from '../../src/types.js';
import { testConfig } from '../helpers/config.js';

function config(overrides: Partial<Config> = {}): Config {
  return testConfig('https://api.example.com', {
    apiKey: { value: 'k3y', source: 'environment' },
    timeoutMs: { value: 1000, source: 'default' },
    ...overrides,
  });
}

function thrown(fn: () => unknown): Problem {
  try {
    fn();
  } catch (error) {
    if (error instanceof Problem) return error;
    throw error;
  }
  throw new Error('expected a Problem');
}

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['localhost', true],
    ['LOCALHOST', true],
    ['[::1]', true],
    ['::1', true],
    ['128.0.0.1', false],
    ['127.0.0.1.nip.io', false],
    ['example.invalid', false],
    ['10.0.0.1', false],
  ])('%s -> %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe('resolveBaseUrl and buildUrl', () => {
  it('says how to set a missing base URL', () => {
    const p = thrown(() => resolveBaseUrl(config({ baseUrl: undefined })));
    expect(p.code).toBe('config_error');
    expect(p.detail).toContain('--base-url or COMPANY_DATA_BASE_URL, or use --sandbox');
    expect(p.exitCode).toBe(2);
  });

  it('rejects a base URL that is not http(s)', () => {
    expect(thrown(() => resolveBaseUrl(config({ baseUrl: { value: 'ftp://x', source: 'flag' } }))).code).toBe(
      'config_error',
    );
    expect(
      thrown(() => resolveBaseUrl(config({ baseUrl: { value: 'not a url', source: 'flag' } }))).code,
    ).toBe('config_error');
  });

  it('keeps a path prefix of the base URL and encodes the query', () => {
    const base = resolveBaseUrl(config({ baseUrl: { value: 'https://h.example/v1/', source: 'flag' } }));
    const url = buildUrl(base, '/api/domains/acme.com', {
      include: 'a,b',
      limit: 5,
      skip: undefined,
      x: true,
    });
    expect(url.toString()).toBe('https://h.example/v1/api/domains/acme.com?include=a%2Cb&limit=5&x=true');
  });
});

describe('keyFor', () => {
  it('refuses to send no key', () => {
    const p = thrown(() => keyFor(config({ apiKey: undefined }), new URL('https://h.example/')));
    expect(p).toMatchObject({ code: 'invalid_api_key', detail: 'No API key configured.' });
    expect(p.exitCode).toBe(3);
    expect(p.hint).toContain('COMPANY_DATA_API_KEY');
  });

  it('refuses plain http to another machine unless allowed, and allows it to loopback', () => {
    const p = thrown(() => keyFor(config(), new URL('http://example.invalid/')));
    expect(p.code).toBe('insecure_http');
    expect(p.exitCode).toBe(2);
    expect(keyFor(config({ allowInsecureHttp: true }), new URL('http://example.invalid/'))).toBe('k3y');
    expect(keyFor(config(), new URL('http://127.0.0.1:8080/'))).toBe('k3y');
    expect(keyFor(config(), new URL('http://localhost:8080/'))).toBe('k3y');
  });
});

describe('checkContractVersion', () => {
  it('warns once per process when the versions differ', () => {
    let err = '';
    const sink = new Writable({
      write(chunk, _enc, done) {
        err += String(chunk);
        done();
      },
    });
    const io = createIO({ stdout: sink, stderr: sink, env: {} });
    resetContractWarning();
    expect(checkContractVersion(io, '2026-08-26')).toBe(true);
    expect(err).toBe('');
    expect(checkContractVersion(io, '2027-01-01\x1b[31m')).toBe(false);
    expect(checkContractVersion(io, '2027-01-01')).toBe(false);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toContain('the server speaks contract 2027-01-01, this CLI was built for 2026-08-26');
    expect(err).not.toContain('\x1b');
  });
});
