// `doctor`: one line per check on a terminal (Unicode, ASCII, colour), { ok, checks } piped, CSV,
// and the exit code of the first failing check.
//
// Two parts of its output come from the real clock, not the injected one, and are the only ones
// not compared: how long GET /api/errors took (performance.now(), src/commands/doctor-checks.ts:98
// and :106), and the clock skew (doctor.ts calls clockCheck(reach) without the run's clock, so it
// reads Date.now() at doctor-checks.ts:145, against the sandbox's Date header, which has whole
// seconds: the skew rounds to 0 or 1 s depending on when in the second the request happened).
import { describe, it } from 'vitest';
import { CLOSED_URL, type CommandCase, DIR, expectCase, lines } from '../helpers/command-cases.js';

const MS: [RegExp, string] = [/answered HTTP 200 in \d+ ms/, 'answered HTTP 200 in <ms> ms'];
const SKEW: [RegExp, string] = [/\(skew [01] s\)/, '(skew <0|1> s)'];
const CLOCK = [MS, SKEW];

const CONFIG_FILE = `${DIR}/config/company-data/config.json`;
const NO_KEY_HINT =
  'Replace the key: set COMPANY_DATA_API_KEY, pass --api-key-file, or run `company-data config set-key`.';

const cases: CommandCase[] = [
  {
    name: 'all well on a terminal: a ✓ per check, "No problems found." on stderr',
    argv: ['doctor'],
    tty: true,
    masks: CLOCK,
    wantCode: 0,
    wantStdout: lines(
      `✓ config file: none at ${CONFIG_FILE} (optional)`,
      '✓ base URL: http://127.0.0.1:PORT (from environment)',
      '✓ proxy: none: direct connections',
      '✓ reachable: GET /api/errors answered HTTP 200 in <ms> ms',
      '✓ contract: version 2026-08-26',
      '✓ clock: in step with the service (skew <0|1> s)',
      '✓ key: valid (from environment, plan pro, balance 1,000,000)',
      '✓ auth header: bearer accepted',
    ),
    wantStderr: lines('No problems found.'),
  },
  {
    name: 'all well on a colour terminal: green marks',
    argv: ['doctor'],
    tty: true,
    env: { NO_COLOR: undefined },
    masks: CLOCK,
    wantCode: 0,
    wantStdout: lines(
      `\x1b[32m✓\x1b[0m config file: none at ${CONFIG_FILE} (optional)`,
      '\x1b[32m✓\x1b[0m base URL: http://127.0.0.1:PORT (from environment)',
      '\x1b[32m✓\x1b[0m proxy: none: direct connections',
      '\x1b[32m✓\x1b[0m reachable: GET /api/errors answered HTTP 200 in <ms> ms',
      '\x1b[32m✓\x1b[0m contract: version 2026-08-26',
      '\x1b[32m✓\x1b[0m clock: in step with the service (skew <0|1> s)',
      '\x1b[32m✓\x1b[0m key: valid (from environment, plan pro, balance 1,000,000)',
      '\x1b[32m✓\x1b[0m auth header: bearer accepted',
    ),
    wantStderr: lines('No problems found.'),
  },
  {
    name: 'all well piped: { ok, checks } as JSON',
    argv: ['doctor'],
    tty: false,
    masks: CLOCK,
    wantCode: 0,
    wantStdout: `${JSON.stringify(
      {
        ok: true,
        checks: [
          { name: 'config file', status: 'pass', message: `none at ${CONFIG_FILE} (optional)` },
          { name: 'base URL', status: 'pass', message: 'http://127.0.0.1:PORT (from environment)' },
          { name: 'proxy', status: 'pass', message: 'none: direct connections' },
          { name: 'reachable', status: 'pass', message: 'GET /api/errors answered HTTP 200 in <ms> ms' },
          { name: 'contract', status: 'pass', message: 'version 2026-08-26' },
          { name: 'clock', status: 'pass', message: 'in step with the service (skew <0|1> s)' },
          { name: 'key', status: 'pass', message: 'valid (from environment, plan pro, balance 1,000,000)' },
          { name: 'auth header', status: 'pass', message: 'bearer accepted' },
        ],
      },
      null,
      2,
    )}\n`,
    wantStderr: lines('No problems found.'),
  },
  {
    name: 'no key on a terminal: the key check fails with its fix, exit 3',
    argv: ['doctor'],
    tty: true,
    env: { COMPANY_DATA_API_KEY: undefined },
    masks: CLOCK,
    wantCode: 3,
    wantStdout: lines(
      `✓ config file: none at ${CONFIG_FILE} (optional)`,
      '✓ base URL: http://127.0.0.1:PORT (from environment)',
      '✓ proxy: none: direct connections',
      '✓ reachable: GET /api/errors answered HTTP 200 in <ms> ms',
      '✓ contract: version 2026-08-26',
      '✓ clock: in step with the service (skew <0|1> s)',
      '✗ key: No API key (invalid_api_key): No API key configured.',
      `    fix: ${NO_KEY_HINT}`,
      '- auth header: not checked: no key',
    ),
    wantStderr: lines('1 check failed.'),
  },
  {
    name: 'no key piped: the failing check with its code and exit code',
    argv: ['doctor'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: undefined },
    masks: CLOCK,
    wantCode: 3,
    wantStdout: `${JSON.stringify(
      {
        ok: false,
        checks: [
          { name: 'config file', status: 'pass', message: `none at ${CONFIG_FILE} (optional)` },
          { name: 'base URL', status: 'pass', message: 'http://127.0.0.1:PORT (from environment)' },
          { name: 'proxy', status: 'pass', message: 'none: direct connections' },
          { name: 'reachable', status: 'pass', message: 'GET /api/errors answered HTTP 200 in <ms> ms' },
          { name: 'contract', status: 'pass', message: 'version 2026-08-26' },
          { name: 'clock', status: 'pass', message: 'in step with the service (skew <0|1> s)' },
          {
            name: 'key',
            status: 'fail',
            message: 'No API key (invalid_api_key): No API key configured.',
            fix: NO_KEY_HINT,
            code: 'invalid_api_key',
            exitCode: 3,
          },
          { name: 'auth header', status: 'skip', message: 'not checked: no key' },
        ],
      },
      null,
      2,
    )}\n`,
    wantStderr: lines('1 check failed.'),
  },
  {
    name: 'a refused key on an ASCII terminal: ok / FAIL / skip, both headers tried',
    argv: ['doctor'],
    tty: true,
    env: { LANG: 'C', COMPANY_DATA_API_KEY: 'cd_not_a_real_key_123' },
    masks: CLOCK,
    wantCode: 3,
    wantStdout: lines(
      `ok   config file: none at ${CONFIG_FILE} (optional)`,
      'ok   base URL: http://127.0.0.1:PORT (from environment)',
      'ok   proxy: none: direct connections',
      'ok   reachable: GET /api/errors answered HTTP 200 in <ms> ms',
      'ok   contract: version 2026-08-26',
      'ok   clock: in step with the service (skew <0|1> s)',
      'FAIL key: Invalid API key (invalid_api_key): The API key is missing or invalid.',
      `       fix: ${NO_KEY_HINT}`,
      'skip auth header: not conclusive: the key was refused as bearer and as x-api-key',
    ),
    wantStderr: lines('1 check failed.'),
  },
  {
    name: 'no base URL on a terminal: exit 2, what needs the service skipped',
    argv: ['doctor'],
    tty: true,
    env: { COMPANY_DATA_BASE_URL: undefined },
    wantCode: 2,
    wantStdout: lines(
      `✓ config file: none at ${CONFIG_FILE} (optional)`,
      '✗ base URL: no service URL is configured',
      '    fix: Pass --base-url, set COMPANY_DATA_BASE_URL, or run `company-data config set base-url <url>` (or try --sandbox).',
      '✓ proxy: none: direct connections',
      '- reachable: not checked: no base URL',
      '- contract: not checked: the service did not answer',
      '- clock: not checked: the service did not answer',
      '- key: present (from environment); not checked: the service did not answer',
      '- auth header: not checked: the service did not answer',
    ),
    wantStderr: lines('1 check failed.'),
  },
  {
    name: 'a service that is not there: exit 5 after one retry',
    argv: ['doctor'],
    tty: true,
    env: { COMPANY_DATA_BASE_URL: CLOSED_URL },
    wantCode: 5,
    wantStdout: lines(
      `✓ config file: none at ${CONFIG_FILE} (optional)`,
      '✓ base URL: http://127.0.0.1:CLOSED (from environment)',
      '✓ proxy: none: direct connections',
      '✗ reachable: network error (network_error): Connection refused by 127.0.0.1:CLOSED; is the service running there? (gave up after 2 attempts)',
      '    fix: The service is temporarily unavailable; try again later (retries are automatic, see --retries).',
      '- contract: not checked: the service did not answer',
      '- clock: not checked: the service did not answer',
      '- key: present (from environment); not checked: the service did not answer',
      '- auth header: not checked: the service did not answer',
    ),
    wantStderr: lines('1 check failed.'),
  },
  {
    name: 'a config file others can read: its check fails (exit 2), the others still run, its format used',
    argv: ['doctor'],
    tty: true,
    files: { 'config/company-data/config.json': { text: '{"format":"csv"}\n', mode: 0o644 } },
    masks: CLOCK,
    wantCode: 2,
    wantStdout: lines(
      'name,status,message,fix,code',
      `config file,fail,${CONFIG_FILE} is readable by other users (mode 644); company-data refuses to use it,Run: chmod 600 ${CONFIG_FILE},config_error`,
      'base URL,pass,http://127.0.0.1:PORT (from environment),,',
      'proxy,pass,none: direct connections,,',
      'reachable,pass,GET /api/errors answered HTTP 200 in <ms> ms,,',
      'contract,pass,version 2026-08-26,,',
      'clock,pass,in step with the service (skew <0|1> s),,',
      'key,pass,"valid (from environment, plan pro, balance 1,000,000)",,',
      'auth header,pass,bearer accepted,,',
    ),
    wantStderr: lines('1 check failed.'),
  },
  {
    name: 'a setting that cannot be parsed, -o csv piped: a "settings" check fails, exit 2',
    argv: ['doctor', '-o', 'csv'],
    tty: false,
    env: { COMPANY_DATA_TIMEOUT: 'abc' },
    masks: CLOCK,
    wantCode: 2,
    wantStdout: lines(
      'name,status,message,fix,code',
      `config file,pass,none at ${CONFIG_FILE} (optional),,`,
      'settings,fail,"Configuration error (config_error): COMPANY_DATA_TIMEOUT (environment): timeout must be a positive number of seconds, got ""abc""",Run `company-data config show` to see which settings are in effect.,config_error',
      'base URL,pass,http://127.0.0.1:PORT (from environment),,',
      'proxy,pass,none: direct connections,,',
      'reachable,pass,GET /api/errors answered HTTP 200 in <ms> ms,,',
      'contract,pass,version 2026-08-26,,',
      'clock,pass,in step with the service (skew <0|1> s),,',
      'key,pass,"valid (from environment, plan pro, balance 1,000,000)",,',
      'auth header,pass,bearer accepted,,',
    ),
    wantStderr: lines('1 check failed.'),
  },
];

describe('doctor', () => {
  it.each(cases)('$name', expectCase);
});
