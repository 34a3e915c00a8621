import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type InputOptions, type InputRow, openInput } from '../../src/csv/input.js';
import { normaliseDomain } from '../../src/domain.js';
import { Problem } from '../../src/problem.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'csv');

async function readAll(source: Readable, options: InputOptions = {}) {
  const reader = await openInput(source, options);
  const rows: InputRow[] = [];
  for await (const row of reader.rows) rows.push(row);
  return { header: reader.header, domainColumn: reader.domainColumn, rows };
}

function fixture(name: string): Readable {
  return createReadStream(path.join(FIXTURES, name));
}

function text(content: string): Readable {
  return Readable.from([Buffer.from(content)]);
}

type Case = {
  file: string;
  options?: InputOptions;
  header: string[] | null;
  domainColumn: number;
  rows: Array<{ line: number; cells: string[]; error?: string }>;
};

const CASES: Case[] = [
  {
    file: 'excel-utf8-bom-crlf.csv',
    header: ['Company', 'Website', 'Notes'],
    domainColumn: 1,
    rows: [
      { line: 2, cells: ['Acme Shoes', 'https://www.acme-shoes.com/', 'Key account'] },
      { line: 3, cells: ['Globex', 'globex.io', 'Met at the fair\r\nfollow up in May'] },
      { line: 5, cells: ['Müller & Söhne', 'umbrella-health.de', ''] },
      { line: 6, cells: ['Initech', 'initech.co.uk', 'Says "hi"'] },
    ],
  },
  {
    file: 'semicolon.csv',
    options: { delimiter: ';' },
    header: ['Firma', 'domain', 'Umsatz', 'Ort'],
    domainColumn: 1,
    rows: [
      { line: 2, cells: ['Acme Shoes', 'acme-shoes.com', '1.234,56', 'Berlin'] },
      { line: 3, cells: ['Globex', 'globex.io', '12,5', 'Köln; Innenstadt'] },
      { line: 4, cells: ['Initech', 'initech.co.uk', '0,99', 'London'] },
    ],
  },
  {
    file: 'latin1.csv',
    options: { encoding: 'latin1' },
    header: ['société', 'domain', 'ville'],
    domainColumn: 1,
    rows: [
      { line: 2, cells: ['Crème Brûlée SARL', 'creme-brulee.fr', 'Orléans'] },
      { line: 3, cells: ['Größe GmbH', 'groesse.de', 'München'] },
      { line: 4, cells: ['Ñandú S.A.', 'nandu.es', 'Logroño'] },
    ],
  },
  {
    file: 'quoted-commas-newlines.csv',
    header: ['name', 'domain', 'address'],
    domainColumn: 1,
    rows: [
      { line: 2, cells: ['Acme, Inc.', 'acme-shoes.com', '1 Road, Springfield'] },
      { line: 3, cells: ['Globex\nCorporation', 'globex.io', 'Line 1\nLine 2\nLine 3'] },
      { line: 7, cells: ['Initech', 'initech.co.uk', 'quoted "inner", with comma'] },
    ],
  },
  {
    file: 'spectrum-comma_in_quotes.csv',
    header: ['first', 'last', 'address', 'city', 'zip', 'domain'],
    domainColumn: 5,
    rows: [{ line: 2, cells: ['John', 'Doe', '120 any st.', 'Anytown, WW', '08123', 'acme-shoes.com'] }],
  },
  {
    file: 'spectrum-escaped_quotes.csv',
    header: ['a', 'b', 'domain'],
    domainColumn: 2,
    rows: [
      { line: 2, cells: ['1', 'ha "ha" ha', 'acme-shoes.com'] },
      { line: 3, cells: ['3', '4', 'globex.io'] },
    ],
  },
  ...['spectrum-empty.csv', 'spectrum-empty_crlf.csv'].map((file) => ({
    file,
    header: ['a', 'b', 'c', 'domain'],
    domainColumn: 3,
    rows: [
      { line: 2, cells: ['1', '', '', 'acme-shoes.com'] },
      { line: 3, cells: ['2', '3', '4', ''] },
    ],
  })),
  ...[
    ['spectrum-newlines.csv', '\n'],
    ['spectrum-newlines_crlf.csv', '\r\n'],
  ].map(([file, eol]) => ({
    file,
    header: ['a', 'b', 'c', 'domain'],
    domainColumn: 3,
    rows: [
      { line: 2, cells: ['1', '2', '3', 'acme-shoes.com'] },
      { line: 3, cells: [`Once upon ${eol}a time`, '5', '6', 'globex.io'] },
      { line: 5, cells: ['7', '8', '9', 'initech.co.uk'] },
    ],
  })),
  {
    file: 'spectrum-quotes_and_newlines.csv',
    header: ['a', 'b', 'domain'],
    domainColumn: 2,
    rows: [
      { line: 2, cells: ['1', 'ha \n"ha" \nha', 'acme-shoes.com'] },
      { line: 5, cells: ['3', '4', 'globex.io'] },
    ],
  },
  ...['spectrum-simple.csv', 'spectrum-simple_crlf.csv'].map((file) => ({
    file,
    header: ['a', 'b', 'c', 'domain'],
    domainColumn: 3,
    rows: [{ line: 2, cells: ['1', '2', '3', 'acme-shoes.com'] }],
  })),
  {
    file: 'spectrum-utf8.csv',
    header: ['a', 'b', 'c', 'domain'],
    domainColumn: 3,
    rows: [
      { line: 2, cells: ['1', '2', '3', 'acme-shoes.com'] },
      { line: 3, cells: ['4', '5', 'ʤ', 'bücher.de'] },
    ],
  },
  {
    file: 'spectrum-json.csv',
    header: ['key', 'val', 'domain'],
    domainColumn: 2,
    rows: [{ line: 2, cells: ['1', '{"type": "Point", "coordinates": [102.0, 0.5]}', 'acme-shoes.com'] }],
  },
  {
    file: 'spectrum-location_coordinates.csv',
    header: ['Contact Employee No', 'Contact Member No', 'Contact Location', 'domain'],
    domainColumn: 3,
    rows: [
      { line: 2, cells: ['1', '2', '(-121.6, 37.1)', 'acme-shoes.com'] },
      { line: 3, cells: ['3', '4', '(-122.2, 37.8)', 'globex.io'] },
    ],
  },
  {
    file: 'malformed.csv',
    header: ['name', 'domain', 'city'],
    domainColumn: 1,
    rows: [
      { line: 2, cells: ['Acme', 'acme-shoes.com', 'Springfield'] },
      { line: 3, cells: ['Short row', 'globex.io', ''], error: 'line 3: 2 fields where the header has 3' },
      {
        line: 5,
        cells: ['Long row', 'initech.co.uk', 'London,extra,more'],
        error: 'line 5: 5 fields where the header has 3',
      },
      {
        line: 6,
        cells: ['Broken', '"umbrella-health.de', 'Berlin'],
        error:
          'line 6: a quoted field opened on line 6 is never closed; the following lines were read on their own',
      },
      { line: 7, cells: ['Lonely', 'lonely-seed.com', 'Nowhere'] },
      { line: 8, cells: ['Last', 'no-such-company.example', 'Here'] },
    ],
  },
  {
    file: 'plain-list.txt',
    header: null,
    domainColumn: 0,
    rows: [
      { line: 1, cells: ['acme-shoes.com'] },
      { line: 2, cells: ['https://www.globex.io/about'] },
      { line: 5, cells: ['initech.co.uk'] },
      { line: 6, cells: ['https://example.org/?a=1,2'] },
      { line: 7, cells: ['not a domain'] },
    ],
  },
];

function expectRows(rows: InputRow[], expected: Case) {
  expect(rows.map((row) => row.index)).toEqual(expected.rows.map((_, i) => i));
  expect(
    rows.map((row) => ({
      line: row.line,
      cells: row.cells,
      ...(row.error ? { error: row.error.detail } : {}),
    })),
  ).toEqual(expected.rows);
  for (const row of rows) {
    expect(row.domainRaw).toBe(row.cells[expected.domainColumn]);
    if (row.error) expect(row.error.code).toBe('invalid_input');
  }
}

describe('openInput on real-world files', () => {
  it.each(CASES.map((c) => [c.file, c] as const))(
    '%s: every row, in order, cells as parsed',
    async (_, c) => {
      const result = await readAll(fixture(c.file), c.options);
      expect(result.header).toEqual(c.header);
      expect(result.domainColumn).toBe(c.domainColumn);
      expectRows(result.rows, c);
    },
  );

  it.each(CASES.map((c) => [c.file, c] as const))(
    '%s: the same rows when the file arrives one byte at a time',
    async (_, c) => {
      const bytes = await readFile(path.join(FIXTURES, c.file));
      const oneByteChunks = Readable.from([...bytes].map((byte) => Buffer.from([byte])));
      const result = await readAll(oneByteChunks, c.options);
      expect(result.header).toEqual(c.header);
      expectRows(result.rows, c);
    },
  );
});

describe('openInput: the domain column', () => {
  it.each([
    ['Domain,name\n', 0],
    ['name, WEBSITE \n', 1],
    ['name,url,homepage\n', 1],
    ['company_domain,x\n', 0],
    ['x,HomePage\n', 1],
    ['website,domain\n', 1],
  ])('finds it by name in %j', async (headerLine, column) => {
    const result = await readAll(text(`${headerLine}a,b,c\n`));
    expect(result.domainColumn).toBe(column);
  });

  it('takes --column by name, case-insensitively', async () => {
    const result = await readAll(text('name,Company Site,domain\nacme,acme.com,x\n'), {
      column: 'company site',
    });
    expect(result.domainColumn).toBe(1);
    expect(result.rows[0].domainRaw).toBe('acme.com');
  });

  it('lists the header when --column is not in it', async () => {
    const error = await readAll(text('name,site\nacme,acme.com\n'), { column: 'domain' }).catch((e) => e);
    expect(error).toBeInstanceOf(Problem);
    expect(error.code).toBe('usage_error');
    expect(error.exitCode).toBe(2);
    expect(error.detail).toBe('--column "domain" is not in the header; the columns are "name", "site"');
  });

  it('says which names it looks for when no column matches', async () => {
    const error = await readAll(text('name,site\nacme,acme.com\n')).catch((e) => e);
    expect(error.code).toBe('usage_error');
    expect(error.detail).toContain('expected one of domain, website, url, company_domain, homepage');
    expect(error.detail).toContain('"name", "site"');
    expect(error.hint).toContain('--column');
  });

  it('uses the only column of a one-column file with a title', async () => {
    const result = await readAll(text('Sites\nacme.com\nglobex.io\n'));
    expect(result.header).toEqual(['Sites']);
    expect(result.rows.map((r) => r.domainRaw)).toEqual(['acme.com', 'globex.io']);
  });

  it('reads a tab-separated file with --delimiter tab', async () => {
    const result = await readAll(text('name\tdomain\nAcme, Inc.\tacme.com\n'), { delimiter: 'tab' });
    expect(result.rows[0].cells).toEqual(['Acme, Inc.', 'acme.com']);
  });

  it('refuses a delimiter that cannot separate fields', async () => {
    const error = await readAll(text('a\n'), { delimiter: '"' }).catch((e) => e);
    expect(error.code).toBe('usage_error');
  });
});

describe('openInput: edge cases', () => {
  it('gives no rows for an empty file', async () => {
    const result = await readAll(text(''));
    expect(result).toEqual({ header: null, domainColumn: 0, rows: [] });
  });

  it('gives no rows for a header alone', async () => {
    const result = await readAll(text('\ufeffname,domain\r\n'));
    expect(result.header).toEqual(['name', 'domain']);
    expect(result.rows).toEqual([]);
  });

  it('treats a one-field first line with a dot as the first domain of a plain list', async () => {
    const result = await readAll(text('acme com.\nglobex.io'));
    expect(result.header).toBeNull();
    expect(result.rows.map((r) => r.domainRaw)).toEqual(['acme com.', 'globex.io']);
  });

  it('reports a malformed header as invalid input', async () => {
    const error = await readAll(text('name,"domain\nacme,acme.com\n')).catch((e) => e);
    expect(error.code).toBe('invalid_input');
    expect(error.exitCode).toBe(2);
    expect(error.detail).toMatch(/^the header on line 1 is malformed/);
  });

  it('reports an unclosed quote on the last line', async () => {
    const result = await readAll(text('a,domain\r\n1,x.com\r\n\r\n2,"y.com'));
    expect(result.rows.map((r) => [r.line, r.cells, r.error?.detail])).toEqual([
      [2, ['1', 'x.com'], undefined],
      [
        4,
        ['2', '"y.com'],
        'line 4: a quoted field opened on line 4 is never closed; the following lines were read on their own',
      ],
    ]);
  });

  it('recovers the rows after an unclosed quote in a plain list', async () => {
    const result = await readAll(text('acme.com\n"globex.io\ninitech.co.uk\n'));
    expect(result.rows.map((r) => [r.line, r.domainRaw, r.error !== undefined])).toEqual([
      [1, 'acme.com', false],
      [2, '"globex.io', true],
      [3, 'initech.co.uk', false],
    ]);
  });

  it('takes mixed line endings as line ends, never as cell content', async () => {
    const result = await readAll(text('name,domain\r\na,x.com\nb,y.com\rc,z.com\r\n'));
    expect(result.rows.map((r) => [r.line, r.cells])).toEqual([
      [2, ['a', 'x.com']],
      [3, ['b', 'y.com']],
      [4, ['c', 'z.com']],
    ]);
  });

  it('wraps an unreadable source in an invalid_input problem', async () => {
    const error = await readAll(createReadStream(path.join(FIXTURES, 'does-not-exist.csv'))).catch((e) => e);
    expect(error).toBeInstanceOf(Problem);
    expect(error.code).toBe('invalid_input');
    expect(error.detail).toContain('ENOENT');
  });

  it('reads rows lazily: a consumer that stops early leaves the rest unread', async () => {
    let produced = 0;
    const lines = (function* () {
      yield 'domain\n';
      for (let i = 0; i < 1_000_000; i++) {
        produced += 1;
        yield `d${i}.example\n`;
      }
    })();
    const reader = await openInput(Readable.from(lines));
    let seen = 0;
    for await (const _ of reader.rows) {
      seen += 1;
      if (seen === 10) break;
    }
    expect(seen).toBe(10);
    // Backpressure: only a few buffers' worth was pulled from the source, not the million lines.
    expect(produced).toBeLessThan(100_000);
  });
});

describe('examples/companies.csv', () => {
  it('reads as the README shows: 25 rows, the website column, duplicates, a blank and invalid domains', async () => {
    const file = path.join(FIXTURES, '..', '..', '..', 'examples', 'companies.csv');
    const result = await readAll(createReadStream(file));
    expect(result.header).toEqual(['company', 'website', 'owner']);
    expect(result.domainColumn).toBe(1);
    expect(result.rows).toHaveLength(25);
    expect(result.rows.every((row) => row.error === undefined && row.cells.length === 3)).toBe(true);
    const outcomes = result.rows.map((row) => {
      const normalised = normaliseDomain(row.domainRaw);
      return normalised.ok ? normalised.domain : `invalid: ${normalised.reason}`;
    });
    expect(outcomes.filter((o) => o === 'acme-shoes.com')).toHaveLength(2);
    expect(outcomes.filter((o) => o === 'globex.io')).toHaveLength(2);
    expect(outcomes).toContain('xn--mnchner-kaffee-gsb.de');
    expect(outcomes).toContain('no-such-company.example');
    expect(outcomes.filter((o) => o.startsWith('invalid: '))).toEqual([
      'invalid: is empty',
      'invalid: looks like an e-mail address',
      'invalid: contains spaces',
    ]);
  });
});

describe('ISO-8859-15 (LibreOffice "Western Europe (ISO-8859-15)")', () => {
  const bytes = Buffer.from([
    ...Buffer.from('company,domain\nCaf', 'latin1'),
    0xe9,
    0x20,
    0xa4,
    ...Buffer.from(',acme-shoes.com\n'),
  ]);

  it('is told from Windows-1252 by its euro sign, and read with it', async () => {
    const reader = await openInput(Readable.from([bytes]));
    expect(reader.choice.encoding).toBe('iso-8859-15');
    const rows: InputRow[] = [];
    for await (const row of reader.rows) rows.push(row);
    expect(rows.map((row) => row.cells)).toEqual([['Café €', 'acme-shoes.com']]);
  });

  it('--encoding windows-1252 reads the same bytes the other way', async () => {
    const { rows } = await readAll(Readable.from([bytes]), { encoding: 'windows-1252' });
    expect(rows.map((row) => row.cells)).toEqual([['Café ¤', 'acme-shoes.com']]);
    const asked = await readAll(Readable.from([bytes]), { encoding: 'iso-8859-15' });
    expect(asked.rows.map((row) => row.cells)).toEqual([['Café €', 'acme-shoes.com']]);
  });
});

describe('a spreadsheet file where CSV text is read (--exclude, --seeds)', () => {
  const WORKBOOKS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'workbooks');
  it.each([
    ['companies.xlsx', 'an Excel workbook (.xlsx)'],
    ['companies.ods', 'an OpenDocument spreadsheet (.ods)'],
    ['companies.fods', 'a flat OpenDocument spreadsheet (.fods)'],
  ])('%s is said to be %s, read whole or streamed', async (name, what) => {
    const bytes = await readFile(path.join(WORKBOOKS, name));
    for (const source of [bytes, Readable.from([bytes])]) {
      const error = await openInput(source).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Problem);
      expect((error as Problem).code).toBe('invalid_input');
      expect((error as Problem).detail).toBe(`the file is ${what}, not CSV text`);
    }
  });
});
