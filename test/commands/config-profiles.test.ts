// Profiles (docs/configuration.md): `config list`, `config use`, `--profile` and
// COMPANY_DATA_PROFILE, `config show` naming the profile and why, set-key / set / unset writing
// to the profile in force, and an unknown profile refused with the ones that exist. The service
// is the case's sandbox (its URL from COMPANY_DATA_BASE_URL); the profiles differ in their keys.
import { describe, it } from 'vitest';
import { type CommandCase, DIR, expectCase, KEYS, lines, usageLine } from '../helpers/command-cases.js';

const CONFIG_FILE = `${DIR}/config/company-data/config.json`;
const CONFIG = 'config/company-data/config.json';
const json = (data: unknown) => `${JSON.stringify(data, null, 2)}\n`;
const privateFile = (data: unknown) => ({ text: json(data), mode: 0o600 });
const NO_FILE_YET = 'There is no config file yet; `company-data config set-key` creates it.';
const NONE_CHOSEN = "In force: default (none chosen: the config file's top-level settings).";
/** No key from the environment: each profile's own key is the one used. */
const KEY_FROM_PROFILE = { COMPANY_DATA_API_KEY: undefined };

/** A single-profile file as it was before profiles, plus two named profiles. */
const THREE = {
  api_key: KEYS.full,
  profiles: {
    cron: { api_key: KEYS.free, format: 'csv', retries: 1 },
    ci: { api_key: KEYS.restricted, auth_header: 'x-api-key', timeout: 2.5 },
  },
};
const CRON_CURRENT = { ...THREE, current_profile: 'cron' };
/** The way out of an unknown profile: create it, or leave it the way it was chosen. */
const createHint = (name: string, chosen: 'flag' | 'environment' | 'file' = 'file') =>
  `Create it with \`company-data config set-key --profile ${name}\` (the key from stdin), or ${
    chosen === 'environment'
      ? 'unset COMPANY_DATA_PROFILE (or set it to one of those)'
      : chosen === 'flag'
        ? 'give --profile one of those'
        : 'choose one of those with `company-data config use <profile>`'
  }; \`company-data config list\` lists them.`;

const list: CommandCase[] = [
  {
    name: 'list on a terminal: a row per profile, the one in force marked, and why on stderr',
    argv: ['config', 'list'],
    tty: true,
    env: KEY_FROM_PROFILE,
    files: { [CONFIG]: privateFile(THREE) },
    wantCode: 0,
    wantStdout: lines(
      '┌─────────┬────────┬───────────┬──────────┐',
      '│ profile │ active │ api-key   │ base-url │',
      '├─────────┼────────┼───────────┼──────────┤',
      '│ default │ yes    │ cd_s…9c2e │ —        │',
      '│ cron    │ no     │ cd_s…1a77 │ —        │',
      '│ ci      │ no     │ cd_s…8e40 │ —        │',
      '└─────────┴────────┴───────────┴──────────┘',
    ),
    wantStderr: lines(NONE_CHOSEN),
  },
  {
    name: 'list piped with current_profile: cron in force, so in its format (CSV)',
    argv: ['config', 'list'],
    tty: false,
    env: KEY_FROM_PROFILE,
    files: { [CONFIG]: privateFile(CRON_CURRENT) },
    wantCode: 0,
    // The format is cron's own: CSV.
    wantStdout: lines(
      'profile,active,api-key,base-url',
      'default,false,cd_s…9c2e,',
      'cron,true,cd_s…1a77,',
      'ci,false,cd_s…8e40,',
    ),
    wantStderr: lines('In force: cron (chosen with `config use`).'),
  },
  {
    name: 'list -o json with COMPANY_DATA_PROFILE: the environment wins over current_profile',
    argv: ['config', 'list', '-o', 'json'],
    tty: true,
    env: { ...KEY_FROM_PROFILE, COMPANY_DATA_PROFILE: 'ci' },
    files: { [CONFIG]: privateFile(CRON_CURRENT) },
    wantCode: 0,
    wantStdout: json([
      {
        profile: 'default',
        active: false,
        'api-key': 'cd_s…9c2e',
        'base-url': null,
        'auth-header': null,
        format: null,
        timeout: null,
        retries: null,
      },
      {
        profile: 'cron',
        active: false,
        'api-key': 'cd_s…1a77',
        'base-url': null,
        'auth-header': null,
        format: 'csv',
        timeout: null,
        retries: 1,
      },
      {
        profile: 'ci',
        active: true,
        'api-key': 'cd_s…8e40',
        'base-url': null,
        'auth-header': 'x-api-key',
        format: null,
        timeout: 2.5,
        retries: null,
      },
    ]),
    wantStderr: lines('In force: ci (from COMPANY_DATA_PROFILE).'),
  },
  {
    name: 'list piped without a config file: the default profile alone, empty',
    argv: ['config', 'list'],
    tty: false,
    wantCode: 0,
    wantStdout: json([
      {
        profile: 'default',
        active: true,
        'api-key': null,
        'base-url': null,
        'auth-header': null,
        format: null,
        timeout: null,
        retries: null,
      },
    ]),
    wantStderr: lines(NONE_CHOSEN, NO_FILE_YET),
  },
  {
    name: 'list with --profile naming no profile: the profiles that exist, none active, and the way out',
    argv: ['--profile', 'nightly', 'config', 'list'],
    tty: true,
    files: { [CONFIG]: privateFile(THREE) },
    wantCode: 0,
    wantStdout: lines(
      '┌─────────┬────────┬───────────┬──────────┐',
      '│ profile │ active │ api-key   │ base-url │',
      '├─────────┼────────┼───────────┼──────────┤',
      '│ default │ no     │ cd_s…9c2e │ —        │',
      '│ cron    │ no     │ cd_s…1a77 │ —        │',
      '│ ci      │ no     │ cd_s…8e40 │ —        │',
      '└─────────┴────────┴───────────┴──────────┘',
    ),
    wantStderr: lines(
      `In force: nightly (from --profile), which is not in ${CONFIG_FILE}: create it with \`company-data config set-key --profile nightly\`, or give --profile one of these.`,
    ),
  },
  {
    name: 'COMPANY_DATA_PROFILE=missing config list: works, and its hint does not recommend itself',
    argv: ['config', 'list'],
    tty: false,
    env: { COMPANY_DATA_PROFILE: 'missing' },
    files: { [CONFIG]: privateFile(THREE) },
    wantCode: 0,
    wantStdout: `${JSON.stringify(
      [
        ['default', KEYS.full],
        ['cron', KEYS.free],
        ['ci', KEYS.restricted],
      ].map(([profile, key]) => ({
        profile,
        active: false,
        'api-key': `${key.slice(0, 4)}…${key.slice(-4)}`,
        'base-url': null,
        'auth-header': profile === 'ci' ? 'x-api-key' : null,
        format: profile === 'cron' ? 'csv' : null,
        timeout: profile === 'ci' ? 2.5 : null,
        retries: profile === 'cron' ? 1 : null,
      })),
      null,
      2,
    )}\n`,
    wantStderr: lines(
      `In force: missing (from COMPANY_DATA_PROFILE), which is not in ${CONFIG_FILE}: create it with \`company-data config set-key --profile missing\`, or unset COMPANY_DATA_PROFILE.`,
    ),
  },
];

const show: CommandCase[] = [
  {
    name: 'show with --profile: the profile from the flag, its settings from the file, its format (CSV)',
    argv: ['--profile', 'cron', 'config', 'show'],
    tty: false,
    env: KEY_FROM_PROFILE,
    files: { [CONFIG]: privateFile(THREE) },
    wantCode: 0,
    wantStdout: lines(
      'setting,value,source',
      'profile,cron,flag',
      'base-url,http://127.0.0.1:PORT,environment',
      'api-key,cd_s…1a77,config file',
      'auth-header,bearer,default',
      'format,csv,config file',
      'timeout,30,default',
      'retries,1,config file',
      `config-file,${CONFIG_FILE},environment`,
      `cache-dir,${DIR}/cache/company-data,environment`,
    ),
    wantStderr: '',
  },
  {
    name: 'show on a terminal with COMPANY_DATA_PROFILE: a named profile inherits nothing from the top level',
    argv: ['config', 'show'],
    tty: true,
    env: { ...KEY_FROM_PROFILE, COMPANY_DATA_PROFILE: 'ci' },
    files: { [CONFIG]: privateFile({ ...CRON_CURRENT, format: 'ndjson', retries: 5 }) },
    wantCode: 0,
    wantStdout: lines(
      '┌─────────────┬─────────────────────────────────────────────────┬─────────────┐',
      '│ setting     │ value                                           │ source      │',
      '├─────────────┼─────────────────────────────────────────────────┼─────────────┤',
      '│ profile     │ ci                                              │ environment │',
      // The real port has five digits: one column more than PORT.
      '│ base-url    │ http://127.0.0.1:PORT                          │ environment │',
      '│ api-key     │ cd_s…8e40                                       │ config file │',
      '│ auth-header │ x-api-key                                       │ config file │',
      '│ format      │ table                                           │ default     │',
      '│ timeout     │ 2.5                                             │ config file │',
      '│ retries     │ 3                                               │ default     │',
      `│ config-file │ ${CONFIG_FILE} │ environment │`,
      `│ cache-dir   │ ${DIR}/cache/company-data              │ environment │`,
      '└─────────────┴─────────────────────────────────────────────────┴─────────────┘',
    ),
    wantStderr: '',
  },
  {
    name: 'show -o json with current_profile: "config file" is why; the environment key still wins',
    argv: ['config', 'show', '-o', 'json'],
    tty: false,
    files: { [CONFIG]: privateFile(CRON_CURRENT) },
    wantCode: 0,
    wantStdout: json([
      { setting: 'profile', value: 'cron', source: 'config file' },
      { setting: 'base-url', value: 'http://127.0.0.1:PORT', source: 'environment' },
      { setting: 'api-key', value: 'cd_s…9c2e', source: 'environment' },
      { setting: 'auth-header', value: 'bearer', source: 'default' },
      { setting: 'format', value: 'json', source: 'flag' },
      { setting: 'timeout', value: 30, source: 'default' },
      { setting: 'retries', value: 1, source: 'config file' },
      { setting: 'config-file', value: CONFIG_FILE, source: 'environment' },
      { setting: 'cache-dir', value: `${DIR}/cache/company-data`, source: 'environment' },
    ]),
    wantStderr: '',
  },
  {
    name: 'a bad value in a named profile names the profile and the file',
    argv: ['--profile', 'cron', 'config', 'show'],
    tty: true,
    files: { [CONFIG]: privateFile({ profiles: { cron: { retries: 99 } } }) },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Configuration error (config_error)',
      `  profiles.cron.retries in ${CONFIG_FILE}: retries must be a whole number from 0 to 10, got 99`,
      '  Run `company-data config show` to see which settings are in effect.',
    ),
  },
  {
    name: 'profiles.default is refused: the default profile is the top level',
    argv: ['config', 'show'],
    tty: true,
    files: { [CONFIG]: privateFile({ profiles: { default: { api_key: KEYS.full } } }) },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Configuration error (config_error)',
      `  profiles.default in ${CONFIG_FILE}: the default profile is the file's top-level settings; move its members to the top level`,
      '  Run `company-data config show` to see which settings are in effect.',
    ),
  },
];

const inForce: CommandCase[] = [
  {
    name: 'me with --profile: the profile key (free) answers',
    argv: ['--profile', 'cron', 'me', '-o', 'json'],
    tty: false,
    env: KEY_FROM_PROFILE,
    files: { [CONFIG]: privateFile(THREE) },
    wantCode: 0,
    wantStdout: json({
      plan: 'free',
      balance: 1000,
      key_name: 'free',
      capabilities: ['domains', 'search', 'breakdown', 'lookalike'],
      rate_limit_per_second: null,
    }),
    wantStderr: '',
  },
  {
    name: 'an unknown profile from current_profile: exit 2 naming the file, one JSON line piped',
    argv: ['me'],
    tty: false,
    files: { [CONFIG]: privateFile({ ...THREE, current_profile: 'gone' }) },
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine(
      `there is no profile "gone" (current_profile in ${CONFIG_FILE}); the profiles are: default, cron, ci`,
      createHint('gone'),
    ),
  },
  {
    name: 'a named profile holding only a key: the error says profiles inherit nothing',
    argv: ['--profile', 'cron', 'me'],
    tty: true,
    env: { COMPANY_DATA_BASE_URL: undefined, COMPANY_DATA_API_KEY: undefined },
    files: {
      [CONFIG]: privateFile({
        base_url: 'https://api.example.com',
        profiles: { cron: { api_key: KEYS.free } },
      }),
    },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Configuration error (config_error)',
      '  No service URL is configured: set --base-url or COMPANY_DATA_BASE_URL, or use --sandbox. The profile in force, "cron", has no base_url, and profiles inherit nothing from the config file\'s top-level settings: `company-data --profile cron config set base-url <url>` gives it one.',
      '  Run `company-data config show` to see which settings are in effect.',
    ),
  },
  {
    name: 'an unknown profile from COMPANY_DATA_PROFILE without a config file: only "default" exists',
    argv: ['me'],
    tty: true,
    env: { COMPANY_DATA_PROFILE: 'cron' },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  there is no profile "cron" (from COMPANY_DATA_PROFILE); the profiles are: default',
      `  ${createHint('cron', 'environment')}`,
    ),
  },
  {
    name: 'a profile name that cannot be one: exit 2 with the rule',
    argv: ['--profile', '../etc', 'me'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  --profile: a profile name is letters, digits, - and _ (at most 64, starting with a letter or digit), got "../etc"',
    ),
  },
];

const use: CommandCase[] = [
  {
    name: 'use on a terminal: current_profile written, the file private, the rest untouched',
    argv: ['config', 'use', 'cron'],
    tty: true,
    files: { [CONFIG]: privateFile(THREE) },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Now using profile cron (current_profile in ${CONFIG_FILE}).`),
    wantFiles: {
      [CONFIG]: json({ api_key: KEYS.full, current_profile: 'cron', profiles: THREE.profiles }),
    },
    wantModes: { [CONFIG]: 0o600 },
  },
  {
    name: 'use default piped: current_profile removed, the file as a single-profile one had it',
    argv: ['config', 'use', 'default'],
    tty: false,
    files: { [CONFIG]: privateFile({ api_key: KEYS.full, current_profile: 'cron', profiles: {} }) },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Now using the default profile (the top-level settings of ${CONFIG_FILE}).`),
    wantFiles: { [CONFIG]: json({ api_key: KEYS.full, profiles: {} }) },
  },
  {
    name: 'use with COMPANY_DATA_PROFILE set to another: written, and a warning that it still wins',
    argv: ['config', 'use', 'ci'],
    tty: true,
    env: { COMPANY_DATA_PROFILE: 'cron' },
    files: { [CONFIG]: privateFile(THREE) },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(
      `Now using profile ci (current_profile in ${CONFIG_FILE}).`,
      'COMPANY_DATA_PROFILE=cron is set here, and it still overrides this choice.',
    ),
    wantFiles: { [CONFIG]: json({ api_key: KEYS.full, current_profile: 'ci', profiles: THREE.profiles }) },
  },
  {
    name: 'use of a profile that does not exist: exit 2, the file unchanged',
    argv: ['config', 'use', 'nightly'],
    tty: true,
    files: { [CONFIG]: privateFile(THREE) },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  there is no profile "nightly"; the profiles are: default, cron, ci',
      `  ${createHint('nightly')}`,
    ),
    wantFiles: { [CONFIG]: json(THREE) },
  },
  {
    name: 'use default without a config file: nothing to write, none created',
    argv: ['config', 'use', 'default'],
    tty: false,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Now using the default profile (the top-level settings of ${CONFIG_FILE}).`),
    wantFiles: { [CONFIG]: null },
  },
];

const writes: CommandCase[] = [
  {
    name: 'set-key --profile: a new profile, the top-level key kept, mode 0600',
    argv: ['config', 'set-key', '--profile', 'cron'],
    tty: false,
    stdin: `${KEYS.free}\n`,
    files: { [CONFIG]: privateFile({ api_key: KEYS.full }) },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Saved the API key cd_s…1a77 to the new profile cron in ${CONFIG_FILE} (mode 0600).`),
    wantFiles: { [CONFIG]: json({ api_key: KEYS.full, profiles: { cron: { api_key: KEYS.free } } }) },
    wantModes: { [CONFIG]: 0o600 },
  },
  {
    name: 'set with COMPANY_DATA_PROFILE: into that profile, its other settings kept',
    argv: ['config', 'set', 'format', 'ndjson'],
    tty: true,
    env: { COMPANY_DATA_PROFILE: 'ci' },
    files: { [CONFIG]: privateFile(THREE) },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Set format = ndjson in profile ci in ${CONFIG_FILE}.`),
    wantFiles: {
      [CONFIG]: json({
        api_key: KEYS.full,
        profiles: { ...THREE.profiles, ci: { ...THREE.profiles.ci, format: 'ndjson' } },
      }),
    },
  },
  {
    name: 'set in the default profile of a file with profiles: the top level, the profiles untouched',
    argv: ['config', 'set', 'retries', '2'],
    tty: false,
    files: { [CONFIG]: privateFile(CRON_CURRENT) },
    env: { COMPANY_DATA_PROFILE: 'default' },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Set retries = 2 in ${CONFIG_FILE}.`),
    wantFiles: {
      [CONFIG]: json({ api_key: KEYS.full, retries: 2, current_profile: 'cron', profiles: THREE.profiles }),
    },
  },
  {
    name: 'unset with current_profile: from the profile in force',
    argv: ['config', 'unset', 'retries'],
    tty: true,
    files: { [CONFIG]: privateFile(CRON_CURRENT) },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Removed retries from profile cron in ${CONFIG_FILE}.`),
    wantFiles: {
      [CONFIG]: json({
        api_key: KEYS.full,
        current_profile: 'cron',
        profiles: { ...THREE.profiles, cron: { api_key: KEYS.free, format: 'csv' } },
      }),
    },
  },
  {
    name: 'unset in a profile that does not exist: nothing to remove, nothing written',
    argv: ['--profile', 'nightly', 'config', 'unset', 'format'],
    tty: false,
    files: { [CONFIG]: privateFile(THREE) },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`format was not set in profile nightly in ${CONFIG_FILE}.`),
    wantFiles: { [CONFIG]: json(THREE) },
  },
];

describe('config with profiles', () => {
  describe('list', () => it.each(list)('$name', expectCase));
  describe('show', () => it.each(show)('$name', expectCase));
  describe('the profile in force', () => it.each(inForce)('$name', expectCase));
  describe('use', () => it.each(use)('$name', expectCase));
  describe('set-key, set, unset', () => it.each(writes)('$name', expectCase));

  it('config --help: the precedence, how a profile is chosen, and examples', () =>
    expectCase({
      name: 'config --help',
      argv: ['config', '--help'],
      tty: false,
      wantCode: 0,
      wantStdout: lines(
        'Usage: company-data config [options] [command]',
        '',
        'Show and change settings and profiles (key, base URL, format)',
        '',
        'Options:',
        '  -h, --help                display help for command',
        '',
        'Commands:',
        '  show                      Show the profile and each setting, its value (the key redacted) and',
        '                            where it came from',
        '  list                      List the profiles of the config file, their keys (redacted) and base',
        '                            URLs',
        '  use <profile>             Make a profile the one in force when neither --profile nor',
        '                            COMPANY_DATA_PROFILE says',
        '  path                      Print the path of the config file',
        '  set-key                   Store the API key in the config file, read from stdin (hidden on a',
        '                            terminal)',
        '  set <name> <value>        Store a setting in the config file (base-url, auth-header, format,',
        '                            timeout, retries, credits-charged-header, credits-remaining-header,',
        '                            store-connections)',
        '  unset <name>              Remove a setting from the config file (api-key, base-url, auth-header,',
        '                            format, timeout, retries, credits-charged-header,',
        '                            credits-remaining-header, store-connections)',
        '  delete-profile <profile>  Remove a named profile, its key and settings, from the config file',
        '  help [command]            display help for command',
        '',
        'Precedence: flags > environment (COMPANY_DATA_*) > config file (the profile in force) > defaults.',
        'The profile in force: --profile, else COMPANY_DATA_PROFILE, else the one `config use` chose, else',
        '"default" (the config file\'s top-level settings). set-key, set and unset change that profile,',
        'creating it when it is new; each profile has its own key and settings. The config file',
        '($XDG_CONFIG_HOME/company-data/config.json) must be private (chmod 600).',
        '',
        'Examples:',
        '  $ company-data --sandbox config show',
        '  $ printf \'%s\' "$MY_KEY" | company-data config set-key',
        '  $ company-data config set base-url https://api.example.com',
        '  $ company-data config set-key --profile cron < ~/secrets/cron.key',
        '  $ company-data config use cron',
        '  $ company-data config list',
        '  $ company-data config delete-profile cron',
      ),
      wantStderr: '',
    }));
});
