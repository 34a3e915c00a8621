// `store info|prune|clear|export`: what the store holds, on a terminal and piped; pruning by age;
// clearing with a confirmation on a terminal and --yes elsewhere; exporting as NDJSON, CSV or
// JSON. A store that does not exist is reported, never created; --no-store is a usage error.
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { lines, usageLine } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { expectStoreCase, fillExample, KEY_A, STORE, type StoreCase } from '../helpers/store-cases.js';

const domains = (store: SqliteStore) =>
  store.db.prepare('SELECT domain FROM answers ORDER BY domain').pluck().all();
const ledgerSize = (store: SqliteStore) => store.db.prepare('SELECT COUNT(*) FROM ledger').pluck().get();
const SCOPE = { baseUrl: 'https://api.example.com', keyId: KEY_A, include: undefined, maxCredits: undefined };
const ALL = ['acme-shoes.com', 'globex.io', 'gone.example', 'initech.dev', 'no-such.example'];

const NO_STORE_HINT =
  'Drop --no-store (the store is $XDG_STATE_HOME/company-data/store.db, or --store <path>).';

/** The example store's answers as `store export` writes them, by domain. */
const profile = {
  base_url: 'https://api.example.com',
  key: KEY_A,
  products: ['profile'],
  include: null,
  max_credits: null,
};
const EXPORTED = [
  {
    domain: 'acme-shoes.com',
    found: true,
    bought_at: '2026-11-24T10:00:00.000Z',
    credits: 1,
    ...profile,
    record: { domain: 'acme-shoes.com', company_name: 'Acme Shoes', country: 'US' },
  },
  {
    domain: 'globex.io',
    found: true,
    bought_at: '2026-11-21T12:00:00.000Z',
    credits: 2,
    ...profile,
    products: ['profile', 'tech'],
    max_credits: 5,
    record: { domain: 'globex.io', company_name: 'Globex', tech: ['shopify', 'klaviyo'] },
  },
  {
    domain: 'gone.example',
    found: false,
    bought_at: '2026-11-22T12:00:00.000Z',
    credits: 0,
    ...profile,
    record: null,
  },
  {
    domain: 'initech.dev',
    found: true,
    bought_at: '2026-10-10T12:00:00.000Z',
    credits: 1,
    ...profile,
    record: { domain: 'initech.dev', company_name: '=HYPERLINK("x")' },
  },
  {
    domain: 'no-such.example',
    found: false,
    bought_at: '2026-11-14T12:00:00.000Z',
    credits: 0,
    ...profile,
    record: null,
  },
];

const infoCases: StoreCase[] = [
  {
    name: 'info on a terminal: "Result store", the record, and what prune would remove',
    argv: ['store', 'info'],
    tty: true,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(
      'Result store',
      '┌──────────────────┬──────────────────────────┐',
      '│ field            │ value                    │',
      '├──────────────────┼──────────────────────────┤',
      `│ path             │ ${STORE} │`,
      '│ exists           │ yes                      │',
      `│ size_bytes       │ ${'SIZE_GROUPED'.padEnd(24)} │`,
      '│ schema_version   │ 3                        │',
      '│ answers          │ 5                        │',
      '│ found            │ 3                        │',
      '│ not_found        │ 2                        │',
      '│ age_under_1_day  │ 1                        │',
      '│ age_1_to_7_days  │ 2                        │',
      '│ age_7_to_30_days │ 1                        │',
      '│ age_over_30_days │ 1                        │',
      '│ expired          │ 2                        │',
      '│ ledger_entries   │ 5                        │',
      '└──────────────────┴──────────────────────────┘',
    ),
    wantStderr: lines(
      '`company-data store prune` removes the 2 expired answers (found: older than 30 days, not found: older than 7 days).',
    ),
  },
  {
    name: 'info piped: the same as one JSON object, the size in bytes',
    argv: ['store', 'info'],
    tty: false,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(
      '{',
      `  "path": "${STORE}",`,
      '  "exists": true,',
      '  "size_bytes": SIZE,',
      '  "schema_version": 3,',
      '  "answers": 5,',
      '  "found": 3,',
      '  "not_found": 2,',
      '  "age_under_1_day": 1,',
      '  "age_1_to_7_days": 2,',
      '  "age_7_to_30_days": 1,',
      '  "age_over_30_days": 1,',
      '  "expired": 2,',
      '  "ledger_entries": 5',
      '}',
    ),
    wantStderr: '',
  },
  {
    name: 'info -o csv: a header and one row',
    argv: ['store', 'info', '-o', 'csv'],
    tty: false,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(
      'path,exists,size_bytes,schema_version,answers,found,not_found,age_under_1_day,age_1_to_7_days,age_7_to_30_days,age_over_30_days,expired,ledger_entries',
      `${STORE},true,SIZE,3,5,3,2,1,2,1,1,2,5`,
    ),
    wantStderr: '',
  },
  {
    name: 'info with no store file, -o ndjson: zeros, said on stderr, and no store is created',
    argv: ['store', 'info', '-o', 'ndjson'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      JSON.stringify({
        path: STORE,
        exists: false,
        size_bytes: 0,
        schema_version: null,
        answers: 0,
        found: 0,
        not_found: 0,
        age_under_1_day: 0,
        age_1_to_7_days: 0,
        age_7_to_30_days: 0,
        age_over_30_days: 0,
        expired: 0,
        ledger_entries: 0,
      }),
    ),
    wantStderr: lines(`There is no store at ${STORE} yet: the first answer bought creates it.`),
    wantStoreExists: false,
  },
  {
    name: 'info with --no-store piped: exit 2, one JSON problem line',
    argv: ['--no-store', 'store', 'info'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine('there is no store to inspect: --no-store is given', NO_STORE_HINT),
  },
];

const pruneCases: StoreCase[] = [
  {
    name: 'prune on a terminal: the found answers past 30 days and the not-found past 7 go',
    argv: ['store', 'prune'],
    tty: true,
    fill: fillExample,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(
      `Removed 2 answers from ${STORE}: 1 found older than 30 days, 1 not found older than 7 days; 3 left.`,
    ),
    after: async (store) => {
      expect(domains(store)).toEqual(['acme-shoes.com', 'globex.io', 'gone.example']);
      expect(ledgerSize(store)).toBe(5);
    },
  },
  {
    name: 'prune --max-age 36h --not-found-max-age 0 piped: the counts as one JSON object',
    argv: ['store', 'prune', '--max-age', '36h', '--not-found-max-age', '0'],
    tty: false,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(
      '{',
      `  "path": "${STORE}",`,
      '  "removed": 4,',
      '  "removed_found": 2,',
      '  "removed_not_found": 2,',
      '  "remaining": 1',
      '}',
    ),
    wantStderr: '',
    after: async (store) => expect(domains(store)).toEqual(['acme-shoes.com']),
  },
  {
    name: 'prune --max-age 90m on a terminal: the ages said as given',
    argv: ['store', 'prune', '--max-age', '90m', '--not-found-max-age', '2w'],
    tty: true,
    fill: fillExample,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(
      `Removed 3 answers from ${STORE}: 3 found older than 90 minutes, 0 not found older than 14 days; 2 left.`,
    ),
  },
  {
    name: 'prune --max-age 30 on a terminal: a usage error naming the form of an age',
    argv: ['store', 'prune', '--max-age', '30'],
    tty: true,
    fill: fillExample,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      `error: option '--max-age <age>' argument '30' is invalid. --max-age takes an age such as 30d, 12h, 90m or 2w (0: never reuse), got "30"`,
      '(add --help for usage)',
    ),
    after: async (store) => expect(domains(store)).toEqual(ALL),
  },
  {
    name: 'prune with no store file on a terminal: nothing to remove, no store created',
    argv: ['store', 'prune'],
    tty: true,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`There is no store at ${STORE}: nothing to remove.`),
    wantStoreExists: false,
  },
];

const PROMPT = `Remove all 5 stored answers from ${STORE}? The spend ledger stays (5 entries): --budget-month counts it. [y/N] `;

/** `store clear` where it cannot ask: refused before anything is removed. */
const CANNOT_ASK: Omit<StoreCase, 'name'> = {
  argv: ['store', 'clear'],
  tty: false,
  fill: fillExample,
  wantCode: 2,
  wantStdout: '',
  wantStderr: usageLine(
    `store clear removes every stored answer from ${STORE} and asks first, but there is no terminal to ask on`,
    'Add --yes to remove them without asking.',
  ),
  after: async (store) => expect(domains(store)).toEqual(ALL),
};

const clearCases: StoreCase[] = [
  {
    name: 'clear piped without --yes: exit 2 naming --yes, nothing removed',
    ...CANNOT_ASK,
  },
  {
    name: 'clear with stdin a terminal but stderr piped (no one would see the question): exit 2',
    ...CANNOT_ASK,
    stdinTTY: true,
    stdin: 'y\n',
  },
  {
    name: 'clear on a terminal, answered y: the answers go, the ledger stays',
    argv: ['store', 'clear'],
    tty: true,
    stdinTTY: true,
    stdin: 'y\n',
    fill: fillExample,
    wantCode: 0,
    wantStdout: '',
    wantStderr: `${PROMPT}${lines(`Removed 5 answers from ${STORE}; the spend ledger stays (5 entries).`)}`,
    after: async (store) => {
      expect(domains(store)).toEqual([]);
      expect(ledgerSize(store)).toBe(5);
    },
  },
  {
    name: 'clear on a terminal, answered with Enter alone: nothing removed, exit 0',
    argv: ['store', 'clear'],
    tty: true,
    stdinTTY: true,
    stdin: '\n',
    fill: fillExample,
    wantCode: 0,
    wantStdout: '',
    wantStderr: `${PROMPT}${lines('Nothing was removed.')}`,
    after: async (store) => expect(domains(store)).toEqual(ALL),
  },
  {
    name: 'clear --ledger on a terminal with -q, answered YES: the question still shows, then nothing',
    argv: ['store', 'clear', '--ledger', '-q'],
    tty: true,
    stdinTTY: true,
    stdin: 'YES\n',
    fill: fillExample,
    wantCode: 0,
    wantStdout: '',
    wantStderr: `Remove all 5 stored answers and the spend ledger (5 entries) from ${STORE}? [y/N] `,
    after: async (store) => {
      expect(domains(store)).toEqual([]);
      expect(ledgerSize(store)).toBe(0);
    },
  },
  {
    name: 'clear --yes --ledger piped: no question, the counts as one JSON object',
    argv: ['store', 'clear', '--yes', '--ledger'],
    tty: false,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(
      '{',
      `  "path": "${STORE}",`,
      '  "removed_answers": 5,',
      '  "removed_ledger_entries": 5',
      '}',
    ),
    wantStderr: '',
    after: async (store) => expect([domains(store), ledgerSize(store)]).toEqual([[], 0]),
  },
  {
    name: 'clear -y on a terminal: no question',
    argv: ['store', 'clear', '-y'],
    tty: true,
    stdinTTY: true,
    fill: fillExample,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`Removed 5 answers from ${STORE}; the spend ledger stays (5 entries).`),
  },
  {
    name: 'clear on a terminal with an empty store: nothing to ask',
    argv: ['store', 'clear'],
    tty: true,
    stdinTTY: true,
    fill: async () => {},
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`The store ${STORE} holds no answers: nothing to remove.`),
  },
  {
    name: 'clear --yes with no store file: nothing to remove, no store created',
    argv: ['store', 'clear', '--yes'],
    tty: true,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(`There is no store at ${STORE}: nothing to remove.`),
    wantStoreExists: false,
  },
  {
    name: 'clear with --no-store on a terminal: exit 2',
    argv: ['--no-store', 'store', 'clear', '--yes'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  there is no store to clear: --no-store is given',
      `  ${NO_STORE_HINT}`,
    ),
  },
];

const exportCases: StoreCase[] = [
  {
    name: 'export piped: NDJSON by default, one answer per line by domain, the record as an object',
    argv: ['store', 'export'],
    tty: false,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(...EXPORTED.map((answer) => JSON.stringify(answer))),
    wantStderr: '',
  },
  {
    name: 'export on a terminal: NDJSON too (a table setting does not apply)',
    argv: ['store', 'export'],
    tty: true,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(...EXPORTED.map((answer) => JSON.stringify(answer))),
    wantStderr: '',
  },
  {
    name: 'export -o json: one array',
    argv: ['store', 'export', '-o', 'json'],
    tty: false,
    fill: fillExample,
    wantCode: 0,
    wantStdout: `[\n${EXPORTED.map((answer) => JSON.stringify(answer)).join(',\n')}\n]\n`,
    wantStderr: '',
  },
  {
    name: 'export -o csv: a column per record field, a clashing one as cd_<field>, formulas neutralised',
    argv: ['store', 'export', '-o', 'csv'],
    tty: false,
    fill: fillExample,
    wantCode: 0,
    wantStdout: lines(
      'domain,found,bought_at,credits,base_url,key,products,include,max_credits,cd_domain,company_name,country,tech',
      `acme-shoes.com,true,2026-11-24T10:00:00.000Z,1,https://api.example.com,${KEY_A},profile,,,acme-shoes.com,Acme Shoes,US,`,
      `globex.io,true,2026-11-21T12:00:00.000Z,2,https://api.example.com,${KEY_A},profile;tech,,5,globex.io,Globex,,shopify;klaviyo`,
      `gone.example,false,2026-11-22T12:00:00.000Z,0,https://api.example.com,${KEY_A},profile,,,,,,`,
      `initech.dev,true,2026-10-10T12:00:00.000Z,1,https://api.example.com,${KEY_A},profile,,,initech.dev,"'=HYPERLINK(""x"")",,`,
      `no-such.example,false,2026-11-14T12:00:00.000Z,0,https://api.example.com,${KEY_A},profile,,,,,,`,
    ),
    wantStderr: '',
  },
  {
    name: 'export -o csv --csv-raw: the formula as stored',
    argv: ['store', 'export', '-o', 'csv', '--csv-raw'],
    tty: false,
    fill: async (store) => {
      await fillExample(store);
      store.db.prepare("DELETE FROM answers WHERE domain <> 'initech.dev'").run();
    },
    wantCode: 0,
    wantStdout: lines(
      'domain,found,bought_at,credits,base_url,key,products,include,max_credits,cd_domain,company_name',
      `initech.dev,true,2026-10-10T12:00:00.000Z,1,https://api.example.com,${KEY_A},profile,,,initech.dev,"=HYPERLINK(""x"")"`,
    ),
    wantStderr: '',
  },
  {
    name: 'export -o csv of an empty store: the fixed header, said on stderr',
    argv: ['store', 'export', '-o', 'csv'],
    tty: false,
    fill: async () => {},
    wantCode: 0,
    wantStdout: lines('domain,found,bought_at,credits,base_url,key,products,include,max_credits'),
    wantStderr: lines(`The store ${STORE} holds no answers.`),
  },
  {
    name: 'export -o json with no store file: an empty array, no store created',
    argv: ['store', 'export', '-o', 'json'],
    tty: false,
    wantCode: 0,
    wantStdout: '[]\n',
    wantStderr: lines(`There is no store at ${STORE} yet: nothing to export.`),
    wantStoreExists: false,
  },
  {
    name: 'export -o table on a terminal: a usage error',
    argv: ['store', 'export', '-o', 'table'],
    tty: true,
    fill: fillExample,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  store export writes ndjson, csv or json, not a table',
      '  Drop -o table, or give -o csv.',
    ),
  },
];

describe('store info', () => {
  it.each(infoCases.map((c) => [c.name, c]))('%s', async (_name, c) => expectStoreCase(c));
});

describe('store prune', () => {
  it.each(pruneCases.map((c) => [c.name, c]))('%s', async (_name, c) => expectStoreCase(c));
});

describe('store clear', () => {
  it.each(clearCases.map((c) => [c.name, c]))('%s', async (_name, c) => expectStoreCase(c));
});

describe('store export', () => {
  it.each(exportCases.map((c) => [c.name, c]))('%s', async (_name, c) => expectStoreCase(c));

  it('a store of 3,000 answers comes out whole, in chunks', async () => {
    await expectStoreCase({
      name: 'many',
      argv: ['store', 'export', '-o', 'csv', '-q'],
      tty: false,
      fill: async (store) => {
        const scope = await store.scopeId({ ...SCOPE, products: undefined });
        for (let i = 0; i < 3000; i++) {
          const domain = `company-${String(i).padStart(4, '0')}.example`;
          await store.save(scope, domain, {
            found: true,
            record: { name: 'x'.repeat(40) },
            credits: 1,
            boughtAt: 0,
            run: null,
          });
        }
      },
      wantCode: 0,
      wantStdout: lines(
        'domain,found,bought_at,credits,base_url,key,products,include,max_credits,name',
        ...Array.from(
          { length: 3000 },
          (_, i) =>
            `company-${String(i).padStart(4, '0')}.example,true,1970-01-01T00:00:00.000Z,1,https://api.example.com,${KEY_A},,,,${'x'.repeat(40)}`,
        ),
      ),
      wantStderr: '',
    });
  });
});

/** Each help, exactly: the options, what the command keeps and removes, and examples. */
const HELP: Array<[string, string]> = [
  [
    'store',
    lines(
      'Usage: company-data store [options] [command]',
      '',
      'Inspect, prune, clear or export the result store (never charged)',
      '',
      'Options:',
      '  -h, --help       display help for command',
      '',
      'Commands:',
      '  info             Show the store file, its size, and answers by outcome and age',
      '  prune [options]  Remove the answers older than their age limit',
      '  clear [options]  Remove every stored answer (the ledger stays unless --ledger)',
      '  export           Write every stored answer as NDJSON (or -o csv, -o json)',
      '  help [command]   display help for command',
      '',
      'The store ($XDG_STATE_HOME/company-data/store.db, or --store <path>, or COMPANY_DATA_STORE) keeps',
      'every answer bought, so that the same lookup is not paid twice, and the spend ledger that',
      '`company-data spend` and --budget-month read.',
      '',
      'Examples:',
      '  $ company-data store info',
      '  $ company-data store prune --max-age 14d',
      '  $ company-data store export -o csv > answers.csv',
      '  $ company-data store clear --yes',
    ),
  ],
  [
    'store info',
    lines(
      'Usage: company-data store info [options]',
      '',
      'Show the store file, its size, and answers by outcome and age',
      '',
      'Options:',
      '  -h, --help  display help for command',
      '',
      '"expired" counts the answers `store prune` removes by default: found answers older than 30 days and',
      'not-found answers older than 7 days. A store that does not exist is not created.',
      '',
      'Example:',
      '  $ company-data store info -o json',
    ),
  ],
  [
    'store prune',
    lines(
      'Usage: company-data store prune [options]',
      '',
      'Remove the answers older than their age limit',
      '',
      'Options:',
      '  --max-age <age>            found answers older than this go (default 30d)',
      '  --not-found-max-age <age>  not-found answers older than this go (default 7d)',
      '  -h, --help                 display help for command',
      '',
      'An age is a number and a unit: 90m, 12h, 30d, 2w (0: every answer). The spend ledger is kept. The',
      'file does not shrink: the space freed is reused by the answers bought next (`store clear` gives the',
      'space back).',
      '',
      'Examples:',
      '  $ company-data store prune',
      '  $ company-data store prune --max-age 7d --not-found-max-age 1d',
    ),
  ],
  [
    'store clear',
    lines(
      'Usage: company-data store clear [options]',
      '',
      'Remove every stored answer (the ledger stays unless --ledger)',
      '',
      'Options:',
      '  -y, --yes   do not ask first (needed off a terminal)',
      '  --ledger    also empty the spend ledger, which --budget-month and `spend` read',
      '  -h, --help  display help for command',
      '',
      'On a terminal it asks first. The spend ledger stays by default: --budget-month counts what was spent',
      'this month from it, and `company-data spend` reports it.',
      '',
      'Examples:',
      '  $ company-data store clear',
      '  $ company-data store clear --yes --ledger',
    ),
  ],
  [
    'store export',
    lines(
      'Usage: company-data store export [options]',
      '',
      'Write every stored answer as NDJSON (or -o csv, -o json)',
      '',
      'Options:',
      '  -h, --help  display help for command',
      '',
      'Each answer comes with its domain, whether it was found, when it was bought (bought_at, UTC), its',
      'credits, and what it was bought for (base_url, key: a hash of the key, products, include,',
      'max_credits). NDJSON and JSON carry the record as an object; CSV has a column per field (a field',
      'named like one of those columns is written as cd_<field>).',
      '',
      'Examples:',
      '  $ company-data store export > answers.ndjson',
      '  $ company-data store export -o csv > answers.csv',
    ),
  ],
];

describe('store --help', () => {
  it('lists the subcommands', () => {
    const store = buildProgram().commands.find((c) => c.name() === 'store');
    expect(store?.commands.map((c) => c.name())).toEqual(['info', 'prune', 'clear', 'export']);
  });

  it.each(HELP)('%s --help', async (command, help) => {
    expect(await runInProcess([...command.split(' '), '--help'])).toEqual({
      code: 0,
      stdout: help,
      stderr: '',
    });
  });
});
