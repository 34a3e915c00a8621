// What a person sees on a real terminal (issue 30), through a pseudo-terminal of a set size
// (test/helpers/pty-run.py, TIOCSWINSZ): the table takes the width the terminal reports, output
// within the screen is not paged, and less is the pager, its q and its Ctrl-C the person's. Needs
// `npm run build` first. The tables at 50, 80 and 120 columns, colour, which pager runs and when
// (a prefixing pager, head, --no-pager, piped), in-process: test/commands/terminal-view.test.ts.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
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

const PREFIX = { COMPANY_DATA_PAGER: `sed -e 's/^/paged: /'` };

describe('the pager', () => {
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

  it('output within the screen is not paged; it takes the 120 columns the terminal reports', async () => {
    // At the 80 columns assumed without a terminal's width these would be records, not a table.
    const { status, screen } = await seen(ENRICH, { columns: 120, rows: 20, env: PREFIX });
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
});
