// A complete Config for tests of the HTTP layer: a base URL and key from "the environment",
// everything else at its default, nothing read from disk. Override what a test is about.
import type { Config } from '../../src/types.js';

export function testConfig(baseUrl: string, overrides: Partial<Config> = {}): Config {
  return {
    baseUrl: { value: baseUrl, source: 'flag' },
    apiKey: { value: 'cd_test_key', source: 'environment' },
    authHeader: { value: 'bearer', source: 'default' },
    format: { value: 'json', source: 'default' },
    timeoutMs: { value: 2_000, source: 'default' },
    retries: { value: 0, source: 'default' },
    allowInsecureHttp: false,
    csvRaw: false,
    configPath: '/nonexistent/config.json',
    cacheDir: '/nonexistent/cache',
    ...overrides,
  };
}
