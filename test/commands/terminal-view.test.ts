// What a table looks like at the width of the terminal (issue 30), in-process: names, years and
// ranges stay whole at 50, 80 and 120 columns (records where a table would not fit); a failure
// with stdout and stderr redirected is one JSON line (with stderr on a terminal, human text:
// test/commands/finished-tool.test.ts); colour, and --no-color; which pager runs.
// The width read from a real pseudo-terminal, and the pager: test/e2e/terminal-view.test.ts.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pagerCommand } from '../../src/io.js';
import { type CommandCase, DIR, expectCase, lines, serviceEnvironment } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { startTestSandbox } from '../helpers/sandbox.js';

const ENRICH = ['enrich', 'acme-shoes.com', 'globex.io', 'initech.co.uk'];
const SEARCH = ['search', 'shoes', '--filter', 'country=US', '--limit', '3'];

const RECORDS_OF_ENRICH = lines(
  '─[ RECORD 1 ]──────────────────────',
  'domain         │ acme-shoes.com',
  'found          │ yes',
  'company name   │ Acme Shoes',
  'country        │ US',
  'site category  │ fashion',
  'employee range │ 51-200',
  'founded year   │ 2009',
  '─[ RECORD 2 ]──────────────────────',
  'domain         │ globex.io',
  'found          │ yes',
  'company name   │ Globex Corporation',
  'country        │ US',
  'site category  │ b2b_software',
  'employee range │ 1001-5000',
  'founded year   │ 1989',
  '─[ RECORD 3 ]──────────────────────',
  'domain         │ initech.co.uk',
  'found          │ yes',
  'company name   │ Initech',
  'country        │ GB',
  'site category  │ —',
  'employee range │ —',
  'founded year   │ 1998',
);

const cases: CommandCase[] = [
  {
    name: 'enrich of three domains at 50 columns: records',
    argv: ENRICH,
    tty: true,
    columns: 50,
    wantCode: 0,
    wantStdout: RECORDS_OF_ENRICH,
    wantStderr: lines('Credits: charged 3, balance 999,997'),
  },
  {
    name: 'enrich of three domains at 80 columns: still records',
    argv: ENRICH,
    tty: true,
    columns: 80,
    wantCode: 0,
    wantStdout: RECORDS_OF_ENRICH,
    wantStderr: lines('Credits: charged 3, balance 999,997'),
  },
  {
    name: 'enrich of three domains at 120 columns: a table',
    argv: ENRICH,
    tty: true,
    columns: 120,
    wantCode: 0,
    wantStdout: lines(
      '┌────────────────┬───────┬────────────────────┬─────────┬───────────────┬────────────────┬──────────────┐',
      '│ domain         │ found │ company name       │ country │ site category │ employee range │ founded year │',
      '├────────────────┼───────┼────────────────────┼─────────┼───────────────┼────────────────┼──────────────┤',
      '│ acme-shoes.com │ yes   │ Acme Shoes         │ US      │ fashion       │ 51-200         │ 2009         │',
      '│ globex.io      │ yes   │ Globex Corporation │ US      │ b2b_software  │ 1001-5000      │ 1989         │',
      '│ initech.co.uk  │ yes   │ Initech            │ GB      │ —             │ —              │ 1998         │',
      '└────────────────┴───────┴────────────────────┴─────────┴───────────────┴────────────────┴──────────────┘',
    ),
    wantStderr: lines('Credits: charged 3, balance 999,997'),
  },
  {
    name: 'search at 50 columns: records',
    argv: SEARCH,
    tty: true,
    columns: 50,
    wantCode: 0,
    wantStdout: lines(
      '─[ RECORD 1 ]────────────────────',
      'domain        │ acme-shoes.com',
      'company name  │ Acme Shoes',
      'country       │ US',
      'site category │ fashion',
      '─[ RECORD 2 ]────────────────────',
      'domain        │ hafloal-shoes.com',
      'company name  │ Hafloal Shoes',
      'country       │ US',
      'site category │ fashion',
      '─[ RECORD 3 ]────────────────────',
      'domain        │ lumtriyor-co.com',
      'company name  │ Lumtriyor Co',
      'country       │ US',
      'site category │ fashion',
    ),
    wantStderr: lines('Showing 3 of 44 companies', 'Credits: charged 1, balance 999,999'),
  },
  {
    name: 'search at 80 columns: a table',
    argv: SEARCH,
    tty: true,
    columns: 80,
    wantCode: 0,
    wantStdout: lines(
      '┌───────────────────┬───────────────┬─────────┬───────────────┐',
      '│ domain            │ company name  │ country │ site category │',
      '├───────────────────┼───────────────┼─────────┼───────────────┤',
      '│ acme-shoes.com    │ Acme Shoes    │ US      │ fashion       │',
      '│ hafloal-shoes.com │ Hafloal Shoes │ US      │ fashion       │',
      '│ lumtriyor-co.com  │ Lumtriyor Co  │ US      │ fashion       │',
      '└───────────────────┴───────────────┴─────────┴───────────────┘',
    ),
    wantStderr: lines('Showing 3 of 44 companies', 'Credits: charged 1, balance 999,999'),
  },
  {
    name: 'on a colour terminal: the headers bold and cyan',
    argv: ['search', 'shoes', '--limit', '2', '--include', 'domain,country'],
    tty: true,
    env: { NO_COLOR: undefined },
    wantCode: 0,
    wantStdout: lines(
      '┌────────────────────┬─────────┐',
      '│ \x1b[1;36mdomain\x1b[0m             │ \x1b[1;36mcountry\x1b[0m │',
      '├────────────────────┼─────────┤',
      '│ acme-shoes.com     │ US      │',
      '│ sacor-sneakers.com │ NL      │',
      '└────────────────────┴─────────┘',
    ),
    wantStderr: lines('Showing 2 of 125 companies', 'Credits: charged 1, balance 999,999'),
  },
  {
    // NO_COLOR=1, the other way to ask, is in the environment of every case of these tables.
    name: 'on a colour terminal with --no-color: no colour',
    argv: ['--no-color', 'search', 'shoes', '--limit', '2', '--include', 'domain,country'],
    tty: true,
    env: { NO_COLOR: undefined },
    wantCode: 0,
    wantStdout: lines(
      '┌────────────────────┬─────────┐',
      '│ domain             │ country │',
      '├────────────────────┼─────────┤',
      '│ acme-shoes.com     │ US      │',
      '│ sacor-sneakers.com │ NL      │',
      '└────────────────────┴─────────┘',
    ),
    wantStderr: lines('Showing 2 of 125 companies', 'Credits: charged 1, balance 999,999'),
  },
  {
    name: '-o json with stderr redirected too: one JSON line for the script',
    argv: ['-o', 'json', 'enrich', '--input', `${DIR}/nope.csv`],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      JSON.stringify({
        code: 'invalid_input',
        status: 0,
        title: 'Cannot read the input',
        detail: `no such file: ${DIR}/nope.csv`,
        retryable: false,
        hint: '',
      }),
    ),
  },
];

describe('tables at the width of the terminal; stderr follows stderr', () => {
  it.each(cases)('$name', (c) => expectCase(c));
});

describe('the pager command', () => {
  it.each([
    ['COMPANY_DATA_PAGER first', { COMPANY_DATA_PAGER: 'more', PAGER: 'most' }, 'more'],
    ['PAGER when COMPANY_DATA_PAGER is not set', { PAGER: `sed -e 's/^/pager: /'` }, `sed -e 's/^/pager: /'`],
    ['less -FRX when neither is set', {}, 'less -FRX'],
    ['none for an empty one', { COMPANY_DATA_PAGER: ' ', PAGER: 'most' }, undefined],
    ['none for cat', { PAGER: 'cat' }, undefined],
  ])('%s', (_name, env, want) => {
    expect(pagerCommand(env)).toBe(want);
  });
});

const PREFIX = { COMPANY_DATA_PAGER: `sed -e 's/^/paged: /'` };
const LONG = ['search', 'shoes', '--limit', '30', '--include', 'domain'];

/** The table of LONG: 30 domains, longer than a screen of 20 rows. */
const LONG_TABLE = [
  '┌─────────────────────────┐',
  '│ domain                  │',
  '├─────────────────────────┤',
  '│ acme-shoes.com          │',
  '│ sacor-sneakers.com      │',
  '│ hafloal-shoes.com       │',
  '│ lumtriyor-co.com        │',
  '│ mikelnor.fr             │',
  '│ elhaol-studio.com       │',
  '│ losuge.co.uk            │',
  '│ pelgexan.fr             │',
  '│ drisa-hq.com            │',
  '│ saranor.nl              │',
  '│ talgrelux.co            │',
  '│ flonorkatri-hq.com      │',
  '│ begresu-store.com       │',
  '│ gevioel-clothing.fr     │',
  '│ xanfami.co.uk           │',
  '│ tabe.ca                 │',
  '│ berizen-hq.com          │',
  '│ garelpa-supply.com      │',
  '│ strakinrajun.co         │',
  '│ luxvioolter-direct.es   │',
  '│ brazenter.com           │',
  '│ lolora-shoes.com        │',
  '│ xanjunta-clothing.com   │',
  '│ supabel-accessories.com │',
  '│ elros.com               │',
  '│ nezupel.io              │',
  '│ lumwen-clothing.io      │',
  '│ sahapa-studio.co.uk     │',
  '│ bomarterne.com          │',
  '│ zennehal-clothing.com   │',
  '└─────────────────────────┘',
];

/**
 * main() on a pretend terminal of 100 columns and 20 rows whose screen is a file (stdout and
 * stderr write to it in turn, and a pager started on stdout writes there too), against a sandbox
 * of its own: the exit code and the whole screen.
 */
async function onScreen(
  argv: string[],
  env: Record<string, string>,
  tty = true,
): Promise<{ code: number; screen: string }> {
  const sandbox = await startTestSandbox();
  const dir = mkdtempSync(join(tmpdir(), 'cd-screen-'));
  const fd = openSync(join(dir, 'screen'), 'w');
  try {
    const { code } = await runInProcess(argv, {
      tty,
      columns: 100,
      screen: { fd, rows: 20 },
      // PATH: the pager is a shell command.
      env: { ...serviceEnvironment(dir, sandbox.url), PATH: process.env.PATH ?? '', ...env },
    });
    return { code, screen: readFileSync(join(dir, 'screen'), 'utf8') };
  } finally {
    closeSync(fd);
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the pager (a real one, on a screen that is a file)', () => {
  it('output longer than the screen goes through COMPANY_DATA_PAGER; talk follows it', async () => {
    expect(await onScreen(LONG, PREFIX)).toEqual({
      code: 0,
      screen: lines(
        ...LONG_TABLE.map((line) => `paged: ${line}`),
        'Showing 30 of 125 companies',
        'Credits: charged 1, balance 999,999',
      ),
    });
  });

  it('a pager that stops reading early (head): exit 0, no EPIPE, no error', async () => {
    const all = ['search', 'shoes', '--limit', '1000', '--include', 'domain'];
    expect(await onScreen(all, { COMPANY_DATA_PAGER: 'head -n 3' })).toEqual({
      code: 0,
      screen: lines(
        '┌────────────────────────────────┐',
        '│ domain                         │',
        '├────────────────────────────────┤',
        'Showing 125 of 125 companies',
        'Credits: charged 1, balance 999,999',
      ),
    });
  });

  it('--no-pager: the same output, straight to the terminal', async () => {
    expect(await onScreen(['--no-pager', ...LONG], PREFIX)).toEqual({
      code: 0,
      screen: lines(...LONG_TABLE, 'Showing 30 of 125 companies', 'Credits: charged 1, balance 999,999'),
    });
  });

  it('never when stdout is not a terminal', async () => {
    expect(await onScreen([...LONG, '-o', 'table'], PREFIX, false)).toEqual({
      code: 0,
      screen: lines(...LONG_TABLE, 'Showing 30 of 125 companies', 'Credits: charged 1, balance 999,999'),
    });
  });
});
