// `config`: show (where each setting comes from), path, set, unset and set-key (the key from
// stdin, piped or typed unechoed on a terminal), with the config file's exact contents and mode.
import { describe, it } from 'vitest';
import { type CommandCase, DIR, expectCase, lines, usageLine } from '../helpers/command-cases.js';

const CONFIG_FILE = `${DIR}/config/company-data/config.json`;
const CONFIG = 'config/company-data/config.json';
const privateFile = (data: unknown) => ({ text: `${JSON.stringify(data, null, 2)}\n`, mode: 0o600 });
const json = (data: unknown) => `${JSON.stringify(data, null, 2)}\n`;
const NO_FILE_YET = 'There is no config file yet; `company-data config set-key` creates it.';

const show: CommandCase[] = [
  {
    name: 'show on a terminal: values from the environment, the key redacted, the rest defaults',
    argv: ['config', 'show'],
    tty: true,
    env: { COMPANY_DATA_BASE_URL: 'https://api.example.com', COMPANY_DATA_API_KEY: 'cd_live_abcdef123456' },
    wantCode: 0,
    wantStdout: lines(
      '┌─────────────┬─────────────────────────────────────────────────┬─────────────┐',
      '│ setting     │ value                                           │ source      │',
      '├─────────────┼─────────────────────────────────────────────────┼─────────────┤',
      '│ profile     │ default                                         │ default     │',
      '│ base-url    │ https://api.example.com                         │ environment │',
      '│ api-key     │ cd_l…3456                                       │ environment │',
      '│ auth-header │ bearer                                          │ default     │',
      '│ format      │ table                                           │ default     │',
      '│ timeout     │ 30                                              │ default     │',
      '│ retries     │ 3                                               │ default     │',
      `│ config-file │ ${CONFIG_FILE} │ environment │`,
      `│ cache-dir   │ ${DIR}/cache/company-data              │ environment │`,
      '└─────────────┴─────────────────────────────────────────────────┴─────────────┘',
    ),
    wantStderr: lines(NO_FILE_YET),
  },
  {
    name: 'show piped with nothing set: null values, "not set", JSON by default',
    argv: ['config', 'show'],
    tty: false,
    env: { COMPANY_DATA_BASE_URL: undefined, COMPANY_DATA_API_KEY: undefined },
    wantCode: 0,
    wantStdout: json([
      { setting: 'profile', value: 'default', source: 'default' },
      { setting: 'base-url', value: null, source: 'not set' },
      { setting: 'api-key', value: null, source: 'not set' },
      { setting: 'auth-header', value: 'bearer', source: 'default' },
      { setting: 'format', value: 'json', source: 'default' },
      { setting: 'timeout', value: 30, source: 'default' },
      { setting: 'retries', value: 3, source: 'default' },
      { setting: 'config-file', value: CONFIG_FILE, source: 'environment' },
      { setting: 'cache-dir', value: `${DIR}/cache/company-data`, source: 'environment' },
    ]),
    wantStderr: lines(NO_FILE_YET),
  },
  {
    name: 'show piped with flags and environment: flags win, -o csv applies to show itself',
    argv: ['--timeout', '2.5', '-o', 'csv', 'config', 'show'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: 'cd_live_abcdef123456', COMPANY_DATA_AUTH_HEADER: 'x-api-key' },
    wantCode: 0,
    wantStdout: lines(
      'setting,value,source',
      'profile,default,default',
      'base-url,http://127.0.0.1:PORT,environment',
      'api-key,cd_l…3456,environment',
      'auth-header,x-api-key,environment',
      'format,csv,flag',
      'timeout,2.5,flag',
      'retries,3,default',
      `config-file,${CONFIG_FILE},environment`,
      `cache-dir,${DIR}/cache/company-data,environment`,
    ),
    wantStderr: lines(NO_FILE_YET),
  },
  {
    name: 'show piped with a config file: its values, its format (ndjson) for the output',
    argv: ['config', 'show'],
    tty: false,
    env: { COMPANY_DATA_BASE_URL: undefined, COMPANY_DATA_API_KEY: undefined },
    files: {
      [CONFIG]: privateFile({
        base_url: 'https://api.example.com/',
        api_key: 'cd_file_key_0123456789',
        format: 'ndjson',
        retries: 1,
      }),
    },
    wantCode: 0,
    wantStdout: lines(
      '{"setting":"profile","value":"default","source":"default"}',
      '{"setting":"base-url","value":"https://api.example.com","source":"config file"}',
      '{"setting":"api-key","value":"cd_f…6789","source":"config file"}',
      '{"setting":"auth-header","value":"bearer","source":"default"}',
      '{"setting":"format","value":"ndjson","source":"config file"}',
      '{"setting":"timeout","value":30,"source":"default"}',
      '{"setting":"retries","value":1,"source":"config file"}',
      `{"setting":"config-file","value":"${CONFIG_FILE}","source":"environment"}`,
      `{"setting":"cache-dir","value":"${DIR}/cache/company-data","source":"environment"}`,
    ),
    wantStderr: '',
  },
  {
    name: 'show with a config file others can read: exit 2 with the chmod to run',
    argv: ['config', 'show'],
    tty: true,
    files: { [CONFIG]: { text: '{}\n', mode: 0o644 } },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Configuration error (config_error)',
      `  config file ${CONFIG_FILE} is readable by other users (mode 644); run: chmod 600 ${CONFIG_FILE}`,
      '  Run `company-data config show` to see which settings are in effect.',
    ),
  },
  {
    name: 'show with a config file that is not a JSON object: exit 2',
    argv: ['config', 'show'],
    tty: true,
    files: { [CONFIG]: { text: '["format"]\n', mode: 0o600 } },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Configuration error (config_error)',
      `  config file ${CONFIG_FILE} is not a JSON object; fix it or remove it`,
      '  Run `company-data config show` to see which settings are in effect.',
    ),
  },
];

const path: CommandCase[] = [
  {
    name: 'path on a terminal: under XDG_CONFIG_HOME',
    argv: ['config', 'path'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(CONFIG_FILE),
    wantStderr: '',
  },
  {
    name: 'path piped: the same line, whether or not the file exists',
    argv: ['config', 'path'],
    tty: false,
    files: { [CONFIG]: privateFile({}) },
    wantCode: 0,
    wantStdout: lines(CONFIG_FILE),
    wantStderr: '',
  },
];

const set: CommandCase[] = [
  {
    name: 'set on a terminal: creates the file, private',
    argv: ['config', 'set', 'format', 'csv'],
    tty: true,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Set format = csv in ${CONFIG_FILE}.`),
    wantFiles: { [CONFIG]: json({ format: 'csv' }) },
    wantModes: { [CONFIG]: 0o600 },
  },
  {
    name: 'set piped: keeps the other members, stores seconds as a number',
    argv: ['config', 'set', 'timeout', '2.5'],
    tty: false,
    files: { [CONFIG]: privateFile({ format: 'csv' }) },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Set timeout = 2.5 in ${CONFIG_FILE}.`),
    wantFiles: { [CONFIG]: json({ format: 'csv', timeout: 2.5 }) },
  },
  {
    name: 'set base-url: stored without the trailing slash',
    argv: ['config', 'set', 'base-url', 'https://api.example.com/'],
    tty: false,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Set base-url = https://api.example.com in ${CONFIG_FILE}.`),
    wantFiles: { [CONFIG]: json({ base_url: 'https://api.example.com' }) },
  },
  {
    name: 'set store-connections: the PostgreSQL store connections a process opens, as a number',
    argv: ['config', 'set', 'store-connections', '4'],
    tty: false,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Set store-connections = 4 in ${CONFIG_FILE}.`),
    wantFiles: { [CONFIG]: json({ store_connections: 4 }) },
  },
  {
    name: 'set store-connections below two: exit 2 saying why, no file written',
    argv: ['config', 'set', 'store-connections', '1'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine(
      'config set store-connections: store connections must be a whole number from 2 (one holds the process\'s lock, one runs its statements) to 32, got "1"',
      '',
    ),
    wantFiles: { [CONFIG]: null },
  },
  {
    name: 'set with an invalid value: exit 2, no file written',
    argv: ['config', 'set', 'format', 'xml'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  config set format: format must be one of table, json, ndjson, csv, got "xml"',
    ),
    wantFiles: { [CONFIG]: null },
  },
  {
    name: 'set of an unknown setting piped: exit 2 naming the settings (as text: no context)',
    argv: ['config', 'set', 'api-key', 'cd_live_abcdef123456'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine(
      'unknown setting "api-key"; choose one of base-url, auth-header, format, timeout, retries, credits-charged-header, credits-remaining-header, store-connections',
      'The key is stored with `company-data config set-key` (read from stdin).',
    ),
    wantFiles: { [CONFIG]: null },
  },
];

const unset: CommandCase[] = [
  {
    name: 'unset on a terminal: removes the member, keeps the rest',
    argv: ['config', 'unset', 'format'],
    tty: true,
    files: { [CONFIG]: privateFile({ format: 'csv', timeout: 2.5 }) },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Removed format from ${CONFIG_FILE}.`),
    wantFiles: { [CONFIG]: json({ timeout: 2.5 }) },
  },
  {
    name: 'unset api-key piped',
    argv: ['config', 'unset', 'api-key'],
    tty: false,
    files: { [CONFIG]: privateFile({ api_key: 'cd_live_abcdef123456' }) },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Removed api-key from ${CONFIG_FILE}.`),
    wantFiles: { [CONFIG]: json({}) },
  },
  {
    name: 'unset of a setting that is not set: said, exit 0, no file created',
    argv: ['config', 'unset', 'format'],
    tty: false,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`format was not set in ${CONFIG_FILE}.`),
    wantFiles: { [CONFIG]: null },
  },
  {
    name: 'unset of an unknown setting: exit 2',
    argv: ['config', 'unset', 'colour'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines('error: Usage error (usage_error)', '  unknown setting "colour"'),
  },
];

const setKey: CommandCase[] = [
  {
    name: 'set-key piped: the key from stdin, added to the file, mode 0600',
    argv: ['config', 'set-key'],
    tty: false,
    stdin: 'cd_live_abcdef123456\n',
    files: { [CONFIG]: privateFile({ format: 'csv' }) },
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Saved the API key cd_l…3456 to ${CONFIG_FILE} (mode 0600).`),
    wantFiles: { [CONFIG]: json({ format: 'csv', api_key: 'cd_live_abcdef123456' }) },
    wantModes: { [CONFIG]: 0o600 },
  },
  {
    name: 'set-key typed on a terminal: a prompt, the typing unechoed, backspace honoured',
    argv: ['config', 'set-key'],
    tty: true,
    stdinTTY: true,
    stdin: 'cd_live_abcdef1234567\x7f\r',
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(
      'API key (typing is hidden; end with Enter):',
      `Saved the API key cd_l…3456 to ${CONFIG_FILE} (mode 0600).`,
    ),
    wantFiles: { [CONFIG]: json({ api_key: 'cd_live_abcdef123456' }) },
    wantModes: { [CONFIG]: 0o600 },
  },
  {
    name: 'set-key with nothing on stdin: exit 2 saying how to pipe it',
    argv: ['config', 'set-key'],
    tty: true,
    stdin: '\n',
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  no API key was given on stdin',
      '  Pipe the key in, e.g. `company-data config set-key < key.txt`.',
    ),
    wantFiles: { [CONFIG]: null },
  },
  {
    name: 'set-key with two words: exit 2',
    argv: ['config', 'set-key'],
    tty: false,
    stdin: 'cd_live key\n',
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine('the API key must be a single word without spaces or line breaks', ''),
    wantFiles: { [CONFIG]: null },
  },
];

describe('config', () => {
  describe('show', () => it.each(show)('$name', expectCase));
  describe('path', () => it.each(path)('$name', expectCase));
  describe('set', () => it.each(set)('$name', expectCase));
  describe('unset', () => it.each(unset)('$name', expectCase));
  describe('set-key', () => it.each(setKey)('$name', expectCase));

  // Without XDG_CONFIG_HOME the directory comes from the HOME of the environment main() was
  // given, not from this process's (os.homedir()).
  it('path without XDG_CONFIG_HOME: under the HOME main() was given', () =>
    expectCase({
      name: 'path under HOME',
      argv: ['config', 'path'],
      tty: false,
      env: { XDG_CONFIG_HOME: undefined },
      wantCode: 0,
      wantStdout: lines(`${DIR}/home/.config/company-data/config.json`),
      wantStderr: '',
    }));
});
