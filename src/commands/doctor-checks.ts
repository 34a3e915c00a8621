// The checks of `company-data doctor`. Each returns a Check with a one-sentence fix when it fails;
// none throws, so one broken thing never hides the state of the others.
import { stat } from 'node:fs/promises';
import { adaptAccount } from '../api/account.js';
import { adaptErrors } from '../api/catalogs.js';
import type { Account } from '../api/types.js';
import type { GlobalFlags } from '../config.js';
import { CONTRACT_VERSION } from '../error-catalog.js';
import { isProblem, Problem, SETUP_CODES } from '../problem.js';
import type { AuthHeader, Client, Config } from '../types.js';

export type CheckStatus = 'pass' | 'fail' | 'warn' | 'skip';

export interface Check {
  name: string;
  status: CheckStatus;
  message: string;
  fix?: string;
  /** The problem code behind a failure, when there is one. */
  code?: string;
  /** Exit code this failure stands for (DESIGN.md table); 1 when no problem says otherwise. */
  exitCode?: number;
}

export const MAX_CLOCK_SKEW_SECONDS = 60;

const pass = (name: string, message: string): Check => ({ name, status: 'pass', message });
const skip = (name: string, message: string): Check => ({ name, status: 'skip', message });

export function failure(name: string, message: string, fix: string, code?: string, exitCode = 1): Check {
  return { name, status: 'fail', message, fix, ...(code ? { code } : {}), exitCode };
}

export function problemCheck(name: string, problem: Problem, fix = problem.hint): Check {
  const detail = problem.detail && problem.detail !== problem.title ? `: ${problem.detail}` : '';
  return failure(name, `${problem.title} (${problem.code})${detail}`, fix, problem.code, problem.exitCode);
}

function asProblem(error: unknown): Problem {
  if (isProblem(error)) return error;
  return new Problem({
    code: 'internal_bug',
    detail: error instanceof Error ? error.message : String(error),
    source: 'client',
  });
}

/** Private means no permission bits for group or others, as config.ts demands of secrets. */
export async function filePermissions(name: string, path: string, required: boolean): Promise<Check> {
  if (process.platform === 'win32') return skip(name, `${path} (no permission bits on Windows)`);
  let mode: number;
  try {
    mode = (await stat(path)).mode & 0o777;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'ENOENT' && !required) return pass(name, `none at ${path} (optional)`);
    return failure(
      name,
      `cannot read ${path} (${code})`,
      `Check the path and its permissions.`,
      'config_error',
      2,
    );
  }
  const octal = mode.toString(8).padStart(3, '0');
  if ((mode & 0o077) !== 0)
    return failure(
      name,
      `${path} is readable by other users (mode ${octal}); company-data refuses to use it`,
      `Run: chmod 600 ${path}`,
      'config_error',
      2,
    );
  return pass(name, `${path} (mode ${octal})`);
}

/** Which profile of the config file is in force, and why; an unknown one fails as every command would. */
export async function profileCheck(flags: GlobalFlags, env: NodeJS.ProcessEnv): Promise<Check> {
  const config = await import('../config.js');
  const path = config.configFilePath(env);
  try {
    // Read whatever its mode: the permission check speaks for that.
    const file = await config.readConfigFile(path, { checkPermissions: false }).catch(() => undefined);
    const { profile } = config.profileSettings(flags, env, file, path);
    return pass('profile', `${profile.value} (${config.profileReason(profile.source)})`);
  } catch (error) {
    return problemCheck('profile', asProblem(error));
  }
}

/**
 * Where the settings doctor checks could come from, to say where a failing value came from and
 * what overrides it (issue 30): the profile in force, and what the config file holds.
 */
export interface Provenance {
  configPath: string;
  profile: string;
  /** The profile in force has a key / a base_url in the config file. */
  profileKey: boolean;
  profileBaseUrl: boolean;
  /** The top-level (default profile's) base_url, when the profile in force is another one. */
  topLevelBaseUrl?: string;
  envKey: boolean;
  keyFile?: string;
}

export async function provenanceOf(flags: GlobalFlags, env: NodeJS.ProcessEnv): Promise<Provenance> {
  const c = await import('../config.js');
  const configPath = c.configFilePath(env);
  const file = await c.readConfigFile(configPath, { checkPermissions: false }).catch(() => undefined);
  let profile = c.DEFAULT_PROFILE;
  try {
    profile = c.chooseProfile(flags, env, file, configPath).value;
  } catch {
    // An unreadable profile name is a check of its own.
  }
  const members = (() => {
    try {
      return c.storedProfile(file, configPath, profile) ?? {};
    } catch {
      return {};
    }
  })();
  const topLevel = (() => {
    try {
      return c.storedProfile(file, configPath, c.DEFAULT_PROFILE) ?? {};
    } catch {
      return {};
    }
  })();
  return {
    configPath,
    profile,
    profileKey: c.storedKey(members) !== undefined,
    profileBaseUrl: typeof members.base_url === 'string' && members.base_url !== '',
    topLevelBaseUrl:
      profile !== c.DEFAULT_PROFILE && typeof topLevel.base_url === 'string' ? topLevel.base_url : undefined,
    envKey: Boolean(env.COMPANY_DATA_API_KEY?.trim()),
    keyFile: flags.apiKeyFile,
  };
}

/** Where the key in use came from, and what overrides what (flag > environment > config file). */
export function keyOrigin(source: string, p: Provenance): string {
  const inFile = `profile "${p.profile}" of ${p.configPath}`;
  switch (source) {
    case 'flag':
      return `The key came from --api-key-file ${p.keyFile ?? ''}, which overrides COMPANY_DATA_API_KEY and the config file.`.replace(
        ' ,',
        ',',
      );
    case 'environment':
      return `The key came from COMPANY_DATA_API_KEY (environment), which overrides ${
        p.profileKey ? `the key in ${inFile}: unset COMPANY_DATA_API_KEY to use that one` : 'the config file'
      }; --api-key-file overrides it.`;
    case 'config file':
      return `The key came from ${inFile}; COMPANY_DATA_API_KEY or --api-key-file would override it.`;
    default:
      return `The key came from ${source}.`;
  }
}

export function baseUrlCheck(config: Config, p?: Provenance): Check {
  const base = config.baseUrl;
  if (!base?.value) {
    const where = p ? `, nor profile "${p.profile}" of ${p.configPath}` : '';
    const inherit =
      p?.topLevelBaseUrl !== undefined
        ? ` Profiles inherit nothing: the top-level base_url (${p.topLevelBaseUrl}) is the default profile's, not "${p.profile}"'s.`
        : '';
    const setIt =
      p && p.profile !== 'default'
        ? `\`company-data --profile ${p.profile} config set base-url <url>\``
        : '`company-data config set base-url <url>`';
    return failure(
      'base URL',
      `no service URL is configured (not by --base-url, COMPANY_DATA_BASE_URL${where}).${inherit}`,
      `Pass --base-url, set COMPANY_DATA_BASE_URL, or run ${setIt} (or try --sandbox).`,
      'config_error',
      2,
    );
  }
  return pass('base URL', `${base.value} (from ${base.source})`);
}

export interface Reachability {
  check: Check;
  /** The errors catalog's contract version, when the service answered. */
  contractVersion?: string;
  /** The server's Date header, when it answered. */
  serverDate?: string;
  answered: boolean;
}

/** GET /api/errors: public, never charged, and it announces the contract version. */
export async function reachability(client: Client, proxyNote: string | undefined): Promise<Reachability> {
  const started = performance.now();
  try {
    const response = await client.request<unknown>({
      method: 'GET',
      path: '/api/errors',
      auth: false,
      spinner: false,
    });
    const ms = Math.round(performance.now() - started);
    let contractVersion: string | undefined;
    try {
      contractVersion = adaptErrors(response.data).contract_version || undefined;
    } catch {
      contractVersion = undefined;
    }
    return {
      check: pass('reachable', `GET /api/errors answered HTTP ${response.status} in ${ms} ms`),
      contractVersion,
      serverDate: response.headers.date,
      answered: true,
    };
  } catch (error) {
    const problem = asProblem(error);
    // A set-up mistake names its own cause (the proxy, when it is the proxy); the route's note
    // would only point elsewhere.
    const fix =
      proxyNote && !SETUP_CODES.has(problem.code) ? `${problem.hint} ${proxyNote}`.trim() : problem.hint;
    return {
      check: problemCheck('reachable', problem, fix || 'Check the base URL and the network.'),
      answered: false,
    };
  }
}

export function contractCheck(reach: Reachability): Check {
  if (!reach.answered) return skip('contract', 'not checked: the service did not answer');
  if (!reach.contractVersion)
    return {
      name: 'contract',
      status: 'warn',
      message: `the service does not announce a contract version (this CLI was built for ${CONTRACT_VERSION})`,
    };
  if (reach.contractVersion === CONTRACT_VERSION) return pass('contract', `version ${CONTRACT_VERSION}`);
  return failure(
    'contract',
    `the service speaks contract ${reach.contractVersion.slice(0, 40)}, this CLI was built for ${CONTRACT_VERSION}`,
    'Update company-data (npm install -g company-data), or point --base-url at a service of the same version.',
  );
}

export function clockCheck(reach: Reachability, now: number): Check {
  if (!reach.answered) return skip('clock', 'not checked: the service did not answer');
  const server = reach.serverDate ? Date.parse(reach.serverDate) : Number.NaN;
  if (!Number.isFinite(server)) return skip('clock', 'not checked: the service sent no Date header');
  // The Date header has whole seconds: a difference below one second means nothing.
  const skew = Math.round((now - server) / 1000);
  const size = Math.abs(skew);
  if (size <= MAX_CLOCK_SKEW_SECONDS) return pass('clock', `in step with the service (skew ${size} s)`);
  return {
    name: 'clock',
    status: 'warn',
    message: `this machine's clock is ${size} s ${skew > 0 ? 'ahead of' : 'behind'} the service's`,
    fix: 'Synchronise the clock (NTP: timedatectl set-ntp true, or your system settings); logs and Retry-After dates depend on it.',
  };
}

export interface KeyChecks {
  key: Check;
  authHeader: Check;
}

const OTHER: Record<AuthHeader, AuthHeader> = { bearer: 'x-api-key', 'x-api-key': 'bearer' };

/** ", plan pro, balance 1,000" from an answer of /api/me in any layout adaptAccount reads. */
function describeAccount(data: unknown): string {
  let account: Account;
  try {
    account = adaptAccount(data);
  } catch {
    return '';
  }
  const parts: string[] = [];
  if (account.plan !== '') parts.push(`plan ${account.plan}`);
  if (Number.isFinite(account.balance)) parts.push(`balance ${account.balance.toLocaleString('en-US')}`);
  return parts.length > 0 ? `, ${parts.join(', ')}` : '';
}

/**
 * GET /api/me with the configured header; when the key is refused, once more with the other
 * header, so that a service expecting `x-api-key` is told apart from a bad key.
 */
export async function keyChecks(
  config: Config,
  clientFor: (header: AuthHeader) => Client,
  canReach: boolean,
  provenance?: Provenance,
): Promise<KeyChecks> {
  const header = config.authHeader.value;
  if (!config.apiKey?.value) {
    const missing = new Problem({
      code: 'invalid_api_key',
      status: 401,
      title: 'No API key',
      detail: 'No API key configured.',
      source: 'client',
    });
    return { key: problemCheck('key', missing), authHeader: skip('auth header', 'not checked: no key') };
  }
  const source = config.apiKey.source;
  if (!canReach)
    return {
      key: skip('key', `present (from ${source}); not checked: the service did not answer`),
      authHeader: skip('auth header', 'not checked: the service did not answer'),
    };
  const call = (h: AuthHeader) =>
    clientFor(h).request<unknown>({ method: 'GET', path: '/api/me', auth: true, spinner: false });
  try {
    const response = await call(header);
    return {
      key: pass('key', `valid (from ${source}${describeAccount(response.data)})`),
      authHeader: pass('auth header', `${header} accepted`),
    };
  } catch (error) {
    const problem = asProblem(error);
    // A refused key names where it came from and what overrides it.
    const origin = provenance ? ` ${keyOrigin(source, provenance)}` : '';
    if (problem.status !== 401)
      return {
        key: problemCheck('key', problem, `${problem.hint}${origin}`),
        authHeader: skip('auth header', 'not checked'),
      };
    const other = OTHER[header];
    const accepted = await call(other).then(
      (response) => response,
      () => undefined,
    );
    if (!accepted)
      return {
        key: problemCheck('key', problem, `${problem.hint}${origin}`),
        authHeader: skip('auth header', `not conclusive: the key was refused as ${header} and as ${other}`),
      };
    return {
      key: pass('key', `valid when sent as ${other} (from ${source}${describeAccount(accepted.data)})`),
      authHeader: failure(
        'auth header',
        `the service refused the key sent as ${header} but accepted it as ${other}`,
        `Pass --auth-header ${other}, set COMPANY_DATA_AUTH_HEADER=${other}, or run \`company-data config set auth-header ${other}\`.`,
        'invalid_api_key',
        3,
      ),
    };
  }
}
