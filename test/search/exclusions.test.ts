import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadExclusions, MAX_EXCLUSIONS } from '../../src/exclusions.js';
import { Problem } from '../../src/problem.js';

let dir: string;
const noStdin = { stdin: Readable.from([]) };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cd-exclusions-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

async function problemOf(promise: Promise<unknown>): Promise<Problem> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Problem) return error;
    throw error;
  }
  throw new Error('expected a Problem');
}

describe('loadExclusions', () => {
  it('reads the domain column of a CSV, normalising URLs and dropping duplicates', async () => {
    const csv = await file(
      'companies.csv',
      'name,website\nAcme,https://www.Acme-Shoes.com/about\nAcme again,acme-shoes.com\nBeta,http://beta.io\n\n',
    );
    const list = await loadExclusions({ files: [csv], domains: ['BETA.io', 'gamma.dev'] }, noStdin);
    expect(list.domains).toEqual(['acme-shoes.com', 'beta.io', 'gamma.dev']);
    expect(list.entries).toBe(5);
    expect(list.duplicates).toBe(2);
  });

  it('touches stdin only for `-`: making process.stdin builds a stream', async () => {
    const csv = await file('two.csv', 'domain\none.com\ntwo.com\n');
    const untouchable = {
      get stdin(): Readable {
        throw new Error('stdin was touched');
      },
    };
    const list = await loadExclusions({ files: [csv, csv], domains: [] }, untouchable);
    expect(list.domains).toEqual(['one.com', 'two.com']);
  });

  it('reads a plain list from stdin', async () => {
    const stdin = Readable.from(['one.com\nwww.two.com\n', 'one.com\n']);
    const list = await loadExclusions({ files: ['-'], domains: [] }, { stdin });
    expect(list.domains).toEqual(['one.com', 'two.com']);
  });

  it('refuses bad entries, naming where they are, rather than skipping them', async () => {
    const list = await file('bad.txt', 'good.com\nnot a domain\njo@acme.com\n');
    const p = await problemOf(loadExclusions({ files: [list], domains: [] }, noStdin));
    expect(p.code).toBe('usage_error');
    expect(p.exitCode).toBe(2);
    expect(p.detail).toMatch(/^2 exclusion entries are not a domain: /);
    expect(p.detail).toContain('bad.txt line 2: "not a domain"');
    expect(p.detail).toContain('bad.txt line 3: "jo@acme.com" looks like an e-mail address');
  });

  it('names only the first few bad entries', async () => {
    const lines = ['domain', ...Array.from({ length: 9 }, (_, i) => `bad entry ${i}`)].join('\n');
    const p = await problemOf(
      loadExclusions({ files: [await file('many-bad.txt', lines)], domains: [] }, noStdin),
    );
    expect(p.detail).toContain('; and 4 more');
  });

  it(`refuses more than ${MAX_EXCLUSIONS} unique domains and accepts exactly that many`, async () => {
    const domains = Array.from({ length: MAX_EXCLUSIONS }, (_, i) => `company-${i}.com`);
    const exact = await file('exact.txt', `${domains.join('\n')}\n`);
    expect((await loadExclusions({ files: [exact], domains: [] }, noStdin)).domains).toHaveLength(
      MAX_EXCLUSIONS,
    );
    const p = await problemOf(loadExclusions({ files: [exact], domains: ['one-more.com'] }, noStdin));
    expect(p.exitCode).toBe(2);
    expect(p.detail).toBe('20,001 unique exclusions; the service accepts at most 20,000 per search');
  });

  it('counts unique domains, so duplicates do not push a list over the limit', async () => {
    const domains = Array.from({ length: MAX_EXCLUSIONS }, (_, i) => `company-${i}.com`);
    const twice = await file('twice.txt', `${[...domains, ...domains].join('\n')}\n`);
    const list = await loadExclusions({ files: [twice], domains: [] }, noStdin);
    expect(list.domains).toHaveLength(MAX_EXCLUSIONS);
    expect(list.duplicates).toBe(MAX_EXCLUSIONS);
  });

  it('explains a missing file, a directory, and stdin given twice', async () => {
    const missing = await problemOf(loadExclusions({ files: [join(dir, 'nope.csv')], domains: [] }, noStdin));
    expect(missing.code).toBe('invalid_input');
    expect(missing.exitCode).toBe(2);
    expect(missing.detail).toContain('nope.csv: no such file');
    const directory = await problemOf(loadExclusions({ files: [dir], domains: [] }, noStdin));
    expect(directory.detail).toContain('is a directory');
    const twice = await problemOf(loadExclusions({ files: ['-', '-'], domains: [] }, noStdin));
    expect(twice.code).toBe('usage_error');
  });

  it('says which file lacks a domain column', async () => {
    const csv = await file('no-domain.csv', 'name,city\nAcme,Paris\n');
    const p = await problemOf(loadExclusions({ files: [csv], domains: [] }, noStdin));
    expect(p.exitCode).toBe(2);
    expect(p.detail).toContain('no-domain.csv');
    expect(p.detail).toContain('no domain column');
  });

  it('names the line of a bad entry after blank lines and a header, whatever the line endings', async () => {
    for (const eol of ['\r\n', '\n', '\r']) {
      const text = ['', '', 'company,domain', 'Acme,acme.com', '', 'Bad,not a domain', ''].join(eol);
      const path = await file('lines.csv', text);
      const fromFile = await problemOf(loadExclusions({ files: [path], domains: [] }, noStdin));
      expect(fromFile.detail).toContain(`${path} line 6: "not a domain" contains spaces`);
      const stdin = Readable.from([Buffer.from(text)]);
      const fromStdin = await problemOf(loadExclusions({ files: ['-'], domains: [] }, { stdin }));
      expect(fromStdin.detail).toContain('stdin line 6: "not a domain" contains spaces');
    }
  });

  it('reads a UTF-16 file by its byte order mark', async () => {
    const text = '\ufeffname,domain\r\nAcme,acme.com\r\n\r\nMüller,"Bücher.de"\r\n';
    const le = Buffer.from(text, 'utf16le');
    const be = Buffer.from(le).swap16();
    for (const bytes of [le, be]) {
      const path = join(dir, 'utf16.csv');
      await writeFile(path, bytes);
      const list = await loadExclusions({ files: [path], domains: [] }, noStdin);
      expect(list.domains).toEqual(['acme.com', 'xn--bcher-kva.de']);
    }
  });

  it('reads a long quoted CSV to its last row', async () => {
    const domains = Array.from({ length: 19_000 }, (_, i) => `"company-${i}.com",x`);
    const csv = await file('big.csv', `domain,note\n${domains.join('\n')}\n`);
    const list = await loadExclusions({ files: [csv], domains: [] }, noStdin);
    expect(list.domains).toHaveLength(19_000);
    expect(list.domains[18_999]).toBe('company-18999.com');
  });
});

describe('loadExclusions: a doubtful first line', () => {
  it('is reported, by file, quoted or not, and not for a titled column or a plain list', async () => {
    const doubtful = await file('doubtful.txt', 'acme\nbeta.io\n');
    const quoted = await file('quoted.csv', 'acme\n"beta.io"\n');
    const titled = await file('titled.csv', 'Company website\nbeta.io\n');
    const plain = await file('plain.txt', 'beta.io\ngamma.com\n');
    const list = await loadExclusions({ files: [doubtful, quoted, titled, plain], domains: [] }, noStdin);
    expect(list.doubtfulTitles).toEqual([
      { file: doubtful, title: 'acme' },
      { file: quoted, title: 'acme' },
    ]);
    expect(list.domains).toEqual(['beta.io', 'gamma.com']);
  });
});

describe('loadExclusions: the output of a search', () => {
  it('reads the rows of `search -o json`, normalising their domains', async () => {
    const json = await file(
      'rows.json',
      `${JSON.stringify({ query: 'x', total: 3, rows: [{ domain: 'acme.com', country: 'US' }, { domain: 'WWW.Beta.io' }], complete: false }, null, 2)}\n`,
    );
    const list = await loadExclusions({ files: [json], domains: [] }, noStdin);
    expect(list.domains).toEqual(['acme.com', 'beta.io']);
    expect(list.entries).toBe(2);
  });

  it('reads a JSON array of rows or of domains', async () => {
    const rows = await file('array.json', '[{"domain":"acme.com"},"beta.io"]');
    expect((await loadExclusions({ files: [rows], domains: [] }, noStdin)).domains).toEqual([
      'acme.com',
      'beta.io',
    ]);
  });

  it('reads `search -o ndjson`, one row a line, after a byte order mark and blank lines', async () => {
    const ndjson = await file(
      'rows.ndjson',
      '\ufeff{"domain":"acme.com"}\r\n\n{"domain":"beta.io","country":"NL"}\n',
    );
    const list = await loadExclusions({ files: [ndjson], domains: [] }, noStdin);
    expect(list.domains).toEqual(['acme.com', 'beta.io']);
  });

  it('refuses a row without a domain and a line that is not JSON, naming where they are', async () => {
    const ndjson = await file('bad.ndjson', '{"domain":"acme.com"}\n{"name":"Beta"}\n{"domain":\n');
    const p = await problemOf(loadExclusions({ files: [ndjson], domains: [] }, noStdin));
    expect(p.exitCode).toBe(2);
    expect(p.detail).toBe(
      `2 exclusion entries are not a domain: ${ndjson} line 2: "{"name":"Beta"}" has no "domain"; ${ndjson} line 3: "{"domain":" is not a JSON line`,
    );
    const json = await file('bad.json', '{"rows":[{"domain":"acme.com"},{"domain":"not a domain"}]}');
    const q = await problemOf(loadExclusions({ files: [json], domains: [] }, noStdin));
    expect(q.detail).toBe(`1 exclusion entry is not a domain: ${json} row 2: "not a domain" contains spaces`);
  });
});
