// Every command against every sandbox layout (src/sandbox/layouts.ts): the same rows and figures,
// in every output format, whatever shape the service chose where the spec leaves it open. The
// `flat` layout is the reference that the other test files pin exactly; each other layout must
// print what flat prints, byte for byte, and take the same credits from the sandbox's balance.
//
// The bullets of issue 44's "Why" that these cases reproduce (each failed on the client before it
// read the layouts; credits counted from the sandbox's balance, `taken`):
// - blank columns, paid for: "enrich with products and include, CSV", "enrich several, NDJSON",
//   "enrich batch, CSV", "enrich batch without products or include, JSON" (grouped);
// - totals and paging assumed: "search on a terminal" (a total as text), and "search --all" below
//   (a page capped at 10 and 100 rows);
// - an empty result: "search with no rows, ..." and "breakdown of an empty segment";
// - breakdown figures: "breakdown ..." (buckets as a map, shares as percentages, other names);
// - catalog-level filters: "fields --filters", "fields --facets", "a refused filter";
// - smaller: "me ..." (capabilities as flags and as text), "products ..." (the default at catalog
//   level), "lookalike ..." (score and rank as text).
// The found answer that cannot be read at all: test/commands/unreadable-answer.test.ts; the MCP
// tools: test/mcp/layouts.test.ts.
//
// `metered` prices searches by rows and names its credit figures otherwise (headers and body, read
// by src/http/credits.ts): the same rows and figures, and the ledger as the sandbox charged.
import { describe, expect, it } from 'vitest';
import type { LayoutName } from '../../src/sandbox/layouts.js';
import { type CommandCase, runCase } from '../helpers/command-cases.js';
import type { SandboxHandle } from '../helpers/sandbox.js';

interface LayoutCase {
  name: string;
  argv: string[];
  tty?: boolean;
  files?: CommandCase['files'];
  before?: string[][];
  /** The exit code on flat (default 0), so that no comparison is of two failures. */
  code?: number;
  /** Flat prints nothing on stdout (a person reads "no record" or "no match" on stderr). */
  quiet?: boolean;
  /** Files whose contents must match too. */
  wantFiles?: string[];
}

const BATCH =
  'domain\nacme-shoes.com\nglobex.io\nno-such-company.example\nnot a domain\numbrella-health.de\n';

const CASES: LayoutCase[] = [
  { name: 'enrich one domain on a terminal', argv: ['enrich', 'acme-shoes.com'], tty: true },
  { name: 'enrich one domain, JSON', argv: ['enrich', 'acme-shoes.com'] },
  {
    name: 'enrich with products and include, CSV',
    argv: [
      'enrich',
      'acme-shoes.com',
      '--products',
      'profile,tech',
      '--include',
      'company_name,country,tech',
      '-o',
      'csv',
    ],
  },
  {
    name: 'enrich several, NDJSON',
    argv: ['enrich', 'acme-shoes.com', 'globex.io', '-o', 'ndjson', '--products', 'profile,tech'],
  },
  { name: 'enrich a missing domain', argv: ['enrich', 'no-such-company.example'], tty: true, quiet: true },
  { name: 'enrich a missing domain, JSON', argv: ['enrich', 'no-such-company.example'] },
  {
    name: 'enrich batch with two products, JSON',
    argv: ['enrich', '--input', '/tmp/cdt-XXXXXX/in.csv', '-o', 'json', '--products', 'profile,tech'],
    files: { 'in.csv': BATCH },
    code: 6,
  },
  {
    name: 'enrich batch, CSV',
    argv: [
      'enrich',
      '--input',
      '/tmp/cdt-XXXXXX/in.csv',
      '--products',
      'profile,tech',
      '--include',
      'company_name,country,tech',
    ],
    files: { 'in.csv': BATCH },
    code: 6,
  },
  {
    name: 'enrich batch without products or include, JSON',
    argv: ['enrich', '--input', '/tmp/cdt-XXXXXX/in.csv', '-o', 'json'],
    files: { 'in.csv': BATCH },
    code: 6,
  },
  { name: 'search on a terminal', argv: ['search', 'shoes', '--limit', '5'], tty: true },
  { name: 'search, JSON', argv: ['search', 'shoes', '--limit', '5'] },
  { name: 'search, CSV', argv: ['search', 'shoes', '--limit', '5', '-o', 'csv'] },
  { name: 'search, NDJSON', argv: ['search', 'shoes', '--limit', '5', '-o', 'ndjson'] },
  { name: 'search with no rows, CSV', argv: ['search', 'zzzqqq', '-o', 'csv'] },
  { name: 'search with no rows, JSON', argv: ['search', 'zzzqqq'] },
  { name: 'search with no rows on a terminal', argv: ['search', 'zzzqqq'], tty: true, quiet: true },
  { name: 'breakdown on a terminal', argv: ['breakdown', 'country', 'shoes', '--limit', '3'], tty: true },
  { name: 'breakdown, JSON', argv: ['breakdown', 'country', 'shoes', '--limit', '3'] },
  { name: 'breakdown, CSV', argv: ['breakdown', 'site_category', '--limit', '5', '-o', 'csv'] },
  { name: 'breakdown, NDJSON', argv: ['breakdown', 'employee_range', 'shoes', '-o', 'ndjson'] },
  { name: 'breakdown of an empty segment', argv: ['breakdown', 'country', 'zzzqqq'] },
  {
    name: 'breakdown of an empty segment on a terminal',
    argv: ['breakdown', 'country', 'zzzqqq'],
    tty: true,
  },
  { name: 'lookalike on a terminal', argv: ['lookalike', 'acme-shoes.com', '-k', '3'], tty: true },
  { name: 'lookalike, JSON', argv: ['lookalike', 'acme-shoes.com', '-k', '3'] },
  { name: 'lookalike, CSV', argv: ['lookalike', 'acme-shoes.com', '-k', '3', '-o', 'csv'] },
  {
    name: 'lookalike with evidence, NDJSON',
    argv: ['lookalike', 'acme-shoes.com', '-k', '3', '--evidence', '-o', 'ndjson'],
  },
  { name: 'lookalike without candidates', argv: ['lookalike', 'lonely-seed.com'] },
  {
    name: 'products on a terminal',
    argv: ['products'],
    tty: true,
  },
  { name: 'products, JSON', argv: ['products'] },
  { name: 'products, CSV', argv: ['products', '-o', 'csv'] },
  { name: 'fields on a terminal', argv: ['fields'], tty: true },
  { name: 'fields, CSV', argv: ['fields', '-o', 'csv'] },
  { name: 'fields --filters', argv: ['fields', '--filters'], tty: true },
  { name: 'fields --facets', argv: ['fields', '--facets'], tty: true },
  { name: 'fields --filters, JSON', argv: ['fields', '--filters'] },
  { name: 'errors, CSV', argv: ['errors', '-o', 'csv'] },
  { name: 'me on a terminal', argv: ['me'], tty: true },
  { name: 'me, JSON', argv: ['me'] },
  { name: 'me, CSV', argv: ['me', '-o', 'csv'] },
  {
    name: 'enrich batch, NDJSON, on a terminal',
    argv: ['enrich', '--input', '/tmp/cdt-XXXXXX/in.csv', '-o', 'ndjson'],
    tty: true,
    files: { 'in.csv': BATCH },
    code: 6,
  },
  {
    name: 'spend on a terminal after a lookup, a search and a breakdown',
    argv: ['spend', '--by', 'command'],
    tty: true,
    before: [
      ['enrich', 'acme-shoes.com'],
      ['search', 'shoes', '--limit', '5'],
      ['breakdown', 'country'],
    ],
  },
  {
    name: 'enrich batch under --budget: stops after the same lookups, the same charge',
    argv: [
      'enrich',
      '--input',
      '/tmp/cdt-XXXXXX/found.csv',
      '--budget',
      '3',
      '--concurrency',
      '1',
      '-o',
      'csv',
    ],
    files: {
      'found.csv': 'domain\nacme-shoes.com\nglobex.io\numbrella-health.de\ninitech.co.uk\nescape-test.com\n',
    },
    code: 4,
  },
  {
    name: 'spend after a missing domain: nothing charged',
    argv: ['spend', '-o', 'csv'],
    before: [
      ['enrich', 'no-such-company.example'],
      ['enrich', 'acme-shoes.com'],
    ],
  },
  {
    name: 'spend after a lookup and a search',
    argv: ['spend', '-o', 'csv'],
    before: [
      ['enrich', 'acme-shoes.com'],
      ['search', 'shoes', '--limit', '5'],
    ],
  },
  { name: 'a refused filter', argv: ['search', '--filter', 'country=ZZ'], code: 2 },
  {
    name: 'a search refused for the key',
    argv: ['search', 'shoes'],
    code: 3,
  },
];

const ALL_LAYOUTS: LayoutName[] = ['grouped', 'enveloped', 'metered'];

interface Seen {
  code: number;
  stdout: string;
  stderr: string;
  files: Record<string, string | null>;
  taken: number;
}

async function run(c: LayoutCase, layout: LayoutName): Promise<Seen> {
  let sandbox: SandboxHandle | undefined;
  const refused = c.name === 'a search refused for the key';
  const got = await runCase({
    name: c.name,
    argv: c.argv,
    tty: c.tty ?? false,
    files: c.files,
    before: c.before,
    env: refused ? { COMPANY_DATA_API_KEY: 'cd_sandbox_restricted_5b1d8e40' } : undefined,
    sandbox: { layout },
    setup: (s) => {
      sandbox = s;
    },
    wantFiles: Object.fromEntries((c.wantFiles ?? []).map((f) => [f, null])),
    wantCode: 0,
    wantStdout: '',
    wantStderr: '',
  });
  const before = refused ? 1_000_000 : 1_000_000;
  const key = refused ? 'restricted' : 'full';
  return {
    code: got.code,
    stdout: got.stdout,
    stderr: got.stderr,
    files: got.files,
    taken: before - (sandbox?.balances()[key] ?? Number.NaN),
  };
}

describe('every command reads every sandbox layout as it reads flat', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const flat = await run(c, 'flat');
      expect({ code: flat.code, printed: flat.stdout !== '' }).toEqual({
        code: c.code ?? 0,
        // A batch with an invalid row (exit 6) or stopped by its budget (4) still writes every row.
        printed: c.quiet !== true && [0, 4, 6].includes(c.code ?? 0),
      });
      for (const layout of ALL_LAYOUTS) {
        const other = await run(c, layout);
        expect({ layout, ...other }).toEqual({ layout, ...flat });
      }
    });
  }
});

/**
 * `search --all` and `api` answer differently on purpose: pages are capped by the layout (10 rows
 * a page on grouped, 100 on enveloped), and `api` prints the body as the service sent it. So the
 * rows are compared, and the ledger must hold exactly what the sandbox took.
 */
describe('paging and api on every layout', () => {
  async function onLayout(layout: LayoutName, argv: string[]) {
    let sandbox: SandboxHandle | undefined;
    const got = await runCase({
      name: argv.join(' '),
      argv: ['spend', '-o', 'json'],
      before: [argv],
      tty: false,
      sandbox: { layout },
      setup: (s) => {
        sandbox = s;
      },
      wantCode: 0,
      wantStdout: '',
      wantStderr: '',
    });
    const ledger = JSON.parse(got.stdout) as { total: Record<string, number> };
    return { ledger: ledger.total, taken: 1_000_000 - (sandbox?.balances().full ?? Number.NaN) };
  }

  async function rowsOn(layout: LayoutName, argv: string[]) {
    const got = await runCase({
      name: argv.join(' '),
      argv,
      tty: false,
      sandbox: { layout },
      wantCode: 0,
      wantStdout: '',
      wantStderr: '',
    });
    return { code: got.code, stdout: got.stdout, stderr: got.stderr };
  }

  it('search --all: the same rows in as many pages as the layout gives, ending on the total, the ledger exact', async () => {
    const argv = ['search', 'shoes', '--all', '-o', 'csv'];
    const flat = await rowsOn('flat', argv);
    expect(flat.stdout.split('\n').length).toBe(127); // the header, 125 rows, the last newline
    expect(flat.stderr).toBe('Fetched all 125 companies (1 page).\n');
    const pages: Record<string, number> = { grouped: 13, enveloped: 2, metered: 2 };
    // metered prices a page by its rows (a credit for every 50 started): 100 rows, then 25.
    const price: Record<string, number> = { grouped: 13, enveloped: 2, metered: 3 };
    for (const layout of ['grouped', 'enveloped', 'metered'] as const) {
      const other = await rowsOn(layout, argv);
      expect({ layout, ...other }).toEqual({
        layout,
        code: 0,
        stdout: flat.stdout,
        stderr: `Fetched all 125 companies (${pages[layout]} pages).\n`,
      });
      // The ledger holds every page as the sandbox charged it.
      expect(await onLayout(layout, argv)).toEqual({
        ledger: { charged: price[layout], possibly_charged: 0, calls: pages[layout] },
        taken: price[layout],
      });
    }
  });

  it('search --all with no match: an empty result on every layout, nothing charged', async () => {
    const argv = ['search', 'zzzqqq', '--all', '-o', 'json'];
    const flat = await rowsOn('flat', argv);
    expect(flat.code).toBe(0);
    for (const layout of ['grouped', 'enveloped', 'metered'] as const) {
      expect({ layout, ...(await rowsOn(layout, argv)) }).toEqual({ layout, ...flat });
      expect(await onLayout(layout, argv)).toEqual({
        ledger: { charged: 0, possibly_charged: 0, calls: 0 },
        taken: 0,
      });
    }
  });

  it('api: the body as sent, exit 0, and a lookup in the ledger as the sandbox charged it', async () => {
    for (const layout of ['flat', 'grouped', 'enveloped', 'metered'] as const) {
      const got = await rowsOn(layout, ['api', 'GET', '/api/domains/acme-shoes.com']);
      expect({ layout, code: got.code }).toEqual({ layout, code: 0 });
      expect(JSON.parse(got.stdout).found).toBe(true);
      expect(await onLayout(layout, ['api', 'GET', '/api/domains/acme-shoes.com'])).toEqual({
        ledger: { charged: 1, possibly_charged: 0, calls: 1 },
        taken: 1,
      });
    }
  });
});

describe('--sandbox in another layout (COMPANY_DATA_SANDBOX_LAYOUT)', () => {
  it('serves the in-process sandbox in the layout named, and refuses a name it does not have', async () => {
    const run = (layout: string | undefined) =>
      runCase({
        name: `--sandbox ${layout}`,
        argv: ['--sandbox', 'me', '-o', 'csv'],
        tty: false,
        env: {
          COMPANY_DATA_SANDBOX_LAYOUT: layout,
          COMPANY_DATA_BASE_URL: undefined,
          COMPANY_DATA_API_KEY: undefined,
        },
        wantCode: 0,
        wantStdout: '',
        wantStderr: '',
      });
    const flat = await run(undefined);
    expect(flat.stdout).toBe(
      'plan,balance,capabilities,key_name,rate_limit_per_second\npro,1000000,domains;search;breakdown;lookalike,full,\n',
    );
    expect((await run('grouped')).stdout).toBe(flat.stdout);
    const wrong = await run('nested');
    expect({ code: wrong.code, stdout: wrong.stdout }).toEqual({ code: 2, stdout: '' });
    expect(wrong.stderr).toBe(
      [
        'error: Usage error (usage_error)',
        '  COMPANY_DATA_SANDBOX_LAYOUT is "nested", which is no sandbox layout',
        '  Set it to one of flat, grouped, enveloped, metered, or unset it.',
        '',
      ].join('\n'),
    );
  });
});
