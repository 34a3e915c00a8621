// A file of exclusions without quotes is read by a splitter of its own (src/exclusions.ts), not by
// csv-parse; stdin always goes through the general reader. For any unquoted file both must give
// the same list, or the same problem in the same words.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExclusionList, loadExclusions } from '../src/exclusions.js';
import { Problem } from '../src/problem.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cd-exclusions-fast-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Outcome =
  | { domains: string[]; entries: number; duplicates: number; titles: string[] }
  | { problem: string };

async function outcome(load: () => Promise<ExclusionList>) {
  try {
    const list = await load();
    const titles = list.doubtfulTitles.map((t) => t.title);
    return { domains: list.domains, entries: list.entries, duplicates: list.duplicates, titles } as Outcome;
  } catch (error) {
    if (!(error instanceof Problem)) throw error;
    return { problem: `${error.code} ${error.title}: ${error.detail}` } as Outcome;
  }
}

// Cells as exported lists have them, and the awkward ones: URLs with a comma in the query, upper
// case, blanks, spaces, a no-break space, non-ASCII, entries that are not domains.
const cell = fc.oneof(
  fc.constantFrom(
    'acme.com',
    'ACME.COM',
    'https://www.acme.com/about',
    'beta.io',
    'http://beta.io/?a=1,b=2',
    'www.gamma.co.uk',
    'Bücher.de',
    ' delta.com ',
    '\u00a0epsilon.com',
    '',
    '   ',
    'not a domain',
    'jo@acme.com',
    'Acme Inc',
    'localhost',
    'domain',
  ),
  fc.domain(),
);
const header = fc.constantFrom(
  undefined,
  'domain',
  'Domain',
  'company,domain',
  'name,website,city',
  ' URL ,name',
  'foo,bar',
  'acme.com',
  'jo@acme.com',
  'acme',
  ' Companies ',
  '',
);
const file = fc
  .record({
    header,
    rows: fc.array(fc.array(cell, { minLength: 1, maxLength: 3 }), { maxLength: 12 }),
    blanksBefore: fc.array(fc.constantFrom('', '  ', '\t', '\u00a0'), { maxLength: 2 }),
    eol: fc.constantFrom('\n', '\r\n', '\r'),
    bom: fc.boolean(),
    finalEol: fc.boolean(),
  })
  .map(({ header, rows, blanksBefore, eol, bom, finalEol }) => {
    const lines: string[] = [...blanksBefore, ...(header === undefined ? [] : [header])];
    for (const row of rows) lines.push(row.join(','));
    return `${bom ? '\ufeff' : ''}${lines.join(eol)}${finalEol ? eol : ''}`;
  });

describe('loadExclusions: the unquoted-file splitter', () => {
  it('gives what the general reader gives for stdin', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(file, async (text) => {
        const path = join(dir, `list-${n++}.csv`);
        await writeFile(path, text);
        const fromFile = await outcome(() =>
          loadExclusions({ files: [path], domains: [] }, { stdin: Readable.from([]) }),
        );
        const fromStdin = await outcome(() =>
          loadExclusions({ files: ['-'], domains: [] }, { stdin: Readable.from([Buffer.from(text)]) }),
        );
        if ('problem' in fromFile) fromFile.problem = fromFile.problem.replaceAll(path, 'stdin');
        expect(fromFile).toEqual(fromStdin);
      }),
      { numRuns: 400 },
    );
  });

  it('names the line of a bad entry after blank lines and a header', async () => {
    const path = join(dir, 'lines.csv');
    await writeFile(path, '\r\n\r\ncompany,domain\r\nAcme,acme.com\r\n\r\nBad,not a domain\r\n');
    await expect(
      loadExclusions({ files: [path], domains: [] }, { stdin: Readable.from([]) }),
    ).rejects.toThrow(`${path} line 6: "not a domain" contains spaces`);
  });
});

describe('loadExclusions: a doubtful first line', () => {
  it('is reported, by file, from both readers, and not for a titled column or a plain list', async () => {
    const doubtful = join(dir, 'doubtful.txt');
    await writeFile(doubtful, 'acme\nbeta.io\n');
    const quoted = join(dir, 'quoted.csv');
    await writeFile(quoted, 'acme\n"beta.io"\n');
    const titled = join(dir, 'titled.csv');
    await writeFile(titled, 'Company website\nbeta.io\n');
    const plain = join(dir, 'plain.txt');
    await writeFile(plain, 'beta.io\ngamma.com\n');
    const list = await loadExclusions(
      { files: [doubtful, quoted, titled, plain], domains: [] },
      { stdin: Readable.from([]) },
    );
    expect(list.doubtfulTitles).toEqual([
      { file: doubtful, title: 'acme' },
      { file: quoted, title: 'acme' },
    ]);
    expect(list.domains).toEqual(['beta.io', 'gamma.com']);
  });
});
