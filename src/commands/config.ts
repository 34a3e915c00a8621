// `company-data config`: where settings come from, and the one safe way to store the key.
// There is deliberately no option taking the key on the command line: argv is visible to other
// users (ps) and lands in shell history. The key comes from stdin, unechoed on a terminal.
import type { Command } from 'commander';
import type { CommandKit } from '../command-kit.js';
import { Problem, usageError } from '../problem.js';
import type { Context, IO } from '../types.js';

/** `config set` names -> config file members. */
const SETTABLE: Record<string, string> = {
  'base-url': 'base_url',
  'auth-header': 'auth_header',
  format: 'format',
  timeout: 'timeout',
  retries: 'retries',
};

export function register(program: Command, kit: CommandKit): void {
  const config = program
    .command('config')
    .description('Show and change settings (key, base URL, format)')
    .addHelpText(
      'after',
      `
Precedence: flags > environment (COMPANY_DATA_*) > config file > defaults.
The config file ($XDG_CONFIG_HOME/company-data/config.json) must be private (chmod 600).

Examples:
  $ company-data --sandbox config show
  $ printf '%s' "$MY_KEY" | company-data config set-key
  $ company-data config set base-url https://api.example.com`,
    );
  config
    .command('show')
    .description('Show each setting, its value (the key redacted) and where it came from')
    .action(kit.withContext(runConfigShow));
  config
    .command('path')
    .description('Print the path of the config file')
    .action(
      kit.withIO(async (io, { env }) => io.out(`${(await import('../config.js')).configFilePath(env)}\n`)),
    );
  config
    .command('set-key')
    .description('Store the API key in the config file, read from stdin (hidden on a terminal)')
    .addHelpText('after', '\nExample:\n  $ company-data config set-key < ~/secrets/company-data.key')
    .action(kit.withIO((io, { env }) => runSetKey(io, env)));
  config
    .command('set <name> <value>')
    .description(`Store a setting in the config file (${Object.keys(SETTABLE).join(', ')})`)
    .action(kit.withIO((io, { env }, _flags, name: string, value: string) => runSet(io, env, name, value)));
  config
    .command('unset <name>')
    .description(`Remove a setting from the config file (api-key, ${Object.keys(SETTABLE).join(', ')})`)
    .action(kit.withIO((io, { env }, _flags, name: string) => runUnset(io, env, name)));
}

const SECONDS = 1000;

export async function runConfigShow(ctx: Context): Promise<number> {
  const [{ redactKey }, { printList }, { existsSync }] = await Promise.all([
    import('../config.js'),
    import('../output/format.js'),
    import('node:fs'),
  ]);
  const c = ctx.config;
  const rows = [
    { setting: 'base-url', value: c.baseUrl?.value ?? null, source: c.baseUrl?.source ?? 'not set' },
    {
      setting: 'api-key',
      value: c.apiKey ? redactKey(c.apiKey.value) : null,
      source: c.apiKey?.source ?? 'not set',
    },
    { setting: 'auth-header', value: c.authHeader.value, source: c.authHeader.source },
    { setting: 'format', value: c.format.value, source: c.format.source },
    { setting: 'timeout', value: c.timeoutMs.value / SECONDS, source: c.timeoutMs.source },
    { setting: 'retries', value: c.retries.value, source: c.retries.source },
    {
      setting: 'config-file',
      value: c.configPath,
      source: ctx.env.XDG_CONFIG_HOME ? 'environment' : 'default',
    },
    {
      setting: 'cache-dir',
      value: c.cacheDir,
      source: ctx.env.XDG_CACHE_HOME ? 'environment' : 'default',
    },
  ];
  printList(ctx, rows, { columns: ['setting', 'value', 'source'] });
  if (!existsSync(c.configPath)) {
    ctx.io.info('There is no config file yet; `company-data config set-key` creates it.');
  }
  return 0;
}

/** Reads a line from a terminal without echoing it (raw mode), for secrets. */
function readHidden(io: IO, prompt: string): Promise<string> {
  const stdin = io.stdin as NodeJS.ReadStream;
  // warn, not info: the prompt must show even with --quiet, or the command would seem to hang.
  io.warn(prompt);
  return new Promise((resolve, reject) => {
    let input = '';
    const finish = (error?: Problem) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      if (error) reject(error);
      else resolve(input);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n' || ch === '\x04') return finish();
        if (ch === '\x03')
          return finish(new Problem({ code: 'interrupted', title: 'Interrupted', source: 'client' }));
        if (ch === '\x7f' || ch === '\b') input = input.slice(0, -1);
        else input += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.on('data', onData);
    stdin.resume();
  });
}

async function readAll(io: IO): Promise<string> {
  let text = '';
  for await (const chunk of io.stdin) text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
  return text;
}

export async function readKeyFromStdin(io: IO): Promise<string> {
  const raw = io.isStdinTTY
    ? await readHidden(io, 'API key (typing is hidden; end with Enter):')
    : await readAll(io);
  const key = raw.trim();
  if (key === '') {
    throw usageError(
      'no API key was given on stdin',
      'Pipe the key in, e.g. `company-data config set-key < key.txt`.',
    );
  }
  if (/\s/.test(key)) throw usageError('the API key must be a single word without spaces or line breaks');
  return key;
}

export async function runSetKey(io: IO, env: NodeJS.ProcessEnv): Promise<void> {
  const { configFilePath, readConfigFile, redactKey, writeConfigFile } = await import('../config.js');
  const key = await readKeyFromStdin(io);
  const path = configFilePath(env);
  // Permissions are not checked here: the file is rewritten with mode 0600 anyway.
  const existing = (await readConfigFile(path, { checkPermissions: false })) ?? {};
  await writeConfigFile(path, { ...existing, api_key: key });
  io.info(`Saved the API key ${redactKey(key)} to ${path} (mode 0600).`);
}

export async function runSet(io: IO, env: NodeJS.ProcessEnv, name: string, value: string): Promise<void> {
  const config = await import('../config.js');
  const member = SETTABLE[name];
  if (!member) {
    throw usageError(
      `unknown setting "${name}"; choose one of ${Object.keys(SETTABLE).join(', ')}`,
      'The key is stored with `company-data config set-key` (read from stdin).',
    );
  }
  const origin = { source: 'flag' as const, label: `config set ${name}` };
  const parsed: string | number =
    name === 'base-url'
      ? config.parseBaseUrl(value, origin)
      : name === 'auth-header'
        ? config.parseAuthHeader(value, origin)
        : name === 'format'
          ? config.parseFormat(value, origin)
          : name === 'timeout'
            ? config.parseTimeoutMs(value, origin) / SECONDS
            : config.parseRetries(value, origin);
  const path = config.configFilePath(env);
  const existing = (await config.readConfigFile(path, { checkPermissions: false })) ?? {};
  await config.writeConfigFile(path, { ...existing, [member]: parsed });
  io.info(`Set ${name} = ${parsed} in ${path}.`);
}

export async function runUnset(io: IO, env: NodeJS.ProcessEnv, name: string): Promise<void> {
  const config = await import('../config.js');
  const member = name === 'api-key' ? 'api_key' : SETTABLE[name];
  if (!member) throw usageError(`unknown setting "${name}"`);
  const path = config.configFilePath(env);
  const existing = await config.readConfigFile(path, { checkPermissions: false });
  if (!existing || !(member in existing)) {
    io.info(`${name} was not set in ${path}.`);
    return;
  }
  delete existing[member];
  await config.writeConfigFile(path, existing);
  io.info(`Removed ${name} from ${path}.`);
}
