// A found domain answer whose layout did not yield the fields asked for (src/api/domains.ts marks
// it `fieldsUnread`). It is never written as blank cells: the command stops before it buys more,
// keeps the answer in a file for the report, and says what was asked, what came back and how to
// report it (README, "Troubleshooting": a service in a layout company-data does not know).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { oneLine } from '../output/sanitize.js';
import { Problem } from '../problem.js';
import type { DomainResult } from './types.js';

export const UNREADABLE_CODE = 'unreadable_answer';

/** Where unreadable answers are kept: `<cache dir>/unreadable/`. */
export function unreadableDir(cacheDir: string): string {
  return join(cacheDir, 'unreadable');
}

/**
 * Writes the answer to `<dir>/<time>-<domain>.json` and returns the path, or undefined when it
 * cannot be written (the message then says so; the problem is still reported).
 */
export function keepUnreadable(
  dir: string,
  domain: string,
  result: DomainResult,
  asked: readonly string[] | undefined,
  now: number,
): string | undefined {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const safe = domain.replace(/[^a-z0-9.-]/gi, '_');
  const path = join(dir, `${stamp}-${safe}.json`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const kept = {
      endpoint: `GET /api/domains/${domain}`,
      asked: asked ?? null,
      missing: result.fieldsUnread?.missing ?? [],
      body: result.fieldsUnread?.body,
    };
    writeFileSync(path, `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o600 });
    return path;
  } catch {
    return undefined;
  }
}

function list(names: readonly string[]): string {
  return names.length === 0 ? 'no member' : names.map(oneLine).join(', ');
}

/** The problem a command stops with (exit 5); `saved` is the file keepUnreadable wrote. */
export function unreadableProblem(
  domain: string,
  result: DomainResult,
  asked: readonly string[] | undefined,
  saved: string | undefined,
): Problem {
  const missing = result.fieldsUnread?.missing ?? [];
  const members = result.fieldsUnread?.members ?? [];
  const what =
    missing.length > 0
      ? `the fields asked for (${list(missing)}) are not in it`
      : 'no field of the record could be found in it';
  const where = saved ? `The answer is saved in ${saved}.` : 'The answer could not be saved to a file.';
  return new Problem({
    code: UNREADABLE_CODE,
    title: 'Answer in an unknown layout',
    detail:
      `GET /api/domains/${oneLine(domain)} found the company, but ${what}; the answer holds ${list(members)}` +
      `${asked ? ` (asked: ${list(asked.filter((f) => f !== 'domain'))})` : ''}. ` +
      `Nothing was written for it and nothing more was bought. ${where}`,
    source: 'server',
    retryable: false,
    remedy:
      'company-data does not know this layout of the service: report it to the company-data maintainers with the saved file (README, "Troubleshooting"), and run `company-data doctor` to see what it recognised.',
  });
}
