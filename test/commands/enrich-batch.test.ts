// Batch enrichment in-process (main() piped, the real clock) against a loopback sandbox: messy
// input, budget, credits, dry run, and what reaches a pipe. On a terminal: test/e2e/enrich-batch.test.ts.
import { existsSync, linkSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { domainToASCII } from 'node:url';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { normaliseDomain } from '../../src/domain.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { usageLine } from '../helpers/command-cases.js';
import { runPiped } from '../helpers/in-process.js';
import { balanceOf, sandboxAndDirForTests } from '../helpers/sandbox.js';
import { storedDomains } from '../helpers/store.js';

let sandbox: SandboxHandle;
let dir: string;

// A little latency so that concurrency is real: many lookups are in flight at once.
sandboxAndDirForTests('cd-enrich-batch-', { companies: 2000, latencyMs: 5 }, (s, d) => {
  sandbox = s;
  dir = d;
});

function env(key: string = sandbox.keys.full, store = 'store.db') {
  return {
    COMPANY_DATA_API_KEY: key,
    COMPANY_DATA_STORE: join(dir, store),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
  };
}

function enrich(args: string[], options: { key?: string; input?: string; store?: string } = {}) {
  return runPiped(['--base-url', sandbox.url, 'enrich', ...args], {
    env: env(options.key, options.store),
    input: options.input,
  });
}

const domainRequests = () => sandbox.requests().filter((r) => r.path.startsWith('/api/domains/'));
const file = (name: string) => join(dir, name);
const readCsv = (path: string): string[][] =>
  parse(readFileSync(path), { bom: true, relax_column_count: true });

/** Found domains of the dataset, skipping the showcase records at the start. */
function datasetDomains(from: number, count: number): string[] {
  return sandbox.dataset.companies.slice(from, from + count).map((c) => c.domain);
}

describe('a messy input', () => {
  it('comes out with every row once, in order, input cells intact, duplicates charged once', async () => {
    const generated = datasetDomains(20, 12);
    const rows: string[] = [
      'Acme Shoes,https://www.Acme-Shoes.com/about,"says ""hi"", twice"',
      'Globex,GLOBEX.IO,',
      '"Initech, Ltd",initech.co.uk,"two\r\nlines"',
      'Kaffee,münchner-kaffee.de,IDN',
      'Umbrella,HTTP://umbrella-health.de:8080/x?y=1,port and path',
      'Blank,,blank domain',
      'Bad,not a domain,invalid',
      'Broken,acme-shoes.com,too,many,cells',
      'Acme again,acme-shoes.com,duplicate',
      'Missing,no-such-company.example,',
      'Globex again,https://globex.io,duplicate',
      ...generated.map((d, i) => `Gen ${i},${i % 2 ? d.toUpperCase() : `https://www.${d}/`},`),
      ...generated.slice(0, 5).map((d, i) => `Gen dup ${i},${d},duplicate`),
    ];
    const input = `\uFEFFCompany,Website,Notes\r\n${rows.join('\r\n')}\r\n`;
    writeFileSync(file('messy.csv'), input);

    const before = await balanceOf(sandbox.url, sandbox.keys.full);
    const requestsBefore = domainRequests().length;
    const r = await enrich([
      '--input',
      file('messy.csv'),
      '--output',
      file('messy-out.csv'),
      '--concurrency',
      '4',
    ]);
    expect(r.code).toBe(6); // completed, with invalid rows
    expect(r.stdout).toBe('');
    const charged = before - (await balanceOf(sandbox.url, sandbox.keys.full));

    const inputRecords = parse(input, { bom: true, relax_column_count: true }) as string[][];
    const output = readCsv(file('messy-out.csv'));
    const header = output[0];
    expect(header.slice(0, 3)).toEqual(['Company', 'Website', 'Notes']);
    expect(header.slice(3)).toEqual([
      'found',
      'domain',
      'company_name',
      'country',
      'site_category',
      'employee_range',
      'founded_year',
      'credits_charged',
      'bought_at',
      'error_code',
      'error_detail',
    ]);
    const col = (row: string[], name: string) => row[header.indexOf(name)];
    const body = output.slice(1);
    expect(body.length).toBe(inputRecords.length - 1);
    for (const [i, row] of body.entries()) {
      const source = inputRecords[i + 1];
      if (source.length === 3) expect(row.slice(0, 3)).toEqual(source);
      else expect(col(row, 'error_code')).toBe('invalid_input');
    }
    expect(body.map((row) => row[0])).toEqual(inputRecords.slice(1).map((row) => row[0]));

    const byCompany = new Map(body.map((row) => [row[0], row]));
    expect(col(byCompany.get('Acme Shoes')!, 'domain')).toBe('acme-shoes.com');
    expect(col(byCompany.get('Kaffee')!, 'domain')).toBe(domainToASCII('münchner-kaffee.de'));
    expect(col(byCompany.get('Umbrella')!, 'found')).toBe('true');
    expect(col(byCompany.get('Blank')!, 'error_code')).toBe('invalid_domain');
    expect(col(byCompany.get('Bad')!, 'error_code')).toBe('invalid_domain');
    expect(col(byCompany.get('Broken')!, 'error_detail')).toMatch(/^line 10\b/);
    expect(col(byCompany.get('Missing')!, 'found')).toBe('false');
    expect(col(byCompany.get('Acme again')!, 'credits_charged')).toBe('0');

    // Each distinct valid domain requested once; each found one charged once.
    const unique = new Set<string>();
    for (const source of inputRecords.slice(1)) {
      const n = source.length === 3 ? normaliseDomain(source[1]) : undefined;
      if (n?.ok) unique.add(n.domain);
    }
    const requested = domainRequests()
      .slice(requestsBefore)
      .map((entry) => decodeURIComponent(entry.path.slice('/api/domains/'.length)));
    expect(requested.sort()).toEqual([...unique].sort());
    const found = [...unique].filter((d) => sandbox.dataset.byDomain.has(d));
    expect(charged).toBe(found.length);
    const columnSum = body.reduce((sum, row) => sum + Number(col(row, 'credits_charged')), 0);
    expect(columnSum).toBe(charged);
    expect(r.stderr).toContain(`${unique.size} unique domains`);
    expect(r.stderr).toContain(`${charged} credits charged`);
    // Every answer is in the store, and nothing is left beside the output.
    const stored = storedDomains(file('store.db'));
    expect([...unique].filter((d) => !stored.has(d))).toEqual([]);
    expect(existsSync(file('messy-out.csv.journal'))).toBe(false);
  });
});

describe('credits', () => {
  it('--budget holds with --concurrency 16 and the rows left over say budget_exhausted', async () => {
    const domains = datasetDomains(100, 200);
    writeFileSync(file('budget.csv'), `domain\n${domains.join('\n')}\n`);
    const before = await balanceOf(sandbox.url, sandbox.keys.full);
    const r = await enrich(
      [
        '--input',
        file('budget.csv'),
        '--output',
        file('budget-out.csv'),
        '--products',
        'profile,tech',
        '--budget',
        '41',
        '--concurrency',
        '16',
      ],
      { store: 'budget.db' },
    );
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('budget_exhausted');
    const charged = before - (await balanceOf(sandbox.url, sandbox.keys.full));
    expect(charged).toBeLessThanOrEqual(41);
    expect(charged).toBeGreaterThan(0);
    const output = readCsv(file('budget-out.csv'));
    const header = output[0];
    const code = header.indexOf('error_code');
    expect(output.length).toBe(201);
    expect(output.slice(1).map((row) => row[0])).toEqual(domains);
    const exhausted = output.slice(1).filter((row) => row[code] === 'budget_exhausted').length;
    expect(exhausted).toBeGreaterThan(0);
    const sum = output.slice(1).reduce((s, row) => s + Number(row[header.indexOf('credits_charged')]), 0);
    expect(sum).toBe(charged);
    const stored = storedDomains(file('budget.db'));
    expect(domains.filter((d) => stored.has(d))).toHaveLength(200 - exhausted);

    // Raising the budget resumes: stored domains are not asked again.
    const requestsBefore = domainRequests().length;
    const again = await enrich(
      [
        '--input',
        file('budget.csv'),
        '--output',
        file('budget-out.csv'),
        '--products',
        'profile,tech',
        '--budget',
        '1000',
      ],
      { store: 'budget.db' },
    );
    expect(again.code).toBe(0);
    expect(domainRequests().length - requestsBefore).toBe(exhausted);
  });

  it('--max-credits below the products cost stops before any lookup', async () => {
    writeFileSync(file('max.csv'), 'website\nacme-shoes.com\nglobex.io\n');
    const before = domainRequests().length;
    const r = await enrich(['--input', file('max.csv'), '--products', 'profile,tech', '--max-credits', '1']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('max_credits_exceeded');
    expect(r.stdout).toBe('');
    expect(domainRequests().length).toBe(before);
  });

  it('an empty balance stops with exit 4, every row written, and the same command resumes', async () => {
    const domains = datasetDomains(400, 30);
    writeFileSync(file('empty.csv'), `domain\n${domains.join('\n')}\nno-such-company.example\n`);
    const r = await enrich(['--input', file('empty.csv'), '--output', file('empty-out.csv')], {
      key: sandbox.keys.empty,
    });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('insufficient_credits');
    const output = readCsv(file('empty-out.csv'));
    const code = output[0].indexOf('error_code');
    expect(output.length).toBe(32);
    expect(new Set(output.slice(1).map((row) => row[code]))).toEqual(new Set(['insufficient_credits']));
    // Failures are never stored.
    const stored = storedDomains(file('store.db'));
    expect(domains.filter((d) => stored.has(d))).toEqual([]);

    const resumed = await enrich(['--input', file('empty.csv'), '--output', file('empty-out.csv')]);
    expect(resumed.code).toBe(0);
    expect(
      readCsv(file('empty-out.csv'))
        .slice(1)
        .every((row) => row[code] === ''),
    ).toBe(true);
  });

  it('--dry-run counts rows, domains and worst-case credits against the balance, sending no lookup', async () => {
    writeFileSync(
      file('dry.csv'),
      'domain\nacme-shoes.com\nACME-SHOES.COM\nglobex.io\nnot a domain\nno-such-company.example\n',
    );
    const before = domainRequests().length;
    const r = await runPiped(
      [
        '--base-url',
        sandbox.url,
        '-o',
        'json',
        'enrich',
        '--input',
        file('dry.csv'),
        '--dry-run',
        '--products',
        'profile,tech',
      ],
      {
        env: env(),
      },
    );
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({
      rows: 5,
      unique_domains: 3,
      invalid_rows: 1,
      to_request: 3,
      worst_case_per_lookup: 2,
      worst_case_credits: 6,
      balance: sandbox.balances().full,
      balance_covers_worst_case: true,
    });
    expect(domainRequests().length).toBe(before);
  });
});

describe('aborts', () => {
  it('a refused key aborts at once with exit 3 and leaves no output file', async () => {
    writeFileSync(file('key.csv'), `domain\n${datasetDomains(900, 40).join('\n')}\n`);
    const before = domainRequests().length;
    const r = await enrich(
      ['--input', file('key.csv'), '--output', file('key-out.csv'), '--concurrency', '1'],
      {
        key: 'cd_sandbox_not_a_key',
      },
    );
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('invalid_api_key');
    expect(r.stderr).not.toContain('cd_sandbox_not_a_key');
    expect(existsSync(file('key-out.csv'))).toBe(false);
    expect(domainRequests().length - before).toBe(1);
  });

  it('refuses a table as batch output', async () => {
    const r = await runPiped(['--base-url', sandbox.url, '-o', 'table', 'enrich', '--input', '-'], {
      env: env(),
      input: 'domain\nacme-shoes.com\n',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('csv, json or ndjson');
  });
});

describe('pipes', () => {
  it('piped stdin and stdout: CSV on stdout, no escape sequence anywhere', async () => {
    const r = await enrich(['--input', '-'], { input: 'domain\nacme-shoes.com\nescape-test.com\n' });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^domain,found,cd_domain,company_name/);
    expect(r.stdout).not.toContain('\x1b');
    expect(r.stderr).not.toContain('\x1b');
    expect(r.stderr).toMatch(/Enriched: 2 rows, 2 unique domains \(2 found, 0 not found\)/);
  });

  it('--quiet leaves stderr empty on success', async () => {
    const r = await runPiped(
      ['--base-url', sandbox.url, '-q', 'enrich', '--input', '-', '--output', file('quiet.csv')],
      { env: env(), input: 'domain\nglobex.io\n' },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(readCsv(file('quiet.csv')).length).toBe(2);
  });
});

// Moved here from test/e2e/enrich-lock.test.ts, where each ran the binary.
describe('the input as the output', () => {
  it.each([
    ['the same name', 'same.csv', (name: string) => file(name)],
    ['another spelling', 'dot.csv', (name: string) => `${dir}/./${name}`],
    [
      'a symbolic link',
      'target.csv',
      (name: string) => {
        symlinkSync(name, file('sym.csv'));
        return file('sym.csv');
      },
    ],
    [
      'a hard link',
      'linked.csv',
      (name: string) => {
        linkSync(file(name), file('hard.csv'));
        return file('hard.csv');
      },
    ],
  ])(
    'is refused through %s: exit 2, one problem, input untouched, nothing asked',
    async (_, name, outputFor) => {
      const text = 'domain\nacme-shoes.com\nglobex.io\n';
      writeFileSync(file(name), text);
      const output = outputFor(name);
      const from = sandbox.requests().length;
      const r = await enrich(['--input', file(name), '--output', output]);
      expect(r).toEqual({
        code: 2,
        stdout: '',
        stderr: usageLine(
          `--input and --output are the same file (${output}): the finished output would replace the input`,
          'Write the output to another file (for example --output enriched.csv).',
        ),
      });
      expect(readFileSync(file(name), 'utf8')).toBe(text);
      expect(sandbox.requests().slice(from)).toEqual([]);
    },
  );
});
