// What a test gives a process that stands for one user or one host: folders of its own (config,
// cache, state) beside a store, a service and its key; and what the ledger says it spent.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli } from './cli.js';

/** The environment of a case in `home`: its own store file, config and cache, the service's key. */
export function caseEnvIn(
  home: string,
  service: { url: string; keys: { full: string } },
): Record<string, string> {
  return {
    COMPANY_DATA_STORE: join(home, 'store.db'),
    COMPANY_DATA_BASE_URL: service.url,
    COMPANY_DATA_API_KEY: service.keys.full,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
  };
}

/**
 * A host of its own in `home` (made here): its HOME, state, config and cache no other host sees,
 * the shared `store`, the service at `base` with `key`; `input` writes a list of domains there.
 */
export function hostIn(home: string, store: string, base: string, key: string) {
  mkdirSync(home, { recursive: true });
  return {
    cwd: home,
    env: {
      HOME: home,
      COMPANY_DATA_STORE: store,
      COMPANY_DATA_BASE_URL: base,
      COMPANY_DATA_API_KEY: key,
      XDG_STATE_HOME: join(home, 'state'),
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_CACHE_HOME: join(home, 'cache'),
    },
    input(file: string, domains: string[]): string {
      const path = join(home, file);
      writeFileSync(path, `domain\n${domains.join('\n')}\n`);
      return path;
    },
  };
}

/** Charged plus possibly charged, as `spend` shows them for `env`'s store. */
export async function spentBy(env: Record<string, string>): Promise<number> {
  const spend = await runCli(['spend', '-o', 'json'], { env });
  expect(spend.code, spend.stderr).toBe(0);
  const { total } = JSON.parse(spend.stdout) as { total: { charged: number; possibly_charged: number } };
  return total.charged + total.possibly_charged;
}
