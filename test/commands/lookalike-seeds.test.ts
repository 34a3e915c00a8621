// `lookalike` over several seeds, in-process with exact stdout and stderr: the fused table on a
// terminal, the JSON document, NDJSON and CSV piped, a seed without lookalikes, --seeds from
// stdin and from a file, exclusions, --budget stopping the run, a seed whose request fails, and
// the checks made before anything is sent. The fusion itself is checked by hand in
// test/lookalike/fusion.test.ts; here ionmimi-store.io, acme-shoes.com and termarviozen.com are
// one another's lookalikes, so every case also shows the seeds left out of the results.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CommandCase,
  caseEnvironment,
  DIR,
  expectCase,
  KEYS,
  lines,
  SANDBOX_URL,
} from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { call, type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';
import { listenLocal } from '../helpers/server.js';

const SEEDS = ['acme-shoes.com', 'termarviozen.com', 'ionmimi-store.io'];

/** A document as -o json prints it: indented by two spaces, ended by a newline. */
function pretty(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A seed in the -o json document's `seeds`. */
function seedEntry(
  seed: string,
  status: string,
  candidates: number | null,
  charged: number | null,
  error?: [string, string],
) {
  return {
    seed,
    status,
    candidates,
    credits_charged: charged,
    error_code: error?.[0] ?? null,
    error_detail: error?.[1] ?? null,
  };
}

/** A fused row of a fashion company in the US, in -o json. */
function fusedRow(
  rank: number,
  domain: string,
  score: number,
  ranks: Record<string, number>,
  scores: Record<string, number>,
  name: string,
) {
  return {
    rank,
    domain,
    score,
    seed_count: Object.keys(ranks).length,
    similar_to: Object.keys(ranks),
    seed_ranks: ranks,
    seed_scores: scores,
    company_name: name,
    country: 'US',
    site_category: 'fashion',
  };
}

const cases: CommandCase[] = [
  {
    name: 'three seeds on a terminal: fused rank, score to four decimals, seed count, similar to',
    argv: ['lookalike', ...SEEDS, '-k', '5'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌──────┬───────────────────────┬────────┬───────┬──────────────────────────────────────────────────┐',
      '│ rank │ domain                │ score  │ seed  │ similar to                                       │',
      '│      │                       │        │ count │                                                  │',
      '├──────┼───────────────────────┼────────┼───────┼──────────────────────────────────────────────────┤',
      '│ 1    │ yorko-direct.io       │ 0.0481 │ 3     │ ionmimi-store.io, acme-shoes.com,                │',
      '│      │                       │        │       │ termarviozen.com                                 │',
      '├──────┼───────────────────────┼────────┼───────┼──────────────────────────────────────────────────┤',
      '│ 2    │ quinquinquin.net      │ 0.0303 │ 2     │ acme-shoes.com, ionmimi-store.io                 │',
      '├──────┼───────────────────────┼────────┼───────┼──────────────────────────────────────────────────┤',
      '│ 3    │ corteral.ca           │ 0.0159 │ 1     │ ionmimi-store.io                                 │',
      '├──────┼───────────────────────┼────────┼───────┼──────────────────────────────────────────────────┤',
      '│ 4    │ halkeldri-apparel.com │ 0.0156 │ 1     │ ionmimi-store.io                                 │',
      '├──────┼───────────────────────┼────────┼───────┼──────────────────────────────────────────────────┤',
      '│ 5    │ roslumsa-boots.com    │ 0.0156 │ 1     │ termarviozen.com                                 │',
      '└──────┴───────────────────────┴────────┴───────┴──────────────────────────────────────────────────┘',
    ),
    wantStderr: lines('5 lookalikes from 3 seeds', 'Credits: charged 3, balance 999,997'),
  },
  {
    name: 'three seeds with --evidence on a terminal: "why" per seed, cut to the width',
    argv: ['lookalike', ...SEEDS, '-k', '2', '--evidence'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌──────┬─────────────────┬────────┬───────┬───────────────────────────┬───────────────────────────┐',
      '│ rank │ domain          │ score  │ seed  │ similar to                │ why                       │',
      '│      │                 │        │ count │                           │                           │',
      '├──────┼─────────────────┼────────┼───────┼───────────────────────────┼───────────────────────────┤',
      '│ 1    │ yorko-direct.io │ 0.0481 │ 3     │ ionmimi-store.io,         │ ionmimi-store.io: same    │',
      '│      │                 │        │       │ acme-shoes.com,           │ category, platform,       │',
      '│      │                 │        │       │ termarviozen.com          │ country; 7 shared tech    │',
      '│      │                 │        │       │                           │ (shopify, stripe,         │',
      '│      │                 │        │       │                           │ gorgias, +4) |            │',
      '│      │                 │        │       │                           │ acme-shoes.com: same      │',
      '│      │                 │        │       │                           │ category, platform,       │',
      '│      │                 │        │       │                           │ country; 5 shared tech    │',
      '│      │                 │        │       │                           │ (shopify, klaviyo,        │',
      '│      │                 │        │       │                           │ google_analytics, +2) |   │',
      '│      │                 │        │       │                           │ termarviozen.com: same    │',
      '│      │                 │        │       │                           │ category, platform,       │',
      '│      │                 │        │       │                           │ country; 4 shared tech    │',
      '│      │                 │        │       │                           │ (shopify, gorgias,        │',
      '│      │                 │        │       │                           │ google_analytics, +1)     │',
      '├──────┼─────────────────┼────────┼───────┼───────────────────────────┼───────────────────────────┤',
      '│ 2    │ corteral.ca     │ 0.0159 │ 1     │ ionmimi-store.io          │ ionmimi-store.io: same    │',
      '│      │                 │        │       │                           │ category, platform,       │',
      '│      │                 │        │       │                           │ country; 5 shared tech    │',
      '│      │                 │        │       │                           │ (shopify,                 │',
      '│      │                 │        │       │                           │ google_tag_manager,       │',
      '│      │                 │        │       │                           │ google_analytics, +2)     │',
      '└──────┴─────────────────┴────────┴───────┴───────────────────────────┴───────────────────────────┘',
    ),
    wantStderr: lines('2 lookalikes from 3 seeds', 'Credits: charged 3, balance 999,997'),
  },
  {
    name: 'three seeds piped: { seeds, k, results, credits } with each seed ranked and scored',
    argv: ['lookalike', ...SEEDS, '-k', '2'],
    tty: false,
    wantCode: 0,
    wantStdout: pretty({
      seeds: SEEDS.map((seed) => seedEntry(seed, 'found', 5, 1)),
      k: 2,
      results: [
        fusedRow(
          1,
          'yorko-direct.io',
          1 / 61 + 1 / 63 + 1 / 63,
          { 'ionmimi-store.io': 1, 'acme-shoes.com': 3, 'termarviozen.com': 3 },
          { 'ionmimi-store.io': 0.8889, 'acme-shoes.com': 0.7273, 'termarviozen.com': 0.7 },
          'Yorko Direct',
        ),
        fusedRow(
          2,
          'corteral.ca',
          1 / 63,
          { 'ionmimi-store.io': 3 },
          { 'ionmimi-store.io': 0.7273 },
          'Corteral',
        ),
      ],
      credits: { charged: 3, remaining: 999997 },
    }),
    wantStderr: lines('2 lookalikes from 3 seeds'),
  },
  {
    name: '-o ndjson piped: one fused row per line',
    argv: ['lookalike', ...SEEDS, '-k', '3', '-o', 'ndjson'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{"rank":1,"domain":"yorko-direct.io","score":0.04813947436898257,"seed_count":3,"similar_to":["ionmimi-store.io","acme-shoes.com","termarviozen.com"],"seed_ranks":{"ionmimi-store.io":1,"acme-shoes.com":3,"termarviozen.com":3},"seed_scores":{"ionmimi-store.io":0.8889,"acme-shoes.com":0.7273,"termarviozen.com":0.7},"company_name":"Yorko Direct","country":"US","site_category":"fashion"}',
      '{"rank":2,"domain":"corteral.ca","score":0.015873015873015872,"seed_count":1,"similar_to":["ionmimi-store.io"],"seed_ranks":{"ionmimi-store.io":3},"seed_scores":{"ionmimi-store.io":0.7273},"company_name":"Corteral","country":"US","site_category":"fashion"}',
      '{"rank":3,"domain":"halkeldri-apparel.com","score":0.015625,"seed_count":1,"similar_to":["ionmimi-store.io"],"seed_ranks":{"ionmimi-store.io":4},"seed_scores":{"ionmimi-store.io":0.7273},"company_name":"Halkeldri Apparel","country":"US","site_category":"fashion"}',
    ),
    wantStderr: lines('3 lookalikes from 3 seeds'),
  },
  {
    name: '-o csv piped: the fused columns, the seeds joined by ";", then the default fields',
    argv: ['lookalike', ...SEEDS, '-k', '3', '-o', 'csv'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      'rank,domain,score,seed_count,similar_to,company_name,country,site_category',
      '1,yorko-direct.io,0.04813947436898257,3,ionmimi-store.io;acme-shoes.com;termarviozen.com,Yorko Direct,US,fashion',
      '2,corteral.ca,0.015873015873015872,1,ionmimi-store.io,Corteral,US,fashion',
      '3,halkeldri-apparel.com,0.015625,1,ionmimi-store.io,Halkeldri Apparel,US,fashion',
    ),
    wantStderr: lines('3 lookalikes from 3 seeds'),
  },
  {
    name: 'a seed without lookalikes on a terminal: said on stderr, the others fused, exit 0',
    argv: ['lookalike', 'acme-shoes.com', 'lonely-seed.com', '-k', '3'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌──────┬──────────────────┬────────┬────────────┬────────────────┐',
      '│ rank │ domain           │ score  │ seed count │ similar to     │',
      '├──────┼──────────────────┼────────┼────────────┼────────────────┤',
      '│ 1    │ termarviozen.com │ 0.0164 │ 1          │ acme-shoes.com │',
      '│ 2    │ ionmimi-store.io │ 0.0161 │ 1          │ acme-shoes.com │',
      '│ 3    │ yorko-direct.io  │ 0.0159 │ 1          │ acme-shoes.com │',
      '└──────┴──────────────────┴────────┴────────────┴────────────────┘',
    ),
    wantStderr: lines(
      'no lookalikes available for lonely-seed.com; nothing charged',
      '3 lookalikes from 1 seed',
      'Credits: charged 1, balance 999,999',
    ),
  },
  {
    name: 'a seed without lookalikes piped: status not_available, nothing charged for it',
    argv: ['lookalike', 'acme-shoes.com', 'lonely-seed.com', '-k', '1'],
    tty: false,
    wantCode: 0,
    wantStdout: pretty({
      seeds: [
        seedEntry('acme-shoes.com', 'found', 3, 1),
        seedEntry('lonely-seed.com', 'not_available', 0, 0),
      ],
      k: 1,
      results: [
        fusedRow(
          1,
          'termarviozen.com',
          1 / 61,
          { 'acme-shoes.com': 1 },
          { 'acme-shoes.com': 0.7778 },
          'Termarviozen',
        ),
      ],
      credits: { charged: 1, remaining: 999999 },
    }),
    wantStderr: lines(
      'no lookalikes available for lonely-seed.com; nothing charged',
      '1 lookalike from 1 seed',
    ),
  },
  {
    name: 'only seeds without lookalikes: an empty result, exit 0',
    argv: ['lookalike', 'lonely-seed.com', 'no-such-company.example', '-o', 'ndjson'],
    tty: false,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines(
      'no lookalikes available for lonely-seed.com; nothing charged',
      'no lookalikes available for no-such-company.example; nothing charged',
      'No lookalikes from 2 seeds.',
    ),
  },
  {
    name: '--seeds - reads a CSV from stdin: URLs normalised, duplicates dropped, -o csv',
    argv: ['lookalike', '--seeds', '-', '-k', '3', '-o', 'csv'],
    tty: false,
    stdin: 'domain\nacme-shoes.com\nhttps://www.Termarviozen.com/\nacme-shoes.com\nlonely-seed.com\n',
    wantCode: 0,
    wantStdout: lines(
      'rank,domain,score,seed_count,similar_to,company_name,country,site_category',
      '1,ionmimi-store.io,0.03225806451612903,2,acme-shoes.com;termarviozen.com,Ionmimi Store,US,fashion',
      '2,yorko-direct.io,0.031746031746031744,2,acme-shoes.com;termarviozen.com,Yorko Direct,US,fashion',
      '3,quinquinquin.net,0.015625,1,acme-shoes.com,Quinquinquin,US,fashion',
    ),
    wantStderr: lines(
      'Using 3 seeds (1 duplicate dropped).',
      'no lookalikes available for lonely-seed.com; nothing charged',
      '3 lookalikes from 2 seeds',
    ),
  },
  {
    name: '--seeds - with a plain list on stdin, on a terminal',
    argv: ['lookalike', '--seeds', '-', '-k', '2'],
    tty: true,
    stdin: 'acme-shoes.com\ntermarviozen.com\n',
    wantCode: 0,
    wantStdout: lines(
      '┌──────┬──────────────────┬────────┬────────────┬──────────────────────────────────┐',
      '│ rank │ domain           │ score  │ seed count │ similar to                       │',
      '├──────┼──────────────────┼────────┼────────────┼──────────────────────────────────┤',
      '│ 1    │ ionmimi-store.io │ 0.0323 │ 2          │ acme-shoes.com, termarviozen.com │',
      '│ 2    │ yorko-direct.io  │ 0.0317 │ 2          │ acme-shoes.com, termarviozen.com │',
      '└──────┴──────────────────┴────────┴────────────┴──────────────────────────────────┘',
    ),
    wantStderr: lines('2 lookalikes from 2 seeds', 'Credits: charged 2, balance 999,998'),
  },
  {
    name: '--seeds <file> with --column, and --include fields on a terminal',
    argv: [
      'lookalike',
      '--seeds',
      `${DIR}/s.csv`,
      '--column',
      'homepage_url',
      '-k',
      '2',
      '--include',
      'domain,country',
    ],
    tty: true,
    files: { 's.csv': 'company,homepage_url\nAcme,acme-shoes.com\n' },
    wantCode: 0,
    wantStdout: lines(
      '┌──────┬──────────────────┬────────┬────────────┬────────────────┬─────────┐',
      '│ rank │ domain           │ score  │ seed count │ similar to     │ country │',
      '├──────┼──────────────────┼────────┼────────────┼────────────────┼─────────┤',
      '│ 1    │ termarviozen.com │ 0.0164 │ 1          │ acme-shoes.com │ US      │',
      '│ 2    │ ionmimi-store.io │ 0.0161 │ 1          │ acme-shoes.com │ US      │',
      '└──────┴──────────────────┴────────┴────────────┴────────────────┴─────────┘',
    ),
    wantStderr: lines('2 lookalikes from 1 seed', 'Credits: charged 1, balance 999,999'),
  },
  {
    name: '--exclude and --exclude-domain leave their domains out; the seeds are out anyway',
    argv: [
      'lookalike',
      ...SEEDS,
      '-k',
      '3',
      '--exclude',
      `${DIR}/customers.csv`,
      '--exclude-domain',
      'https://www.yorko-direct.io/',
    ],
    tty: true,
    files: { 'customers.csv': 'website\nquinquinquin.net\n' },
    wantCode: 0,
    wantStdout: lines(
      '┌──────┬───────────────────────┬────────┬────────────┬──────────────────┐',
      '│ rank │ domain                │ score  │ seed count │ similar to       │',
      '├──────┼───────────────────────┼────────┼────────────┼──────────────────┤',
      '│ 1    │ corteral.ca           │ 0.0159 │ 1          │ ionmimi-store.io │',
      '│ 2    │ halkeldri-apparel.com │ 0.0156 │ 1          │ ionmimi-store.io │',
      '│ 3    │ roslumsa-boots.com    │ 0.0156 │ 1          │ termarviozen.com │',
      '└──────┴───────────────────────┴────────┴────────────┴──────────────────┘',
    ),
    wantStderr: lines(
      'Excluding 2 domains.',
      'Left out 2 candidates on the exclusion list.',
      '3 lookalikes from 3 seeds',
      'Credits: charged 3, balance 999,997',
    ),
  },
  {
    name: 'one seed with --exclude-domain keeps its own form and the service ranks',
    argv: ['lookalike', 'acme-shoes.com', '-k', '3', '--exclude-domain', 'ionmimi-store.io'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌──────┬──────────────────┬───────┬──────────────┬─────────┬───────────────┐',
      '│ rank │ domain           │ score │ company name │ country │ site category │',
      '├──────┼──────────────────┼───────┼──────────────┼─────────┼───────────────┤',
      '│ 1    │ termarviozen.com │ 0.778 │ Termarviozen │ US      │ fashion       │',
      '│ 3    │ yorko-direct.io  │ 0.727 │ Yorko Direct │ US      │ fashion       │',
      '│ 4    │ quinquinquin.net │ 0.692 │ Quinquinquin │ US      │ fashion       │',
      '└──────┴──────────────────┴───────┴──────────────┴─────────┴───────────────┘',
    ),
    wantStderr: lines(
      'Excluding 1 domain.',
      'Left out 1 candidate on the exclusion list.',
      '3 lookalikes of acme-shoes.com',
      'Credits: charged 1, balance 999,999',
    ),
  },
  {
    name: '--budget 2 on a terminal: two seeds bought and fused, the third not requested, exit 4',
    argv: ['lookalike', ...SEEDS, '--budget', '2', '-k', '3'],
    tty: true,
    wantCode: 4,
    wantStdout: lines(
      '┌──────┬────────────────────┬────────┬────────────┬──────────────────────────────────┐',
      '│ rank │ domain             │ score  │ seed count │ similar to                       │',
      '├──────┼────────────────────┼────────┼────────────┼──────────────────────────────────┤',
      '│ 1    │ yorko-direct.io    │ 0.0317 │ 2          │ acme-shoes.com, termarviozen.com │',
      '│ 2    │ quinquinquin.net   │ 0.0156 │ 1          │ acme-shoes.com                   │',
      '│ 3    │ roslumsa-boots.com │ 0.0156 │ 1          │ termarviozen.com                 │',
      '└──────┴────────────────────┴────────┴────────────┴──────────────────────────────────┘',
    ),
    wantStderr: lines(
      'warning: --budget 2 reached: 1 seed not requested (ionmimi-store.io)',
      '  Raise --budget and run again; every seed is requested again.',
      '3 lookalikes from 2 seeds',
      'Credits: charged 2, balance 999,998',
    ),
  },
  {
    name: '--budget 0 piped: nothing sent, every seed not_requested, exit 4',
    argv: ['lookalike', 'acme-shoes.com', 'termarviozen.com', '--budget', '0', '-k', '2'],
    tty: false,
    wantCode: 4,
    wantStdout: pretty({
      seeds: ['acme-shoes.com', 'termarviozen.com'].map((seed) =>
        seedEntry(seed, 'not_requested', null, null, ['budget_exhausted', '--budget 0 reached']),
      ),
      k: 2,
      results: [],
      credits: { charged: null, remaining: null },
    }),
    wantStderr: lines(
      'warning: --budget 0 reached: 2 seeds not requested (acme-shoes.com, termarviozen.com)',
      '  Raise --budget and run again; every seed is requested again.',
    ),
  },
  {
    name: 'one seed with --budget 0: not requested, exit 4',
    argv: ['lookalike', 'acme-shoes.com', '--budget', '0'],
    tty: true,
    wantCode: 4,
    wantStdout: '',
    wantStderr: lines(
      'warning: --budget 0 reached: lookalikes of acme-shoes.com not requested',
      '  Raise --budget and run again; every seed is requested again.',
    ),
  },
  {
    name: 'insufficient credits: the run stops at the first refusal, the rest not requested, exit 4',
    argv: ['lookalike', 'acme-shoes.com', 'lonely-seed.com', 'termarviozen.com', '--concurrency', '1'],
    tty: true,
    env: { COMPANY_DATA_API_KEY: KEYS.empty },
    wantCode: 4,
    wantStdout: '',
    wantStderr: lines(
      'warning: lookalikes of acme-shoes.com failed: Insufficient credits (insufficient_credits): a lookalike costs 1 credit; the balance is 0',
      'warning: Insufficient credits (insufficient_credits): 2 seeds not requested (lonely-seed.com, termarviozen.com)',
      '  Top up the balance or use a key with enough credits; `company-data me` shows the balance.',
    ),
  },
  {
    name: 'the same seed twice is one seed, in the fused form',
    argv: ['lookalike', 'acme-shoes.com', 'https://www.acme-shoes.com/', '-k', '2', '-o', 'csv'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      'rank,domain,score,seed_count,similar_to,company_name,country,site_category',
      '1,termarviozen.com,0.01639344262295082,1,acme-shoes.com,Termarviozen,US,fashion',
      '2,ionmimi-store.io,0.016129032258064516,1,acme-shoes.com,Ionmimi Store,US,fashion',
    ),
    wantStderr: lines('Using 1 seed (1 duplicate dropped).', '2 lookalikes from 1 seed'),
  },
  {
    name: 'seeds that are not domains: all named, exit 2, nothing sent',
    argv: ['lookalike', 'acme-shoes.com', 'not a domain', 'x y'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Invalid seed domains (invalid_domain)',
      '  "not a domain" contains spaces; "x y" contains spaces',
      '  Give a company domain such as acme-shoes.com, or its http(s) URL.',
    ),
  },
  {
    name: 'a --seeds file with a bad entry and a malformed record: each named with its line, exit 2',
    argv: ['lookalike', '--seeds', `${DIR}/seeds.csv`],
    tty: true,
    files: { 'seeds.csv': 'domain,name\nacme-shoes.com,Acme\nnot a domain,X\n"unterminated,Y\n' },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Invalid seed domains (invalid_domain)',
      `  --seeds ${DIR}/seeds.csv line 3: "not a domain" contains spaces; --seeds ${DIR}/seeds.csv line 4: a quoted field opened on line 4 is never closed; the following lines were read on their own`,
      '  Give a company domain such as acme-shoes.com, or its http(s) URL.',
    ),
  },
  {
    name: 'a --seeds file without a domain column: exit 2, naming --column',
    argv: ['lookalike', '--seeds', `${DIR}/s.csv`],
    tty: true,
    files: { 's.csv': 'company,homepage_url\nAcme,acme-shoes.com\n' },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      `  --seeds ${DIR}/s.csv: no domain column found; expected one of domain, website, url, company_domain, homepage; the columns are "company", "homepage_url"`,
      '  Name the column with --column <name>.',
    ),
  },
  {
    name: 'a --seeds file that does not exist: exit 2',
    argv: ['lookalike', '--seeds', `${DIR}/none.csv`],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Cannot read seeds (invalid_input)',
      `  ${DIR}/none.csv: no such file`,
      '  Give --seeds a CSV with a domain column (domain, website, url, ...) or a list of one domain per line, or `-` for stdin.',
    ),
  },
  {
    name: 'an empty --seeds -: exit 2',
    argv: ['lookalike', '--seeds', '-'],
    tty: false,
    stdin: 'domain\n',
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"usage_error","status":0,"title":"Usage error","detail":"--seeds - holds no domain","retryable":false,"hint":"Give one seed domain per line, or a CSV with a domain column."}',
    ),
  },
  {
    name: 'seeds as arguments and --seeds: exit 2',
    argv: ['lookalike', 'acme-shoes.com', '--seeds', 'seeds.csv'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  give seeds as arguments or a file with --seeds, not both',
    ),
  },
  {
    name: 'no seed at all: exit 2',
    argv: ['lookalike'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  no seed: give a seed domain, several, or --seeds <file>',
      '  See `company-data lookalike --help`.',
    ),
  },
  {
    name: '--seeds - and --exclude - both on stdin: exit 2',
    argv: ['lookalike', '--seeds', '-', '--exclude', '-'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  --seeds - and --exclude - cannot both read stdin: give one of them a file',
    ),
  },
  {
    name: '--column without --seeds: exit 2',
    argv: ['lookalike', 'acme-shoes.com', '--column', 'site'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines('error: Usage error (usage_error)', '  --column applies to --seeds <file>'),
  },
  {
    name: 'a --concurrency out of range: exit 2 from the flag parser',
    argv: ['lookalike', ...SEEDS, '--concurrency', '17'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      `error: option '--concurrency <n>' argument '17' is invalid. --concurrency must be a whole number between 1 and 16, got "17"`,
      '(add --help for usage)',
    ),
  },
  {
    name: 'a key without the lookalike capability on a terminal: the run stops, exit 3',
    argv: ['lookalike', ...SEEDS],
    tty: true,
    env: { COMPANY_DATA_API_KEY: KEYS.restricted },
    wantCode: 3,
    wantStdout: '',
    wantStderr: lines(
      'error: API key restricted (api_key_restricted, HTTP 403)',
      '  this key may not use lookalike',
      '  Use a key that is permitted for this action (check `company-data me` for its capabilities).',
    ),
  },
];

describe('lookalike with several seeds', () => {
  it.each(cases)('$name', expectCase);
});

// Faults are queued on the sandbox itself, so these cases run against one sandbox of their own.
describe('lookalike with a seed whose request fails', () => {
  let sandbox: SandboxHandle;
  let dir: string;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    dir = mkdtempSync('/tmp/cdt-');
  });
  afterAll(async () => {
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function run(argv: string[], tty: boolean) {
    const env = Object.fromEntries(
      Object.entries(caseEnvironment({})).map(([k, v]) => [
        k,
        v.replaceAll(DIR, dir).replaceAll(SANDBOX_URL, sandbox.url),
      ]),
    );
    return runInProcess(argv, { tty, env });
  }

  it('reports the failed seed, fuses the others and exits 6 (terminal)', async () => {
    sandbox.faults.add('internal_error', { path: '/api/lookalike/termarviozen.com', times: 1 });
    expect(await run(['--retries', '0', 'lookalike', ...SEEDS, '-k', '2'], true)).toEqual({
      code: 6,
      stdout: lines(
        '┌──────┬─────────────────┬────────┬────────────┬──────────────────────────────────┐',
        '│ rank │ domain          │ score  │ seed count │ similar to                       │',
        '├──────┼─────────────────┼────────┼────────────┼──────────────────────────────────┤',
        '│ 1    │ yorko-direct.io │ 0.0323 │ 2          │ ionmimi-store.io, acme-shoes.com │',
        '│ 2    │ corteral.ca     │ 0.0159 │ 1          │ ionmimi-store.io                 │',
        '└──────┴─────────────────┴────────┴────────────┴──────────────────────────────────┘',
      ),
      stderr: lines(
        'warning: lookalikes of termarviozen.com failed: Internal error (internal_error): fault injected by the sandbox (internal_error)',
        '2 lookalikes from 2 seeds',
        'Credits: charged 2, balance 999,998',
      ),
    });
  });

  it('keeps the failed seed in the JSON document with its error (piped), exit 6', async () => {
    sandbox.faults.add('search_unavailable', { path: '/api/lookalike/acme-shoes.com', times: 1 });
    const result = await run(
      ['--retries', '0', 'lookalike', 'acme-shoes.com', 'lonely-seed.com', '-k', '1'],
      false,
    );
    expect(result).toEqual({
      code: 6,
      stdout: pretty({
        seeds: [
          seedEntry('acme-shoes.com', 'failed', null, null, [
            'search_unavailable',
            'fault injected by the sandbox (search_unavailable)',
          ]),
          seedEntry('lonely-seed.com', 'not_available', 0, 0),
        ],
        k: 1,
        results: [],
        credits: { charged: 0, remaining: 999998 },
      }),
      stderr: lines(
        'warning: lookalikes of acme-shoes.com failed: Search unavailable (search_unavailable): fault injected by the sandbox (search_unavailable)',
        'no lookalikes available for lonely-seed.com; nothing charged',
        'No lookalikes from 1 seed.',
      ),
    });
  });

  it('exits with the failure itself when no seed answered', async () => {
    sandbox.faults.add('internal_error', { path: '/api/lookalike/', times: 2 });
    expect(await run(['--retries', '0', 'lookalike', 'acme-shoes.com', 'termarviozen.com'], true)).toEqual({
      code: 5,
      stdout: '',
      stderr: lines(
        'error: Internal error (internal_error, HTTP 500)',
        '  fault injected by the sandbox (internal_error)',
        '  The service is temporarily unavailable; try again later (retries are automatic, see --retries).',
      ),
    });
  });
});

// A service whose lookalike costs 3 credits: a front that passes every call on to a sandbox and
// reports 3 in the charge header of each lookalike answer. --budget learns the price from the
// first answer, so the first request goes alone and the cap holds however many are allowed.
describe('lookalike with --budget when a lookalike costs 3 credits', () => {
  let sandbox: SandboxHandle;
  let front: { url: string; close: () => Promise<void> };
  let dir: string;
  let active = 0;
  let mostActive = 0;
  let lookalikes = 0;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    dir = mkdtempSync('/tmp/cdt-');
    const server = createServer(async (req, res) => {
      const url = new URL(req.url ?? '/', 'http://front');
      const lookalike = url.pathname.startsWith('/api/lookalike/');
      if (lookalike) {
        lookalikes++;
        mostActive = Math.max(mostActive, ++active);
      }
      const answer = await call(sandbox.url, url.pathname, {
        query: Object.fromEntries(url.searchParams),
        headers: req.headers.authorization ? { authorization: req.headers.authorization } : {},
      });
      const headers = { ...answer.headers };
      delete headers['content-length'];
      delete headers['transfer-encoding'];
      if (lookalike) headers['x-credits-charged'] = '3';
      // Long enough for any other request allowed in flight to arrive before this one ends.
      if (lookalike) await new Promise((resolve) => setTimeout(resolve, 100));
      res.writeHead(answer.status, headers);
      res.end(answer.text);
      if (lookalike) active--;
    });
    front = await listenLocal(server);
  });
  afterAll(async () => {
    await front?.close();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    [5, 1, 3],
    [7, 2, 6],
  ])(
    '--budget %i: %i request(s), one at a time until the price is known, %i credits',
    async (budget, sent, charged) => {
      lookalikes = 0;
      mostActive = 0;
      const env = {
        ...caseEnvironment({}),
        COMPANY_DATA_BASE_URL: front.url,
        HOME: dir,
        XDG_CONFIG_HOME: dir,
        XDG_CACHE_HOME: dir,
      };
      const result = await runInProcess(
        ['-o', 'json', 'lookalike', ...SEEDS, '-k', '1', '--budget', String(budget), '--concurrency', '3'],
        { env },
      );
      expect(result.code).toBe(4);
      expect(lookalikes).toBe(sent);
      expect(mostActive).toBe(1);
      const skipped = SEEDS.slice(sent);
      expect(result.stderr).toBe(
        lines(
          `warning: --budget ${budget} reached: ${skipped.length} seed${skipped.length === 1 ? '' : 's'} not requested (${skipped.join(', ')})`,
          '  Raise --budget and run again; every seed is requested again.',
          `1 lookalike from ${sent} seed${sent === 1 ? '' : 's'}`,
        ),
      );
      // What the answers reported charging: within the budget.
      const document = JSON.parse(result.stdout);
      expect(document.credits.charged).toBe(charged);
      expect(document.results).toHaveLength(1);
    },
  );
});
