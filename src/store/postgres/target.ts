// Where and as whom a PostgreSQL store connects: its URL, with the usual PG* variables for what the
// URL leaves out (as psql reads them), and the type parsers that give bigint columns as numbers.
import { userInfo } from 'node:os';
import type pg from 'pg';
import { withoutPassword } from '../location.js';
import { unavailable } from './errors.js';

const CONNECT_TIMEOUT_MS = 10_000;

/** Where and as whom to connect: the URL, with the usual PG* variables for what it leaves out. */
export interface Target {
  config: pg.ClientConfig;
  /** The URL as messages show it: without its password. */
  shown: string;
  password: string | undefined;
}

/** bigint, and the numeric of SUM(bigint), as numbers: epoch ms and credits fit in a double. */
export function typesOf(types: typeof pg.types): pg.CustomTypesConfig {
  const NUMBERS = new Set<number>([types.builtins.INT8, types.builtins.NUMERIC]);
  return {
    getTypeParser: ((oid: number, format?: string) =>
      NUMBERS.has(oid) && format !== 'binary'
        ? (value: string) => Number(value)
        : types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
  };
}

export function targetOf(url: string, env: NodeJS.ProcessEnv): Target {
  const shown = withoutPassword(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw unavailable(
      shown,
      'not a valid URL',
      undefined,
      'Give the store as postgres://user@host:port/database.',
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw unavailable(
      shown,
      'not a postgres:// URL',
      undefined,
      'Give the store as postgres://user@host:port/database.',
    );
  }
  const param = (name: string) => parsed.searchParams.get(name) || undefined;
  const decoded = (text: string) => (text === '' ? undefined : decodeURIComponent(text));
  const host =
    decoded(parsed.hostname.replace(/^\[(.*)\]$/, '$1')) ?? param('host') ?? env.PGHOST ?? 'localhost';
  const user = decoded(parsed.username) ?? param('user') ?? env.PGUSER ?? env.USER ?? userInfo().username;
  const password = decoded(parsed.password) ?? param('password') ?? env.PGPASSWORD;
  const sslmode = param('sslmode') ?? env.PGSSLMODE;
  const ssl =
    sslmode === undefined || sslmode === 'disable' || sslmode === 'prefer' || sslmode === 'allow'
      ? undefined
      : sslmode === 'require' || sslmode === 'no-verify'
        ? { rejectUnauthorized: false }
        : true;
  return {
    shown,
    password,
    config: {
      host,
      port: Number(parsed.port || param('port') || env.PGPORT || 5432),
      user,
      password,
      database: decoded(parsed.pathname.slice(1)) ?? param('dbname') ?? env.PGDATABASE ?? user,
      ssl,
      application_name: param('application_name') ?? 'company-data',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    },
  };
}
