// `company-data doctor`: checks the setup one thing at a time and says how to fix what fails.
// It cannot use the usual context directly: a key file with loose permissions or a bad setting
// stops every other command, and doctor must still report on the rest.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { CommandKit, Invocation } from '../command-kit.js';
import type { ConfigFile, GlobalFlags } from '../config.js';
import { isProblem } from '../problem.js';
import type { AuthHeader, Client, Config, IO } from '../types.js';
import type { Check } from './doctor-checks.js';

export function register(program: Command, kit: CommandKit): void {
  program
    .command('doctor')
    .description('Check the setup: base URL, key, auth header, contract, permissions, clock, proxy')
    .addHelpText(
      'after',
      `
Each check prints one line (✓ / ✗, or ok / FAIL without Unicode) and, when it fails, the fix.
The profile check says which profile of the config file is in force and why (--profile,
COMPANY_DATA_PROFILE, \`config use\`, or none chosen); a profile that does not exist fails it.
Calls: GET /api/errors (public) and GET /api/me (never charged); nothing else is sent.
A clock more than 60 s off the service's Date header is a warning, not a failure.

Exit code: 0 when no check fails (warnings allowed); otherwise the exit code of the first
failing check's problem: 2 settings, an unknown profile, file permissions or a set-up mistake
on the way (an untrusted certificate, a proxy that wants credentials or is down, a server that
refuses HTTP/1.1), 3 key or auth header, 5 service unreachable, 1 a contract version mismatch.
-o json prints { ok, checks: [...] }.

Examples:
  $ company-data --sandbox doctor
  $ company-data doctor -o json
  $ company-data --profile cron doctor
  $ company-data --base-url https://api.example.com --api-key-file ~/.company-data.key doctor`,
    )
    .action(kit.withIO((io, invocation, flags) => runDoctor(flags, invocation, io)));
}

function safeParse<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch {
    return undefined;
  }
}

/**
 * The settings the usual way would have produced, but with files read whatever their mode and
 * unusable values skipped, so the remaining checks can still run. Precedence as in config.ts.
 */
async function lenientConfig(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv,
  stdoutIsTTY: boolean,
): Promise<Config> {
  const c = await import('../config.js');
  const configPath = c.configFilePath(env);
  const file: ConfigFile | undefined = await c
    .readConfigFile(configPath, { checkPermissions: false })
    .catch(() => undefined);
  // An unknown or unreadable profile lends no settings: better none than another profile's key.
  const chosen = safeParse(() => c.profileSettings(flags, env, file, configPath));
  const stored = chosen?.members ?? {};
  const fileKey = c.storedKey(stored);
  const origin = { source: 'flag' as const, label: '' };
  const first = <T>(parse: (raw: unknown, o: typeof origin) => T, ...raws: unknown[]) => {
    for (const [i, raw] of raws.entries()) {
      if (raw === undefined || raw === null || raw === '') continue;
      const value = safeParse(() => parse(raw, origin));
      if (value !== undefined) return { value, source: (['flag', 'environment', 'config file'] as const)[i] };
    }
    return undefined;
  };
  let apiKey: Config['apiKey'];
  if (flags.apiKeyFile !== undefined) {
    const text = await readFile(flags.apiKeyFile, 'utf8').catch(() => '');
    if (text.trim()) apiKey = { value: text.trim(), source: 'flag' };
  } else if (env.COMPANY_DATA_API_KEY?.trim())
    apiKey = { value: env.COMPANY_DATA_API_KEY.trim(), source: 'environment' };
  else if (fileKey) apiKey = { value: fileKey, source: 'config file' };
  return {
    profile: chosen && { value: chosen.profile.value, source: chosen.profile.source },
    baseUrl: first(c.parseBaseUrl, flags.baseUrl, env.COMPANY_DATA_BASE_URL, stored.base_url),
    apiKey,
    authHeader: first(
      c.parseAuthHeader,
      flags.authHeader,
      env.COMPANY_DATA_AUTH_HEADER,
      stored.auth_header,
    ) ?? {
      value: 'bearer',
      source: 'default',
    },
    format: first(c.parseFormat, flags.format, env.COMPANY_DATA_FORMAT, stored.format) ?? {
      value: stdoutIsTTY ? 'table' : 'json',
      source: 'default',
    },
    timeoutMs: first(c.parseTimeoutMs, flags.timeout, env.COMPANY_DATA_TIMEOUT, stored.timeout) ?? {
      value: c.DEFAULT_TIMEOUT_SECONDS * 1000,
      source: 'default',
    },
    retries: first(c.parseRetries, flags.retries, env.COMPANY_DATA_RETRIES, stored.retries) ?? {
      value: c.DEFAULT_RETRIES,
      source: 'default',
    },
    allowInsecureHttp: Boolean(flags.allowInsecureHttp),
    csvRaw: Boolean(flags.csvRaw),
    configPath,
    cacheDir: c.cacheDirFor(env),
  };
}

const OTHER_HEADER: Record<AuthHeader, AuthHeader> = { bearer: 'x-api-key', 'x-api-key': 'bearer' };

/** A diagnosis should answer quickly: at most one retry and a 10 s timeout per attempt. */
const DOCTOR_TIMEOUT_MS = 10_000;

export async function runDoctor(flags: GlobalFlags, invocation: Invocation, io: IO): Promise<number> {
  const [checks, { proxyCheck }, { createContext }, { createClient }, { configFilePath }] = await Promise.all(
    [
      import('./doctor-checks.js'),
      import('./doctor-proxy.js'),
      import('../context.js'),
      import('../http/client.js'),
      import('../config.js'),
    ],
  );
  const { env } = invocation;
  const results: Check[] = [
    await checks.filePermissions('config file', configFilePath(env), false),
    await checks.profileCheck(flags, env),
  ];
  if (flags.apiKeyFile !== undefined)
    results.push(await checks.filePermissions('key file', flags.apiKeyFile, true));

  let config: Config;
  try {
    const ctx = await createContext(flags, invocation, io);
    invocation.context = ctx;
    config = ctx.config;
  } catch (error) {
    if (!isProblem(error)) throw error;
    // A permission failure or an unknown profile is already a check of its own; anything else gets one.
    if (!results.some((c) => c.status === 'fail')) results.push(checks.problemCheck('settings', error));
    config = await lenientConfig(flags, env, io.isStdoutTTY);
    if (flags.sandbox) {
      // As context.ts would have done, had the settings been readable.
      const { startSandbox, isLayoutName } = await import('../sandbox/index.js');
      const named = env.COMPANY_DATA_SANDBOX_LAYOUT?.trim() ?? '';
      const layout = isLayoutName(named) ? named : undefined;
      const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, layout });
      invocation.cleanups.push(() => sandbox.close());
      config.baseUrl = { value: sandbox.url, source: 'sandbox' };
      config.apiKey = { value: sandbox.keys.full, source: 'sandbox' };
    }
  }

  const clients: Client[] = [];
  const inSandbox = config.baseUrl?.source === 'sandbox';
  const clientFor = (header: AuthHeader): Client => {
    const client = createClient(
      {
        ...config,
        authHeader: { value: header, source: config.authHeader.source },
        timeoutMs: { ...config.timeoutMs, value: Math.min(config.timeoutMs.value, DOCTOR_TIMEOUT_MS) },
        retries: { ...config.retries, value: Math.min(config.retries.value, 1) },
      },
      { log: io.verbose ? (line) => io.debug(line) : undefined, env, direct: inSandbox },
    );
    clients.push(client);
    return client;
  };
  const provenance = await checks.provenanceOf(flags, env);
  try {
    const baseCheck = checks.baseUrlCheck(config, inSandbox ? undefined : provenance);
    const proxy = proxyCheck(env, config.baseUrl?.value, { sandbox: inSandbox });
    results.push(baseCheck, proxy.check);
    let reach: Awaited<ReturnType<typeof checks.reachability>> = {
      check: { name: 'reachable', status: 'skip', message: 'not checked: no base URL' },
      answered: false,
    };
    if (baseCheck.status === 'pass')
      reach = await checks.reachability(clientFor(config.authHeader.value), proxy.note);
    results.push(reach.check, checks.contractCheck(reach), checks.clockCheck(reach, invocation.now()));
    const keys = await checks.keyChecks(config, clientFor, reach.answered, provenance);
    results.push(keys.key, keys.authHeader);
    // What it recognised of the open shapes, from free calls only (src/commands/doctor-layout.ts).
    const { layoutChecks } = await import('./doctor-layout.js');
    const keyWorks = keys.key.status === 'pass';
    const header =
      keys.authHeader.status === 'fail' ? OTHER_HEADER[config.authHeader.value] : config.authHeader.value;
    results.push(...(await layoutChecks(clientFor(header), reach.answered, keyWorks)));
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
  }
  await printChecks(io, config, results);
  const failed = results.find((c) => c.status === 'fail');
  return failed ? (failed.exitCode ?? 1) : 0;
}

const MARKS = {
  unicode: { pass: '✓', fail: '✗', warn: '!', skip: '-' },
  ascii: { pass: 'ok', fail: 'FAIL', warn: 'WARN', skip: 'skip' },
};
const COLORS = { pass: '\x1b[32m', fail: '\x1b[31m', warn: '\x1b[33m', skip: '\x1b[2m' };

async function printChecks(io: IO, config: Config, results: Check[]): Promise<void> {
  const { oneLine } = await import('../output/sanitize.js');
  const ok = !results.some((c) => c.status === 'fail');
  const format = config.format.value;
  if (format === 'json') {
    io.out(`${JSON.stringify({ ok, checks: results }, null, 2)}\n`);
  } else if (format === 'ndjson') {
    io.out(results.map((c) => `${JSON.stringify(c)}\n`).join(''));
  } else if (format === 'csv') {
    const { renderCsv } = await import('../output/csv.js');
    const rows = results.map((c) => ({ ...c }) as Record<string, unknown>);
    io.out(renderCsv(['name', 'status', 'message', 'fix', 'code'], rows, { raw: config.csvRaw }));
  } else {
    const marks = io.unicode ? MARKS.unicode : MARKS.ascii;
    const width = Math.max(...Object.values(marks).map((m) => m.length));
    for (const c of results) {
      const mark = marks[c.status].padEnd(width);
      const shown = io.color ? `${COLORS[c.status]}${mark}\x1b[0m` : mark;
      io.out(`${shown} ${c.name}: ${oneLine(c.message)}\n`);
      if (c.fix && c.status !== 'pass') io.out(`${' '.repeat(width)}   fix: ${oneLine(c.fix)}\n`);
    }
  }
  const failures = results.filter((c) => c.status === 'fail').length;
  io.info(ok ? 'No problems found.' : `${failures} check${failures === 1 ? '' : 's'} failed.`);
}
