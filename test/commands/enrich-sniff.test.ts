// Spreadsheet exports of the README's example file, read without --delimiter or --encoding: each
// must give, byte for byte, the output of the plain file, and say once on stderr what was guessed.
// A file whose delimiter cannot be told exits 2 naming both options.
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CaseResult, DIR, expectCase, lines, runCase } from '../helpers/command-cases.js';

const PLAIN = readFileSync(new URL('../../examples/companies.csv', import.meta.url), 'utf8');
const RECORDS = parse(PLAIN) as string[][];

function saved(delimiter: string, recordDelimiter: '\n' | '\r\n' = '\n'): string {
  return stringify(RECORDS, { delimiter, record_delimiter: recordDelimiter === '\n' ? 'unix' : 'windows' });
}

/** Excel's "Unicode text": UTF-16LE with a byte order mark, tabs, CRLF. */
function unicodeText(): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(saved('\t', '\r\n'), 'utf16le')]);
}

/** Excel's CSV in much of Europe on Windows: Windows-1252 (here all Latin-1) with semicolons. */
function windowsSemicolons(): Buffer {
  const text = saved(';', '\r\n');
  // Every character of the example is in Latin-1, where Windows-1252 agrees with it.
  expect(
    [...text].every((c) => c.charCodeAt(0) < 0x80 || (c.charCodeAt(0) >= 0xa0 && c.charCodeAt(0) <= 0xff)),
  ).toBe(true);
  return Buffer.from(text, 'latin1');
}

let plain: CaseResult;

beforeAll(async () => {
  plain = await runCase({
    name: 'plain',
    argv: ['enrich', '--input', `${DIR}/plain.csv`],
    tty: false,
    files: { 'plain.csv': PLAIN },
    wantCode: 0,
    wantStdout: '',
    wantStderr: '',
  });
});

describe('enrich --input: the plain example', () => {
  it('finds its companies, with its input columns as written', () => {
    expect(plain.code, plain.stderr).toBe(6);
    const rows = parse(plain.stdout, { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((row) => [row.company, row.website, row.owner])).toEqual(RECORDS.slice(1));
    expect(rows.filter((row) => row.found === 'true').length).toBe(10);
    expect(plain.stdout).toContain('\nMünchner Kaffee,münchner-kaffee.de,Lena Huber,true,');
  });
});

describe('enrich --input: the example as spreadsheets save it', () => {
  const cases: Array<{ name: string; file: string; bytes: string | Buffer; note: string }> = [
    {
      name: 'semicolons',
      file: 'semicolons.csv',
      bytes: saved(';'),
      note: `Reading ${DIR}/semicolons.csv with fields separated by ";" (--delimiter reads it otherwise).`,
    },
    {
      name: 'UTF-16LE with a byte order mark, tabs and CRLF (Excel "Unicode text")',
      file: 'unicode.txt',
      bytes: unicodeText(),
      note: `Reading ${DIR}/unicode.txt as UTF-16LE (its byte order mark says so), with fields separated by tab (--delimiter reads it otherwise).`,
    },
    {
      name: 'Windows-1252 with semicolons and CRLF',
      file: 'windows.csv',
      bytes: windowsSemicolons(),
      note: `Reading ${DIR}/windows.csv as Windows-1252, since it is not valid UTF-8 (--encoding reads it otherwise), with fields separated by ";" (--delimiter reads it otherwise).`,
    },
    {
      name: 'pipes',
      file: 'pipes.csv',
      bytes: saved('|'),
      note: `Reading ${DIR}/pipes.csv with fields separated by "|" (--delimiter reads it otherwise).`,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: the plain file's output, and one note`, async () => {
      await expectCase({
        name: c.name,
        argv: ['enrich', '--input', `${DIR}/${c.file}`],
        tty: false,
        files: { [c.file]: c.bytes },
        wantCode: plain.code,
        wantStdout: plain.stdout,
        wantStderr: lines(c.note) + plain.stderr,
      });
    });
  }

  it('the options still win: a semicolon file read with --delimiter , is one column per line', async () => {
    const got = await runCase({
      name: 'forced',
      argv: [
        'enrich',
        '--input',
        `${DIR}/semicolons.csv`,
        '--delimiter',
        ',',
        '--column',
        'company;website;owner',
      ],
      tty: false,
      files: { 'semicolons.csv': 'company;website;owner\nAcme;acme-shoes.com;x\n' },
      wantCode: 0,
      wantStdout: '',
      wantStderr: '',
    });
    expect(got.stdout.split('\n')[1]).toBe(
      'Acme;acme-shoes.com;x,,,,,,,,0,,invalid_domain,domain contains characters a domain cannot have',
    );
  });
});

describe('enrich --input: a file that cannot be told', () => {
  const hint =
    'Say how to read it: --delimiter with \\",\\" \\";\\" tab or \\"|\\", and --encoding with utf8, utf16le, windows-1252, iso-8859-15 or latin1.';
  it('exits 2 naming --delimiter and --encoding when two delimiters split it alike', async () => {
    await expectCase({
      name: 'undecidable delimiter',
      argv: ['enrich', '--input', `${DIR}/both.csv`],
      tty: false,
      files: {
        'both.csv': lines('name,domain;note', 'Acme,acme-shoes.com;first', 'Globex,globex.io;second'),
      },
      wantCode: 2,
      wantStdout: '',
      wantStderr: lines(
        `{"code":"invalid_input","status":0,"title":"Cannot tell how to read the input","detail":"cannot tell what separates the input's fields: \\",\\" and \\";\\" each split its header and rows into regular columns","retryable":false,"hint":"${hint}"}`,
      ),
    });
  });

  it('exits 2 naming both options for UTF-16 without a byte order mark', async () => {
    await expectCase({
      name: 'undecidable encoding',
      argv: ['enrich', '--input', `${DIR}/nobom.txt`],
      tty: true,
      files: { 'nobom.txt': Buffer.from('domain\r\nacme-shoes.com\r\n', 'utf16le') },
      wantCode: 2,
      wantStdout: '',
      wantStderr: lines(
        'error: Cannot tell how to read the input (invalid_input)',
        "  cannot tell the input's encoding: it holds NUL bytes, as UTF-16 without a byte order mark (or a file that is not text) does",
        '  Say how to read it: --delimiter with "," ";" tab or "|", and --encoding with utf8, utf16le, windows-1252, iso-8859-15 or latin1.',
      ),
    });
  });

  it('reads that file with --encoding utf16le', async () => {
    await expectCase({
      name: 'utf16le asked',
      argv: ['enrich', '--input', `${DIR}/nobom.txt`, '--encoding', 'utf16le'],
      tty: false,
      files: { 'nobom.txt': Buffer.from('domain\r\nacme-shoes.com\r\n', 'utf16le') },
      wantCode: 0,
      wantStdout: lines(
        'domain,found,cd_domain,company_name,country,site_category,employee_range,founded_year,credits_charged,bought_at,error_code,error_detail',
        'acme-shoes.com,true,acme-shoes.com,Acme Shoes,US,fashion,51-200,2009,1,,,',
      ),
      wantStderr: lines(
        '2026-11-24T12:00:00Z Enriched: 1 row, 1 unique domain (1 found, 0 not found), 0 errors, 1 credit charged, balance 999,999, 0.0s',
      ),
    });
  });
});

describe('search --exclude and lookalike --seeds read with the same sniffing', () => {
  const plainList = lines(
    'company,website',
    'Acme Shoes,acme-shoes.com',
    'Münchner Kaffee,münchner-kaffee.de',
  );
  const windowsList = Buffer.from(plainList.replaceAll(',', ';'), 'latin1');
  const note = (option: string) =>
    lines(
      `Reading ${option} ${DIR}/list.csv as Windows-1252, since it is not valid UTF-8 (--encoding reads it otherwise), with fields separated by ";" (--delimiter reads it otherwise).`,
    );
  const commands: Array<[string, string[], string]> = [
    [
      'search --exclude',
      ['search', 'kaffee shoes', '--operator', 'or', '--exclude', `${DIR}/list.csv`],
      '--exclude',
    ],
    ['lookalike --seeds', ['lookalike', '--seeds', `${DIR}/list.csv`, '-k', '3'], '--seeds'],
  ];
  for (const [name, argv, option] of commands) {
    it(`${name}: a Windows-1252 file with semicolons reads as the plain one`, async () => {
      const base = { name, argv, tty: false, wantCode: 0, wantStdout: '', wantStderr: '' };
      const fromPlain = await runCase({ ...base, files: { 'list.csv': plainList } });
      expect(fromPlain.code, fromPlain.stderr).toBe(0);
      expect(fromPlain.stderr).toMatch(/^(Excluding 2 domains\.|3 lookalikes from 2 seeds)/m);
      await expectCase({
        ...base,
        files: { 'list.csv': windowsList },
        wantStdout: fromPlain.stdout,
        wantStderr: note(option) + fromPlain.stderr,
      });
    });
  }
});
