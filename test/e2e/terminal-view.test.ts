// What a person sees on a real terminal (issue 30), through a pseudo-terminal of a set size
// (test/helpers/pty-run.py, TIOCSWINSZ): tables at 50, 80 and 120 columns keep names, years and
// ranges whole; long output goes through the pager on a terminal and never when piped; failures
// stay human text on a terminal with stdout redirected. Needs `npm run build` first.
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { KEYS } from '../helpers/command-cases.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { runOnTerminal, screenText, type TerminalOptions } from '../helpers/terminal.js';

let sandbox: SandboxHandle;
let home: string;

sandboxAndDirForTests('cd-e2e-view-', { host: '127.0.0.1', companies: 2000 }, (s, d) => {
  sandbox = s;
  home = d;
});

function env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const dir = mkdtempSync(join(home, 'run-'));
  return {
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    XDG_STATE_HOME: join(dir, 'state'),
    COMPANY_DATA_BASE_URL: sandbox.url,
    COMPANY_DATA_API_KEY: KEYS.full,
    // No spinner frames or colour in what is compared (the tty tests cover those).
    NO_COLOR: '1',
    COLUMNS: undefined,
    PAGER: undefined,
    ...extra,
  };
}

async function seen(args: string[], options: TerminalOptions = {}) {
  const run = await runOnTerminal(args, { ...options, env: env(options.env) });
  // The balance goes down as the tests in this file spend the sandbox's credits.
  return { status: run.status, screen: screenText(run.output).replace(/balance [\d,]+/g, 'balance N') };
}

const ENRICH = ['enrich', 'acme-shoes.com', 'globex.io', 'initech.co.uk'];

describe('tables at 50, 80 and 120 columns: names, years and ranges whole', () => {
  it('enrich of three domains at 50 columns', async () => {
    const { status, screen } = await seen(ENRICH, { columns: 50 });
    expect(status).toBe(0);
    expect(screen).toMatchInlineSnapshot(`
      "─[ RECORD 1 ]──────────────────────
      domain         │ acme-shoes.com
      found          │ yes
      company name   │ Acme Shoes
      country        │ US
      site category  │ fashion
      employee range │ 51-200
      founded year   │ 2009
      ─[ RECORD 2 ]──────────────────────
      domain         │ globex.io
      found          │ yes
      company name   │ Globex Corporation
      country        │ US
      site category  │ b2b_software
      employee range │ 1001-5000
      founded year   │ 1989
      ─[ RECORD 3 ]──────────────────────
      domain         │ initech.co.uk
      found          │ yes
      company name   │ Initech
      country        │ GB
      site category  │ —
      employee range │ —
      founded year   │ 1998
      Credits: charged 3, balance N
      "
    `);
  });

  it('enrich of three domains at 80 columns', async () => {
    const { status, screen } = await seen(ENRICH, { columns: 80 });
    expect(status).toBe(0);
    expect(screen).toMatchInlineSnapshot(`
      "─[ RECORD 1 ]──────────────────────
      domain         │ acme-shoes.com
      found          │ yes
      company name   │ Acme Shoes
      country        │ US
      site category  │ fashion
      employee range │ 51-200
      founded year   │ 2009
      ─[ RECORD 2 ]──────────────────────
      domain         │ globex.io
      found          │ yes
      company name   │ Globex Corporation
      country        │ US
      site category  │ b2b_software
      employee range │ 1001-5000
      founded year   │ 1989
      ─[ RECORD 3 ]──────────────────────
      domain         │ initech.co.uk
      found          │ yes
      company name   │ Initech
      country        │ GB
      site category  │ —
      employee range │ —
      founded year   │ 1998
      Credits: charged 3, balance N
      "
    `);
  });

  it('enrich of three domains at 120 columns', async () => {
    const { status, screen } = await seen(ENRICH, { columns: 120 });
    expect(status).toBe(0);
    expect(screen).toMatchInlineSnapshot(`
      "┌────────────────┬───────┬────────────────────┬─────────┬───────────────┬────────────────┬──────────────┐
      │ domain         │ found │ company name       │ country │ site category │ employee range │ founded year │
      ├────────────────┼───────┼────────────────────┼─────────┼───────────────┼────────────────┼──────────────┤
      │ acme-shoes.com │ yes   │ Acme Shoes         │ US      │ fashion       │ 51-200         │ 2009         │
      │ globex.io      │ yes   │ Globex Corporation │ US      │ b2b_software  │ 1001-5000      │ 1989         │
      │ initech.co.uk  │ yes   │ Initech            │ GB      │ —             │ —              │ 1998         │
      └────────────────┴───────┴────────────────────┴─────────┴───────────────┴────────────────┴──────────────┘
      Credits: charged 3, balance N
      "
    `);
  });

  it('search at 50 columns', async () => {
    const { status, screen } = await seen(['search', 'shoes', '--limit', '3'], { columns: 50 });
    expect(status).toBe(0);
    expect(screen).toMatchInlineSnapshot(`
      "─[ RECORD 1 ]─────────────────────
      domain        │ acme-shoes.com
      company name  │ Acme Shoes
      country       │ US
      site category │ fashion
      ─[ RECORD 2 ]─────────────────────
      domain        │ sacor-sneakers.com
      company name  │ Sacor Sneakers
      country       │ NL
      site category │ fashion
      ─[ RECORD 3 ]─────────────────────
      domain        │ hafloal-shoes.com
      company name  │ Hafloal Shoes
      country       │ US
      site category │ fashion
      Showing 3 of 125 companies
      Credits: charged 1, balance N
      "
    `);
  });

  it('search at 80 columns', async () => {
    const { status, screen } = await seen(['search', 'shoes', '--limit', '3'], { columns: 80 });
    expect(status).toBe(0);
    expect(screen).toMatchInlineSnapshot(`
      "┌────────────────────┬────────────────┬─────────┬───────────────┐
      │ domain             │ company name   │ country │ site category │
      ├────────────────────┼────────────────┼─────────┼───────────────┤
      │ acme-shoes.com     │ Acme Shoes     │ US      │ fashion       │
      │ sacor-sneakers.com │ Sacor Sneakers │ NL      │ fashion       │
      │ hafloal-shoes.com  │ Hafloal Shoes  │ US      │ fashion       │
      └────────────────────┴────────────────┴─────────┴───────────────┘
      Showing 3 of 125 companies
      Credits: charged 1, balance N
      "
    `);
  });
});

const PREFIX = { COMPANY_DATA_PAGER: `sed -e 's/^/paged: /'` };
const LONG = ['search', 'shoes', '--limit', '30', '--include', 'domain'];

describe('the pager', () => {
  it('output longer than the screen goes through COMPANY_DATA_PAGER; talk follows it', async () => {
    const { status, screen } = await seen(LONG, { rows: 20, env: PREFIX });
    expect(status).toBe(0);
    expect(screen).toMatchInlineSnapshot(`
      "paged: ┌─────────────────────────┐
      paged: │ domain                  │
      paged: ├─────────────────────────┤
      paged: │ acme-shoes.com          │
      paged: │ sacor-sneakers.com      │
      paged: │ hafloal-shoes.com       │
      paged: │ lumtriyor-co.com        │
      paged: │ mikelnor.fr             │
      paged: │ elhaol-studio.com       │
      paged: │ losuge.co.uk            │
      paged: │ pelgexan.fr             │
      paged: │ drisa-hq.com            │
      paged: │ saranor.nl              │
      paged: │ talgrelux.co            │
      paged: │ flonorkatri-hq.com      │
      paged: │ begresu-store.com       │
      paged: │ gevioel-clothing.fr     │
      paged: │ xanfami.co.uk           │
      paged: │ tabe.ca                 │
      paged: │ berizen-hq.com          │
      paged: │ garelpa-supply.com      │
      paged: │ strakinrajun.co         │
      paged: │ luxvioolter-direct.es   │
      paged: │ brazenter.com           │
      paged: │ lolora-shoes.com        │
      paged: │ xanjunta-clothing.com   │
      paged: │ supabel-accessories.com │
      paged: │ elros.com               │
      paged: │ nezupel.io              │
      paged: │ lumwen-clothing.io      │
      paged: │ sahapa-studio.co.uk     │
      paged: │ bomarterne.com          │
      paged: │ zennehal-clothing.com   │
      paged: └─────────────────────────┘
      Showing 30 of 125 companies
      Credits: charged 1, balance N
      "
    `);
  });

  it('PAGER when COMPANY_DATA_PAGER is not set', async () => {
    const { status, screen } = await seen(LONG, { rows: 20, env: { PAGER: `sed -e 's/^/pager: /'` } });
    expect(status).toBe(0);
    expect(screen.split('\n').slice(0, 2)).toEqual([
      'pager: ┌─────────────────────────┐',
      'pager: │ domain                  │',
    ]);
  });

  it('less -FRX by default; quitting it at the first screen is a normal end (exit 0)', async () => {
    const { status, screen } = await seen(['search', 'shoes', '--limit', '1000', '--include', 'domain'], {
      rows: 20,
      type: { after: ':', keys: 'q' },
    });
    expect(status).toBe(0);
    expect(screen).toMatchInlineSnapshot(`
      "┌────────────────────────────────┐
      │ domain                         │
      ├────────────────────────────────┤
      │ acme-shoes.com                 │
      │ sacor-sneakers.com             │
      │ hafloal-shoes.com              │
      │ lumtriyor-co.com               │
      │ mikelnor.fr                    │
      │ elhaol-studio.com              │
      │ losuge.co.uk                   │
      │ pelgexan.fr                    │
      │ drisa-hq.com                   │
      │ saranor.nl                     │
      │ talgrelux.co                   │
      │ flonorkatri-hq.com             │
      │ begresu-store.com              │
      │ gevioel-clothing.fr            │
      │ xanfami.co.uk                  │
      │ tabe.ca                        │
      :Showing 125 of 125 companies
      Credits: charged 1, balance N
      "
    `);
  });

  it("Ctrl-C in the pager is the pager's: the command is not killed under it, and q ends it (exit 0)", async () => {
    const { status } = await seen(['search', 'shoes', '--limit', '1000', '--include', 'domain'], {
      rows: 20,
      // less's prompt; then q half a second after the Ctrl-C, and again every half second (less
      // drops keys typed with it, and a loaded machine may take longer).
      interruptAfter: ':',
      type: { after: ':', keys: 'q', delay: 0.5, repeat: true },
    });
    expect(status).toBe(0);
  });

  it('a pager that stops reading early (head): exit 0, no EPIPE, no error', async () => {
    const { status, screen } = await seen(['search', 'shoes', '--limit', '1000', '--include', 'domain'], {
      rows: 20,
      env: { COMPANY_DATA_PAGER: 'head -n 3' },
    });
    expect(status).toBe(0);
    expect(screen).toMatchInlineSnapshot(`
      "┌────────────────────────────────┐
      │ domain                         │
      ├────────────────────────────────┤
      Showing 125 of 125 companies
      Credits: charged 1, balance N
      "
    `);
  });

  it('--no-pager: the same output, straight to the terminal', async () => {
    const { status, screen } = await seen(['--no-pager', ...LONG], { rows: 20, env: PREFIX });
    expect(status).toBe(0);
    expect(screen).not.toContain('paged: ');
    expect(screen.split('\n').length).toBe(37);
  });

  it('output within the screen is not paged', async () => {
    const { status, screen } = await seen(['search', 'shoes', '--limit', '3', '--include', 'domain'], {
      rows: 20,
      env: PREFIX,
    });
    expect(status).toBe(0);
    expect(screen).toMatchInlineSnapshot(`
      "┌────────────────────┐
      │ domain             │
      ├────────────────────┤
      │ acme-shoes.com     │
      │ sacor-sneakers.com │
      │ hafloal-shoes.com  │
      └────────────────────┘
      Showing 3 of 125 companies
      Credits: charged 1, balance N
      "
    `);
  });

  it('never when stdout is not a terminal', async () => {
    const run = await runCli([...LONG, '-o', 'table'], { env: env(PREFIX) });
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n').slice(0, 2)).toEqual([
      '┌─────────────────────────┐',
      '│ domain                  │',
    ]);
    expect(run.stdout).not.toContain('paged: ');
  });
});

describe('stderr follows stderr', () => {
  it('-o json with stdout redirected to a file: the failure is human text on the terminal', async () => {
    const dir = mkdtempSync(join(home, 'out-'));
    const { status, screen } = await seen([], {
      shell: `$CLI -o json enrich --input ${dir}/nope.csv > ${dir}/out.json`,
    });
    expect(status).toBe(2);
    expect(screen.replaceAll(dir, '<dir>')).toBe(
      'error: Cannot read the input (invalid_input)\n  no such file: <dir>/nope.csv\n',
    );
    expect(readFileSync(join(dir, 'out.json'), 'utf8')).toBe('');
  });

  it('-o json with stderr redirected too: one JSON line for the script', async () => {
    const dir = mkdtempSync(join(home, 'out-'));
    const { status, screen } = await seen([], {
      shell: `$CLI -o json enrich --input ${dir}/nope.csv > ${dir}/out.json 2> ${dir}/err.json`,
    });
    expect(status).toBe(2);
    expect(screen).toBe('');
    expect(JSON.parse(readFileSync(join(dir, 'err.json'), 'utf8')).code).toBe('invalid_input');
  });
});
