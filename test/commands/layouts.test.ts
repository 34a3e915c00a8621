// Every command against every sandbox layout (src/sandbox/layouts.ts): the same rows and figures,
// in every output format, whatever shape the service chose where the spec leaves it open. The
// `flat` layout is the reference that the other test files pin exactly; each other layout must
// print what flat prints, byte for byte, and take the same credits from the sandbox's balance.
//
// `metered` differs on purpose in its prices (searches priced by rows) and credit names (read by
// src/http/credits.ts, issue 43), so it is run here only where it charges nothing.
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
  /** Files whose contents must match too. */
  wantFiles?: string[];
  /** The layouts to compare with flat (default: grouped and enveloped). */
  layouts?: LayoutName[];
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
  { name: 'enrich a missing domain', argv: ['enrich', 'no-such-company.example'], tty: true },
  { name: 'enrich a missing domain, JSON', argv: ['enrich', 'no-such-company.example'] },
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
  },
  {
    name: 'enrich batch without products or include, JSON',
    argv: ['enrich', '--input', '/tmp/cdt-XXXXXX/in.csv', '-o', 'json', '--products', 'profile,tech'],
    files: { 'in.csv': BATCH },
  },
  { name: 'search on a terminal', argv: ['search', 'shoes', '--limit', '5'], tty: true },
  { name: 'search, JSON', argv: ['search', 'shoes', '--limit', '5'] },
  { name: 'search, CSV', argv: ['search', 'shoes', '--limit', '5', '-o', 'csv'] },
  { name: 'search with no rows, CSV', argv: ['search', 'zzzqqq', '-o', 'csv'] },
  { name: 'search with no rows, JSON', argv: ['search', 'zzzqqq'] },
  { name: 'search with no rows on a terminal', argv: ['search', 'zzzqqq'], tty: true },
  { name: 'breakdown on a terminal', argv: ['breakdown', 'country', 'shoes', '--limit', '3'], tty: true },
  { name: 'breakdown, JSON', argv: ['breakdown', 'country', 'shoes', '--limit', '3'] },
  { name: 'breakdown, CSV', argv: ['breakdown', 'site_category', '--limit', '5', '-o', 'csv'] },
  { name: 'breakdown of an empty segment', argv: ['breakdown', 'country', 'zzzqqq'] },
  { name: 'lookalike on a terminal', argv: ['lookalike', 'acme-shoes.com', '--k', '3'], tty: true },
  { name: 'lookalike, JSON', argv: ['lookalike', 'acme-shoes.com', '--k', '3'] },
  { name: 'lookalike, CSV', argv: ['lookalike', 'acme-shoes.com', '--k', '3', '-o', 'csv'] },
  { name: 'lookalike without candidates', argv: ['lookalike', 'lonely-seed.com'] },
  {
    name: 'products on a terminal',
    argv: ['products'],
    tty: true,
    layouts: ['grouped', 'enveloped', 'metered'],
  },
  { name: 'products, JSON', argv: ['products'], layouts: ['grouped', 'enveloped', 'metered'] },
  { name: 'products, CSV', argv: ['products', '-o', 'csv'] },
  { name: 'fields on a terminal', argv: ['fields'], tty: true, layouts: ['grouped', 'enveloped', 'metered'] },
  { name: 'fields, CSV', argv: ['fields', '-o', 'csv'] },
  { name: 'fields --filters', argv: ['fields', '--filters'], tty: true },
  { name: 'fields --facets', argv: ['fields', '--facets'], tty: true },
  { name: 'fields --filters, JSON', argv: ['fields', '--filters'] },
  { name: 'errors, CSV', argv: ['errors', '-o', 'csv'] },
  { name: 'me on a terminal', argv: ['me'], tty: true, layouts: ['grouped', 'enveloped', 'metered'] },
  { name: 'me, JSON', argv: ['me'], layouts: ['grouped', 'enveloped', 'metered'] },
  { name: 'me, CSV', argv: ['me', '-o', 'csv'] },
  {
    name: 'spend after a lookup and a search',
    argv: ['spend', '-o', 'csv'],
    before: [
      ['enrich', 'acme-shoes.com'],
      ['search', 'shoes', '--limit', '5'],
    ],
  },
  { name: 'a refused filter', argv: ['search', '--filter', 'country=ZZ'] },
  {
    name: 'a search refused for the key',
    argv: ['search', 'shoes'],
    layouts: ['grouped', 'enveloped', 'metered'],
  },
];

const ALL_LAYOUTS: LayoutName[] = ['grouped', 'enveloped'];

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
      for (const layout of c.layouts ?? ALL_LAYOUTS) {
        const other = await run(c, layout);
        expect({ layout, ...other }).toEqual({ layout, ...flat });
      }
    });
  }
});
