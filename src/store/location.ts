// Where the result store lives, what an answer is keyed by, and how long answers stay fresh.
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { usageError } from '../problem.js';
import type { Config } from '../types.js';
import { DAY_MS } from './rules.js';
import type { Freshness, Scope } from './types.js';

/** `$XDG_STATE_HOME/company-data/store.db` ($XDG_STATE_HOME defaults to ~/.local/state). */
export function defaultStorePath(env: NodeJS.ProcessEnv): string {
  const state = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(state, 'company-data', 'store.db');
}

/**
 * The store of this invocation: `--store <path|url>`, else COMPANY_DATA_STORE, else the default;
 * false with `--no-store` (Commander gives `store: false`). A URL of another scheme than
 * postgres:// or postgresql:// is refused: it is never taken as the name of a file.
 */
export function storePathOf(flag: string | boolean | undefined, env: NodeJS.ProcessEnv): string | false {
  if (flag === false) return false;
  const [where, from] =
    typeof flag === 'string' && flag !== ''
      ? [flag, '--store']
      : env.COMPANY_DATA_STORE
        ? [env.COMPANY_DATA_STORE, 'COMPANY_DATA_STORE']
        : [defaultStorePath(env), ''];
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(where)?.[1];
  if (scheme !== undefined && !isPostgresUrl(where)) {
    throw usageError(
      `${from} takes a file path or a postgres:// URL, not a ${scheme}:// URL (${shownLocation(where)})`,
      from === '--store'
        ? 'Give a file (--store ./store.db) or a PostgreSQL database (--store postgres://user@host/db).'
        : 'Set it to a file (COMPANY_DATA_STORE=./store.db) or a PostgreSQL database (COMPANY_DATA_STORE=postgres://user@host/db).',
    );
  }
  return where;
}

/** Whether the store is a PostgreSQL database (postgres:// or postgresql://). */
export function isPostgresUrl(where: string): boolean {
  return /^postgres(ql)?:\/\//i.test(where);
}

/** A store's location as messages show it: a URL without its password. */
export function shownLocation(where: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(where) ? withoutPassword(where) : where;
}

/** The URL without its password (in the authority or as a parameter). */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.searchParams.delete('password');
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1@');
  }
}

/**
 * The store of a --sandbox run: beside the real one (`store.db` -> `store.sandbox.db`), so the
 * sandbox's play money never lands in the user's ledger, nor its synthetic answers among theirs.
 * A database keeps them apart in a schema of its own (src/store/handle.ts).
 */
export function sandboxStorePath(path: string): string {
  if (isPostgresUrl(path)) return path;
  return path.endsWith('.db') ? `${path.slice(0, -'.db'.length)}.sandbox.db` : `${path}.sandbox`;
}

/** A key's identity in the store and the ledger: a hash, never the key itself. */
export function keyIdOf(key: string | undefined): string {
  if (!key) return 'none';
  return createHash('sha256').update(`company-data key\0${key}`).digest('hex').slice(0, 16);
}

/**
 * The base URL answers are kept under, and the ledger shows: the in-process sandbox listens on a
 * new port each time. It is only a label: caps and the month belong to the key (keyIdOf).
 */
export function baseOf(config: Config): string {
  return config.baseUrl?.source === 'sandbox' ? 'sandbox' : normalisedBaseUrl(config.baseUrl?.value ?? '');
}

/**
 * One spelling per address, as a server would read it: scheme and host in lower case, no default
 * port, no leading zeros in the port, dot segments resolved, no trailing slash. A value that is
 * not a URL is kept as it is.
 */
export function normalisedBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return raw;
  }
  url.hash = '';
  return url.toString().replace(/\/+$/, '');
}

export function scopeOf(
  config: Config,
  query: { products?: readonly string[]; include?: readonly string[]; maxCredits?: number },
): Scope {
  return {
    baseUrl: baseOf(config),
    keyId: keyIdOf(config.apiKey?.value),
    products: query.products,
    include: query.include,
    maxCredits: query.maxCredits,
  };
}

/** A scope's selection as the store keys it: products and include sorted, null when not given. */
export function selectionOf(scope: Scope): string {
  return JSON.stringify({
    products: scope.products ? [...scope.products].sort() : null,
    include: scope.include ? [...scope.include].sort() : null,
    max_credits: scope.maxCredits ?? null,
  });
}

export { DAY_MS };
export const DEFAULT_MAX_AGE_MS = 30 * DAY_MS;
export const DEFAULT_NOT_FOUND_MAX_AGE_MS = 7 * DAY_MS;
const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: DAY_MS, w: 7 * DAY_MS };

/** Parses an age such as 30d, 12h, 90m, 2w or 0 (never reuse), for --max-age and its kin. */
export function parseAge(name: string) {
  return (raw: string): number => {
    const match = /^(\d+(?:\.\d+)?)([smhdw]?)$/.exec(raw.trim());
    if (!match || (match[2] === '' && match[1] !== '0')) {
      throw new InvalidArgumentError(
        `${name} takes an age such as 30d, 12h, 90m or 2w (0: never reuse), got "${raw}"`,
      );
    }
    return Number(match[1]) * (UNITS[match[2]] ?? 0);
  };
}

/** The answers worth reusing now: younger than their age limit, or bought by this run. */
export function freshnessAt(
  now: number,
  ages: { maxAgeMs?: number; notFoundMaxAgeMs?: number; refreshSince?: number },
  run?: number,
): Freshness {
  // --refresh: only what was bought since this run began (by it, or by a run beside it).
  const floor = ages.refreshSince ?? Number.NEGATIVE_INFINITY;
  return {
    foundSince: Math.max(floor, now - (ages.maxAgeMs ?? DEFAULT_MAX_AGE_MS)),
    notFoundSince: Math.max(floor, now - (ages.notFoundMaxAgeMs ?? DEFAULT_NOT_FOUND_MAX_AGE_MS)),
    run,
  };
}

/** The units an age is told in, largest first. */
export const TIME_UNITS: ReadonlyArray<readonly [number, string]> = [
  [DAY_MS, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
  [1000, 'second'],
];

/** "3 days ago", "5 hours ago", "just now": how old a stored answer is, for a person. */
export function ageText(ms: number): string {
  for (const [size, name] of TIME_UNITS) {
    if (size < 60_000) break;
    const n = Math.floor(ms / size);
    if (n >= 1) return `${n} ${name}${n === 1 ? '' : 's'} ago`;
  }
  return 'just now';
}

/** The calendar month (UTC) holding `now`, as [from, to) in epoch ms. */
export function monthOf(now: number): { from: number; to: number; label: string } {
  const date = new Date(now);
  const from = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  const to = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  return { from, to, label: new Date(from).toISOString().slice(0, 7) };
}
