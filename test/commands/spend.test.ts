// `spend`: the spend ledger's totals per month, day, command or key, in every format; --since;
// a store that does not exist (not created), --no-store, and bad flags.
import { describe, expect, it } from 'vitest';
import { parseSince } from '../../src/ops/spend.js';
import { SANDBOX_KEYS } from '../../src/sandbox/catalogs.js';
import { DIR, expectCase, lines, usageLine } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { expectStoreCase, fillExample, STORE, type StoreCase } from '../helpers/store-cases.js';

const SINCE_DETAIL = `option '--since <date>' argument '2026-02-30' is invalid. --since takes a date as YYYY-MM-DD or YYYY-MM (UTC), got "2026-02-30"`;

const cases: StoreCase[] = [
  {
    name: 'on a terminal: one row per month, the total on stderr',
    argv: ['spend'],
    tty: true,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(
      '┌─────────┬─────────┬──────────────────┬───────┐',
      '│ month   │ charged │ possibly charged │ calls │',
      '├─────────┼─────────┼──────────────────┼───────┤',
      '│ 2026-10 │ 1       │ 0                │ 1     │',
      '│ 2026-11 │ 9       │ 3                │ 4     │',
      '└─────────┴─────────┴──────────────────┴───────┘',
    ),
    wantStderr: lines('Total: 10 credits charged, 3 possibly charged (5 calls).'),
  },
  {
    name: 'piped: { since, by, rows, total } as JSON, nothing on stderr',
    argv: ['spend'],
    tty: false,
    fill: fillExample,
    wantCode: 0,
    wantStdout: `${JSON.stringify(
      {
        since: null,
        by: 'month',
        rows: [
          { month: '2026-10', charged: 1, possibly_charged: 0, calls: 1 },
          { month: '2026-11', charged: 9, possibly_charged: 3, calls: 4 },
        ],
        total: { charged: 10, possibly_charged: 3, calls: 5 },
      },
      null,
      2,
    )}\n`,
    wantStderr: '',
  },
  {
    name: '--since 2026-11 --by day -o csv: the days of November, UTC',
    argv: ['spend', '--since', '2026-11', '--by', 'day', '-o', 'csv'],
    tty: false,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(
      'day,charged,possibly_charged,calls',
      '2026-11-20,2,0,1',
      '2026-11-21,0,3,1',
      '2026-11-24,7,0,2',
    ),
    wantStderr: '',
  },
  {
    name: '--by command -o ndjson: one line per command',
    argv: ['spend', '--by', 'command', '-o', 'ndjson'],
    tty: false,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(
      '{"command":"api","charged":0,"possibly_charged":3,"calls":1}',
      '{"command":"enrich","charged":10,"possibly_charged":0,"calls":4}',
    ),
    wantStderr: '',
  },
  {
    name: '--by key on a terminal: base URL and key hash apart, the sandbox too',
    argv: ['spend', '--by', 'key', '--since', '2026-11-21'],
    tty: true,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(
      '┌─────────────────────────┬──────────────────┬─────────┬──────────────────┬───────┐',
      '│ base url                │ key              │ charged │ possibly charged │ calls │',
      '├─────────────────────────┼──────────────────┼─────────┼──────────────────┼───────┤',
      '│ https://api.example.com │ 1111aaaa2222bbbb │ 2       │ 3                │ 2     │',
      '│ sandbox                 │ c0ffee00c0ffee00 │ 5       │ 0                │ 1     │',
      '└─────────────────────────┴──────────────────┴─────────┴──────────────────┴───────┘',
    ),
    wantStderr: lines('Total since 2026-11-21: 7 credits charged, 3 possibly charged (3 calls).'),
  },
  {
    name: '--since a day with no charges after it, piped: empty rows, zero totals, said on stderr',
    argv: ['spend', '--since', '2026-12-01', '--by', 'day'],
    tty: false,
    fill: fillExample,
    wantCode: 0,
    wantStdout: `${JSON.stringify(
      { since: '2026-12-01', by: 'day', rows: [], total: { charged: 0, possibly_charged: 0, calls: 0 } },
      null,
      2,
    )}\n`,
    wantStderr: lines(`No charges recorded since 2026-12-01 in ${STORE}.`),
  },
  {
    name: 'no store file on a terminal: said so, exit 0, and no store is created',
    argv: ['spend'],
    tty: true,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`No charges recorded: there is no store at ${STORE} yet.`),
    wantStoreExists: false,
  },
  {
    name: 'no store file, -o csv: the header alone',
    argv: ['spend', '-o', 'csv', '--by', 'key', '-q'],
    tty: false,
    wantCode: 0,
    wantStdout: lines('base_url,key,charged,possibly_charged,calls'),
    wantStderr: '',
    wantStoreExists: false,
  },
  {
    name: '--no-store on a terminal: exit 2, there is no ledger to read',
    argv: ['--no-store', 'spend'],
    tty: true,
    fill: fillExample,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  there is no store to read the spend ledger of: --no-store is given',
      '  Drop --no-store (the store is $XDG_STATE_HOME/company-data/store.db, or --store <path>).',
    ),
  },
  {
    name: '--since 2026-02-30 piped: a usage error naming the form, as one JSON line',
    argv: ['spend', '--since', '2026-02-30'],
    tty: false,
    fill: fillExample,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine(SINCE_DETAIL),
  },
  {
    name: '--by week on a terminal: the choices',
    argv: ['spend', '--by', 'week'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      "error: option '--by <group>' argument 'week' is invalid. Allowed choices are month, day, command, key.",
      '(add --help for usage)',
    ),
  },
];

describe('--since', () => {
  it.each([
    ['2026-11', '2026-11-01T00:00:00.000Z', '2026-11-01'],
    ['2026-11-24', '2026-11-24T00:00:00.000Z', '2026-11-24'],
    [' 2024-02-29 ', '2024-02-29T00:00:00.000Z', '2024-02-29'],
  ])('%j starts at %s (UTC)', (raw, instant, label) => {
    expect(parseSince(raw)).toEqual({ from: Date.parse(instant), label });
  });

  it.each([['2026-02-29'], ['2026-13'], ['2026-11-31'], ['26-11'], ['2026/11'], ['yesterday'], ['']])(
    '%j is refused, naming the forms',
    (raw) => {
      expect(() => parseSince(raw)).toThrow(
        `--since takes a date as YYYY-MM-DD or YYYY-MM (UTC), got "${raw}"`,
      );
    },
  );
});

describe('spend', () => {
  it.each(cases.map((c) => [c.name, c]))('%s', async (_name, c) => {
    await expectStoreCase(c);
  });

  it('--help shows the options, what is counted, and examples', async () => {
    const r = await runInProcess(['spend', '--help']);
    expect(r).toEqual({
      code: 0,
      stderr: '',
      stdout: lines(
        'Usage: company-data spend [options]',
        '',
        'Show the credits spent, from the spend ledger of the store (never charged)',
        '',
        'Options:',
        '  --since <date>  count from this day or month on, UTC: YYYY-MM-DD or YYYY-MM',
        '  --by <group>    one row per month, day, command, or key (base URL and key) (choices: "month",',
        '                  "day", "command", "key", default: "month")',
        '  -h, --help      display help for command',
        '',
        "Every charge the service reports is recorded in the store's ledger, whichever command and key made",
        'it (the key by a hash, never the key itself). "possibly charged" counts attempts whose answer never',
        'came: the service may or may not have charged them. The total goes to stderr on a terminal; -o json',
        'gives { since, by, rows, total }.',
        '',
        'Examples:',
        '  $ company-data spend',
        '  $ company-data spend --since 2026-11 --by day',
        '  $ company-data spend --by command -o csv > spend.csv',
      ),
    });
  });
});

// Moved here from test/e2e/spend.test.ts, where it ran the binary four times (me, enrich, me, spend).
describe('spend after lookups against the sandbox', () => {
  it('after two lookups, the ledger holds what the balance lost, in a 0600 store', async () => {
    const charged = 3;
    await expectCase({
      name: 'spend --by command -o json after enrich of two domains',
      argv: ['spend', '--by', 'command', '-o', 'json'],
      tty: false,
      env: { COMPANY_DATA_STORE: `${DIR}/spend/store.db` },
      before: [['enrich', 'acme-shoes.com', 'globex.io', '--products', 'profile,tech']],
      // What the service took, as it counts it: the balance it started with, less what was charged.
      setup: (sandbox) => expect(SANDBOX_KEYS.full.balance - sandbox.balances().full).toBe(charged),
      wantCode: 0,
      wantStdout: `${JSON.stringify(
        {
          since: null,
          by: 'command',
          rows: [{ command: 'enrich', charged, possibly_charged: 0, calls: 2 }],
          total: { charged, possibly_charged: 0, calls: 2 },
        },
        null,
        2,
      )}\n`,
      wantStderr: '',
      wantModes: { 'spend/store.db': 0o600 },
      // Read from the store alone: nothing asked of the service.
      wantRequests: [],
    });
  });
});
