// Table-driven exact-output cases for the commands (DESIGN.md, "Exact-output tests in-process",
// after the GitHub CLI's TestListRun): each case runs main() in this process with fake streams
// (a pretend terminal or a pipe) against a real sandbox on a loopback port, and its whole stdout
// and stderr are compared with the strings the case spells out.
//
// Every case gets its own sandbox and its own scratch directory (HOME, config and cache): the
// sandbox's balances go down with every charged call and a cached catalog changes what later
// commands print, so no case may see what another one left behind. A sandbox of the test size
// starts in a few tens of milliseconds, which is what this independence costs.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import type { SandboxOptions } from '../../src/sandbox/index.js';
import type { RequestLogEntry } from '../../src/sandbox/request-log.js';
import { runInProcess } from './in-process.js';
import { type SandboxHandle, startTestSandbox } from './sandbox.js';

/**
 * The case's scratch directory as cases write it, in argv, env, files and expected output. The
 * real one is `/tmp/cdt-` and six random characters: the same length, so a table holding a path
 * keeps its alignment when the real name is replaced by this one.
 */
export const DIR = '/tmp/cdt-XXXXXX';

/** The case's sandbox URL as cases write it (its port changes from run to run). */
export const SANDBOX_URL = 'http://127.0.0.1:PORT';

/**
 * A loopback URL where nothing listens, as cases write it: a port that was free a moment before
 * the case ran (found by listening on port 0 and closing again).
 */
export const CLOSED_URL = 'http://127.0.0.1:CLOSED';
const CLOSED_HOST = '127.0.0.1:CLOSED';

/** The sandbox's demo keys (docs/contract.md): fixed strings, the same in every sandbox. */
export const KEYS = {
  full: 'cd_sandbox_full_7f3a9c2e',
  restricted: 'cd_sandbox_restricted_5b1d8e40',
  free: 'cd_sandbox_free_c94e1a77',
  empty: 'cd_sandbox_empty_0a6f3d19',
} as const;

/** The sandbox's answer for acme-shoes.com with the default fields (a showcase record). */
export const ACME = {
  domain: 'acme-shoes.com',
  found: true,
  company_name: 'Acme Shoes',
  country: 'US',
  site_category: 'fashion',
  employee_range: '51-200',
  founded_year: 2009,
};

export interface CommandCase {
  name: string;
  argv: string[];
  /** stdout and stderr are a terminal (table format by default) or pipes (JSON by default). */
  tty: boolean;
  /** stderr alone is a terminal or not (default: as `tty`): stdout redirected to a file, say. */
  stderrTTY?: boolean;
  /** The width stdout reports as a terminal (with `tty`); COLUMNS (100) decides without it. */
  columns?: number;
  /** Changes to the case's environment (see caseEnvironment); undefined removes a variable. */
  env?: Record<string, string | undefined>;
  stdin?: string;
  stdinTTY?: boolean;
  /** Files written under DIR before the run (text as UTF-8, or bytes), with a mode when it matters. */
  files?: Record<string, string | Buffer | { text: string; mode: number }>;
  /** Commands run first with the same environment (to fill the catalog cache, say); each must exit 0. */
  before?: string[][];
  /** The case's sandbox, when not the test size (2,000 companies, no latency, no faults). */
  sandbox?: SandboxOptions;
  /** Run against the sandbox before the command (after `before`): faults queued, say. */
  setup?: (sandbox: SandboxHandle) => void;
  /**
   * Output that comes from the real clock rather than the injected one, with what stands for it.
   * Each use says which line of src/ reads the clock; the rest of the output is still exact.
   * A pattern replaces its first match only (unless it is global), so a second occurrence still
   * has to be spelt out.
   */
  masks?: Array<[RegExp, string]>;
  /** The clock main() sees; the fixed instant of in-process.ts unless given. */
  now?: () => number;
  wantCode: number;
  wantStdout: string;
  wantStderr: string;
  /** Exact contents of files under DIR after the run; null when the file must not exist. */
  wantFiles?: Record<string, string | null>;
  /** Permission bits of files under DIR after the run. */
  wantModes?: Record<string, number>;
  /**
   * Every request the sandbox received during the command (not `before`), one line each, as
   * `requestLine` writes it.
   */
  wantRequests?: string[];
}

export interface CaseResult {
  code: number;
  stdout: string;
  stderr: string;
  files: Record<string, string | null>;
  modes: Record<string, number>;
  requests: string[];
}

/**
 * One request of the sandbox's log as a case spells it: method, path and decoded query; how it
 * authenticated and as which key; the media type and size of a body; the status, and the fault
 * injected, if any. E.g. `GET /api/me bearer:full -> 200`,
 * `POST /api/search bearer:full application/json 52B -> 200`.
 */
export function requestLine(e: RequestLogEntry): string {
  const query = e.query === '' ? '' : `?${decodeURIComponent(e.query.replaceAll('+', ' '))}`;
  const auth = e.auth === null ? 'no key' : `${e.auth}:${e.key_name ?? 'unknown'}`;
  const body = e.body_bytes > 0 ? ` ${e.content_type ?? 'no type'} ${e.body_bytes}B` : '';
  const fault = e.fault === null ? '' : ` (${e.fault})`;
  return `${e.method} ${e.path}${query} ${auth}${body} -> ${e.status ?? 'no answer'}${fault}`;
}

/**
 * A private HOME, config and cache under DIR, the sandbox as the service with its full key, and
 * no colour; the case's own `env` is applied on top.
 */
export function caseEnvironment(c: Pick<CommandCase, 'env'>): Record<string, string> {
  const env: Record<string, string | undefined> = {
    HOME: `${DIR}/home`,
    XDG_CONFIG_HOME: `${DIR}/config`,
    XDG_CACHE_HOME: `${DIR}/cache`,
    COMPANY_DATA_BASE_URL: SANDBOX_URL,
    COMPANY_DATA_API_KEY: KEYS.full,
    NO_COLOR: '1',
    ...c.env,
  };
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/**
 * The environment of a run against a service of the test's own (a front in front of a sandbox):
 * HOME, config and cache under `dir`, the full key, no colour.
 */
export function serviceEnvironment(dir: string, baseUrl: string): Record<string, string> {
  return {
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    COMPANY_DATA_BASE_URL: baseUrl,
    COMPANY_DATA_API_KEY: KEYS.full,
    NO_COLOR: '1',
  };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function runCase(c: CommandCase): Promise<CaseResult> {
  const sandbox = await startTestSandbox(c.sandbox);
  const dir = mkdtempSync('/tmp/cdt-');
  // Replaced as host:port, the form network errors name it in.
  const closed = `127.0.0.1:${await closedPort()}`;
  const real = (text: string) =>
    text.replaceAll(DIR, dir).replaceAll(SANDBOX_URL, sandbox.url).replaceAll(CLOSED_HOST, closed);
  const named = (text: string) =>
    text.replaceAll(dir, DIR).replaceAll(sandbox.url, SANDBOX_URL).replaceAll(closed, CLOSED_HOST);
  const shown = (text: string) => {
    let out = named(text);
    for (const [pattern, replacement] of c.masks ?? []) out = out.replace(pattern, replacement);
    return out;
  };
  try {
    for (const [name, file] of Object.entries(c.files ?? {})) {
      const path = join(dir, name);
      mkdirSync(dirname(path), { recursive: true });
      if (typeof file === 'string' || Buffer.isBuffer(file)) writeFileSync(path, file);
      else {
        writeFileSync(path, file.text);
        // Set after writing: the mode given to writeFileSync is narrowed by the umask.
        chmodSync(path, file.mode);
      }
    }
    const env = Object.fromEntries(Object.entries(caseEnvironment(c)).map(([k, v]) => [k, real(v)]));
    for (const argv of c.before ?? []) {
      const before = await runInProcess(argv.map(real), { env });
      expect(before.code, `${argv.join(' ')}: ${before.stderr}`).toBe(0);
    }
    c.setup?.(sandbox);
    const from = sandbox.requests().at(-1)?.seq ?? 0;
    const result = await runInProcess(c.argv.map(real), {
      tty: c.tty,
      stderrTTY: c.stderrTTY,
      columns: c.columns,
      env,
      stdin: c.stdin,
      stdinTTY: c.stdinTTY,
      now: c.now,
    });
    const files: Record<string, string | null> = {};
    for (const name of Object.keys(c.wantFiles ?? {})) {
      const path = join(dir, name);
      files[name] = existsSync(path) ? named(readFileSync(path, 'utf8')) : null;
    }
    const modes: Record<string, number> = {};
    for (const name of Object.keys(c.wantModes ?? {})) modes[name] = statSync(join(dir, name)).mode & 0o777;
    const requests = sandbox
      .requests()
      .filter((e) => e.seq > from)
      .map((e) => named(requestLine(e)));
    return {
      code: result.code,
      stdout: shown(result.stdout),
      stderr: shown(result.stderr),
      files,
      modes,
      requests,
    };
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the case and compares the exit code, the whole stdout and stderr, and the files it names. */
export async function expectCase(c: CommandCase): Promise<void> {
  const got = await runCase(c);
  expect({ code: got.code, stdout: got.stdout, stderr: got.stderr }).toEqual({
    code: c.wantCode,
    stdout: c.wantStdout,
    stderr: c.wantStderr,
  });
  if (c.wantFiles) expect(got.files).toEqual(c.wantFiles);
  if (c.wantModes) expect(got.modes).toEqual(c.wantModes);
  if (c.wantRequests) expect(got.requests).toEqual(c.wantRequests);
}

/** Lines joined with newlines and ended by one, so multi-line expectations read line by line. */
export function lines(...text: string[]): string {
  return `${text.join('\n')}\n`;
}

/** A usage problem as one JSON line on stderr, as it is reported when stdout is not a terminal. */
export function usageLine(detail: string, hint = 'Add --help for usage.'): string {
  const problem = { code: 'usage_error', status: 0, title: 'Usage error', detail, retryable: false, hint };
  return `${JSON.stringify(problem)}\n`;
}
