// Settings with precedence flags > environment > config file > defaults.
// (Minimal version; the config issue completes file handling and `config` subcommands.)
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { AuthHeader, Config, Format } from './types.js';

/** Global flags as Commander parsed them. */
export interface GlobalFlags {
  baseUrl?: string;
  apiKeyFile?: string;
  authHeader?: string;
  sandbox?: boolean;
  format?: string;
  timeout?: string;
  retries?: string;
  quiet?: boolean;
  verbose?: boolean;
  color?: boolean;
  allowInsecureHttp?: boolean;
  csvRaw?: boolean;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'company-data');
}

export async function resolveConfig(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv,
  stdoutIsTTY: boolean,
): Promise<Config> {
  const dir = configDir(env);
  const format = (flags.format ?? env.COMPANY_DATA_FORMAT ?? (stdoutIsTTY ? 'table' : 'json')) as Format;
  return {
    baseUrl: flags.baseUrl
      ? { value: flags.baseUrl, source: 'flag' }
      : env.COMPANY_DATA_BASE_URL
        ? { value: env.COMPANY_DATA_BASE_URL, source: 'environment' }
        : undefined,
    apiKey: env.COMPANY_DATA_API_KEY ? { value: env.COMPANY_DATA_API_KEY, source: 'environment' } : undefined,
    authHeader: {
      value: (flags.authHeader ?? env.COMPANY_DATA_AUTH_HEADER ?? 'bearer') as AuthHeader,
      source: 'default',
    },
    format: { value: format, source: flags.format ? 'flag' : 'default' },
    timeoutMs: {
      value: flags.timeout ? Number(flags.timeout) * 1000 : 30_000,
      source: flags.timeout ? 'flag' : 'default',
    },
    retries: { value: flags.retries ? Number(flags.retries) : 3, source: flags.retries ? 'flag' : 'default' },
    allowInsecureHttp: Boolean(flags.allowInsecureHttp),
    csvRaw: Boolean(flags.csvRaw),
    configPath: join(dir, 'config.json'),
    cacheDir: join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'company-data'),
  };
}
