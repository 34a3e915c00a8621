// --merge (fill-empty, overwrite, --map, and what --dry-run says it would do), --report (a line
// per row, every outcome) and --summary-json, and --head, in-process against a loopback sandbox
// behind a front server that fails one domain once (a retry) and redirects another (a failure).
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runPiped } from '../helpers/in-process.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { forwardTo, listenLocal } from '../helpers/server.js';

let sandbox: SandboxHandle;
let dir: string;
sandboxAndDirForTests('cd-merge-report-', { companies: 200 }, (s, d) => {
  sandbox = s;
  dir = d;
});

let front: { url: string; close: () => Promise<void> };
let initechAsked = 0;
beforeAll(async () => {
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    if (url.startsWith('/api/domains/umbrella-health.de')) {
      res.writeHead(301, { location: 'https://elsewhere.example/api/domains/umbrella-health.de' });
      res.end();
      return;
    }
    if (url.startsWith('/api/domains/initech.co.uk') && initechAsked++ === 0) {
      res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' });
      res.end(
        JSON.stringify({
          type: 'about:blank',
          title: 'Unavailable',
          status: 503,
          code: 'service_unavailable',
        }),
      );
      return;
    }
    forwardTo(sandbox.url, req, res);
  });
  front = await listenLocal(server);
});
afterAll(async () => {
  await front?.close();
});

const file = (name: string) => join(dir, name);

function enrich(args: string[], options: { store?: string; global?: string[] } = {}) {
  return runPiped(['--base-url', front.url, ...(options.global ?? ['-q']), 'enrich', ...args], {
    env: {
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      COMPANY_DATA_STORE: file(options.store ?? 'store.db'),
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
    },
  });
}

const CRM = [
  'company,domain,Country,Employee Range,Land',
  'Acme,acme-shoes.com,,10-20,',
  'Globex,globex.io,USA,,',
  'Initech,initech.co.uk,,,',
  '',
].join('\n');

describe('--merge', () => {
  const fields = ['--include', 'country,employee_range'];

  it('fill-empty fills only empty cells of the matching columns, overwrite replaces them, a missing value erases nothing', async () => {
    writeFileSync(file('crm.csv'), CRM);
    const fill = await enrich(
      ['--input', file('crm.csv'), '--output', file('fill.csv'), ...fields, '--merge', 'fill-empty'],
      {
        store: 'merge.db',
      },
    );
    expect(fill.code, fill.stderr).toBe(0);
    expect(readFileSync(file('fill.csv'), 'utf8')).toBe(
      [
        'company,domain,Country,Employee Range,Land,found,credits_charged,bought_at,error_code,error_detail',
        'Acme,acme-shoes.com,US,10-20,,true,1,,,',
        'Globex,globex.io,USA,1001-5000,,true,1,,,',
        'Initech,initech.co.uk,GB,,,true,1,,,',
        '',
      ].join('\n'),
    );
    const over = await enrich(
      ['--input', file('crm.csv'), '--output', file('over.csv'), ...fields, '--merge', 'overwrite'],
      {
        store: 'merge.db',
      },
    );
    expect(over.code, over.stderr).toBe(0);
    const rows = parse(readFileSync(file('over.csv'))) as string[][];
    expect(rows.map((row) => row.slice(0, 5))).toEqual([
      ['company', 'domain', 'Country', 'Employee Range', 'Land'],
      ['Acme', 'acme-shoes.com', 'US', '51-200', ''],
      ['Globex', 'globex.io', 'US', '1001-5000', ''],
      ['Initech', 'initech.co.uk', 'GB', '', ''],
    ]);
  });

  it('--map sends a field to a column of another name', async () => {
    writeFileSync(file('crm.csv'), CRM);
    const r = await enrich(
      [
        '--input',
        file('crm.csv'),
        '--output',
        file('mapped.csv'),
        ...fields,
        '--merge',
        'fill-empty',
        '--map',
        'country=Land',
      ],
      { store: 'merge.db' },
    );
    expect(r.code, r.stderr).toBe(0);
    const rows = parse(readFileSync(file('mapped.csv'))) as string[][];
    expect(rows.map((row) => row.slice(2, 5))).toEqual([
      ['Country', 'Employee Range', 'Land'],
      ['', '10-20', 'US'],
      ['USA', '1001-5000', 'US'],
      ['', '', 'GB'],
    ]);
  });

  it('--dry-run counts, per column, the cells the stored answers fill or change and those purchases may', async () => {
    writeFileSync(file('crm-more.csv'), `${CRM}Lonely,lonely-seed.com,SE,,\n`);
    const run = async (mode: string) => {
      const r = await enrich(['--input', file('crm-more.csv'), ...fields, '--merge', mode, '--dry-run'], {
        store: 'merge.db',
      });
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout).merge_columns;
    };
    // acme, globex and initech are stored (the runs above); lonely-seed.com is not.
    expect(await run('fill-empty')).toEqual({
      Country: { field: 'country', fill: 2, change: 0, may_fill: 0, may_change: 0 },
      'Employee Range': { field: 'employee_range', fill: 1, change: 0, may_fill: 1, may_change: 0 },
    });
    expect(await run('overwrite')).toEqual({
      Country: { field: 'country', fill: 2, change: 1, may_fill: 0, may_change: 1 },
      'Employee Range': { field: 'employee_range', fill: 1, change: 1, may_fill: 1, may_change: 0 },
    });
  });

  it('refuses --map without --merge, a column the input lacks, and a field the service lacks', async () => {
    writeFileSync(file('crm.csv'), CRM);
    const cases: Array<[string[], string, string]> = [
      [
        ['--map', 'country=Land'],
        '--map names the columns that --merge fills, and --merge is append',
        'Add --merge fill-empty (or --merge overwrite).',
      ],
      [
        ['--merge', 'fill-empty', '--map', 'country=Nation'],
        '--map country=Nation: the input has no column \\"Nation\\"; its columns are \\"company\\", \\"domain\\", \\"Country\\", \\"Employee Range\\", \\"Land\\"',
        'Name one of the columns after the =.',
      ],
      [
        ['--merge', 'fill-empty', '--map', 'nation=Land'],
        '--map nation=Land: nation is not a field of the service',
        'See `company-data fields`.',
      ],
    ];
    for (const [flags, detail, hint] of cases) {
      const r = await enrich(['--input', file('crm.csv'), '--output', file('never.csv'), ...flags]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `{"code":"usage_error","status":0,"title":"Usage error","detail":"${detail}","retryable":false,"hint":"${hint}"}\n`,
      );
    }
  });
});

describe('--report and --summary-json', () => {
  it('say what happened to every row: bought, stored, duplicate, not found, invalid, failed', async () => {
    // lonely-seed.com is in the store before the batch: a single lookup bought it.
    const single = await enrich(['lonely-seed.com'], { store: 'report.db' });
    expect(single.code, single.stderr).toBe(0);
    writeFileSync(
      file('report.csv'),
      [
        'company,domain',
        'Acme,acme-shoes.com',
        'Acme again,https://www.acme-shoes.com/',
        'Nobody,no-such-company.example',
        'Blank,',
        'Lonely,lonely-seed.com',
        'Initech,initech.co.uk',
        'Umbrella,umbrella-health.de',
        '',
      ].join('\n'),
    );
    initechAsked = 0;
    const r = await enrich(
      [
        '--input',
        file('report.csv'),
        '--output',
        file('report-out.csv'),
        '--report',
        file('rows.jsonl'),
        '--summary-json',
        file('summary.json'),
        '--concurrency',
        '1',
      ],
      { store: 'report.db', global: ['-q', '--retries', '2'] },
    );
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toBe('');
    const lines = readFileSync(file('rows.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    // Times vary: each bought or failed row has one, in whole ms; the others none.
    for (const line of lines)
      expect(line.ms === null || Number.isInteger(line.ms), JSON.stringify(line)).toBe(true);
    const lonelyAt = lines[4].bought_at;
    expect(lonelyAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(lines.map(({ ms, ...rest }) => ({ ...rest, timed: ms !== null }))).toEqual([
      {
        row: 1,
        line: 2,
        domain: 'acme-shoes.com',
        outcome: 'bought',
        error_code: null,
        credits: 1,
        attempts: 1,
        bought_at: null,
        timed: true,
      },
      {
        row: 2,
        line: 3,
        domain: 'acme-shoes.com',
        outcome: 'duplicate',
        error_code: null,
        credits: 0,
        attempts: 0,
        bought_at: null,
        timed: false,
      },
      {
        row: 3,
        line: 4,
        domain: 'no-such-company.example',
        outcome: 'not_found',
        error_code: null,
        credits: 0,
        attempts: 1,
        bought_at: null,
        timed: true,
      },
      {
        row: 4,
        line: 5,
        domain: '',
        outcome: 'invalid',
        error_code: 'invalid_domain',
        credits: 0,
        attempts: 0,
        bought_at: null,
        timed: false,
      },
      {
        row: 5,
        line: 6,
        domain: 'lonely-seed.com',
        outcome: 'stored',
        error_code: null,
        credits: 0,
        attempts: 0,
        bought_at: lonelyAt,
        timed: false,
      },
      {
        row: 6,
        line: 7,
        domain: 'initech.co.uk',
        outcome: 'bought',
        error_code: null,
        credits: 1,
        attempts: 2,
        bought_at: null,
        timed: true,
      },
      {
        row: 7,
        line: 8,
        domain: 'umbrella-health.de',
        outcome: 'failed',
        error_code: 'redirect_refused',
        credits: 0,
        attempts: 1,
        bought_at: null,
        timed: true,
      },
    ]);
    const summary = JSON.parse(readFileSync(file('summary.json'), 'utf8'));
    expect(typeof summary.elapsed_ms).toBe('number');
    expect({ ...summary, elapsed_ms: 0, balance: 0 }).toEqual({
      status: 'done',
      exit_code: 6,
      error_code: null,
      input: file('report.csv'),
      output: file('report-out.csv'),
      report: file('rows.jsonl'),
      rows: 7,
      unique_domains: 5,
      // Domains, as the human summary counts them (issue 46): 3 found + 1 not found + 1 failed.
      found: 3,
      not_found: 1,
      errors: 2,
      outcomes: { bought: 2, stored: 1, duplicate: 1, not_found: 1, invalid: 1, capped: 0, failed: 1 },
      credits_charged: 2,
      possibly_charged: 0,
      reused_from_store: 1,
      balance: 0,
      merged: null,
      elapsed_ms: 0,
    });
  });

  it('report rows refused by a cap, as CSV by the extension, and the summary as one line on stderr with `-`', async () => {
    writeFileSync(file('capped.csv'), 'domain\nacme-shoes.com\nglobex.io\ninitech.co.uk\n');
    const r = await enrich(
      [
        '--input',
        file('capped.csv'),
        '--output',
        file('capped-out.csv'),
        '--report',
        file('capped-rows.csv'),
        '--summary-json',
        '-',
        '--budget',
        '1',
        '--concurrency',
        '1',
      ],
      { store: 'capped.db' },
    );
    expect(r.code).toBe(4);
    const [summaryLine, problemLine, ...rest] = r.stderr.trimEnd().split('\n');
    expect(rest).toEqual([]);
    expect(JSON.parse(problemLine).code).toBe('budget_exhausted');
    const summary = JSON.parse(summaryLine);
    expect([summary.status, summary.exit_code, summary.error_code, summary.outcomes]).toEqual([
      'stopped',
      4,
      'budget_exhausted',
      { bought: 1, stored: 0, duplicate: 0, not_found: 0, invalid: 0, capped: 2, failed: 0 },
    ]);
    const rows = parse(readFileSync(file('capped-rows.csv'))) as string[][];
    expect(rows.map((row) => [row[0], row[2], row[3], row[4], row[5]])).toEqual([
      ['row', 'domain', 'outcome', 'error_code', 'credits'],
      ['1', 'acme-shoes.com', 'bought', '', '1'],
      ['2', 'globex.io', 'capped', 'budget_exhausted', '0'],
      ['3', 'initech.co.uk', 'capped', 'budget_exhausted', '0'],
    ]);
  });
});

describe('--report names a file of its own', () => {
  it('is refused when it is the output or the input, before anything is bought', async () => {
    writeFileSync(file('same.csv'), 'domain\nacme-shoes.com\n');
    for (const [report, flag] of [
      [file('same-out.csv'), '--output'],
      [file('same.csv'), '--input'],
    ]) {
      const r = await enrich([
        '--input',
        file('same.csv'),
        '--output',
        file('same-out.csv'),
        '--report',
        report,
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `{"code":"usage_error","status":0,"title":"Usage error","detail":"--report and ${flag} are the same file (${report})","retryable":false,"hint":"Name another file for --report (for example rows.jsonl)."}\n`,
      );
    }
  });
});

describe('--head', () => {
  it('runs on the first rows only, saying first what they may cost', async () => {
    writeFileSync(file('head.csv'), 'domain\nacme-shoes.com\nacme-shoes.com\nglobex.io\ninitech.co.uk\n');
    const r = await enrich(['--input', file('head.csv'), '--output', file('head-out.csv'), '--head', '3'], {
      store: 'head.db',
      global: [],
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n')[0]).toBe(
      '--head 3: 3 rows, 2 distinct domains, 0 answered by the store; at most 2 credits for the other 2 (1 each at most).',
    );
    const rows = parse(readFileSync(file('head-out.csv'))) as string[][];
    expect(rows.map((row) => row[0])).toEqual(['domain', 'acme-shoes.com', 'acme-shoes.com', 'globex.io']);
  });
});
