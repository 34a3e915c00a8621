// Real-world CSV inputs through batch enrichment (in-process): spreadsheet exports (BOM,
// CRLF, semicolons, Latin-1), the csv-spectrum cases, a malformed file and a plain list. Every
// input record comes back as exactly one output row, in order, its cells as an independent
// parser (csv-parse) reads them, followed by a result for the row.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InProcessResult as RunResult, runPiped } from '../helpers/in-process.js';
import { type SandboxHandle, startTestSandbox } from '../helpers/sandbox.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/csv/', import.meta.url));

interface Fixture {
  file: string;
  flags?: string[];
  /** How csv-parse must read the file to get the same records (a BOM is always skipped). */
  parseAs?: { delimiter?: string; encoding?: BufferEncoding };
  /**
   * Records as the tool reads them, where a strict CSV parser cannot be the judge: a malformed
   * file (each broken record still becomes one row) and a plain list of domains (no header).
   */
  records?: string[][];
  /** Rows expected to carry `invalid_input` (malformed records), by 0-based data row. */
  malformedRows?: number[];
}

const FIXTURE_CASES: Fixture[] = [
  { file: 'excel-utf8-bom-crlf.csv' },
  { file: 'semicolon.csv', flags: ['--delimiter', ';'], parseAs: { delimiter: ';' } },
  { file: 'latin1.csv', flags: ['--encoding', 'latin1'], parseAs: { encoding: 'latin1' } },
  { file: 'quoted-commas-newlines.csv' },
  { file: 'spectrum-comma_in_quotes.csv' },
  { file: 'spectrum-empty.csv' },
  { file: 'spectrum-empty_crlf.csv' },
  { file: 'spectrum-escaped_quotes.csv' },
  { file: 'spectrum-json.csv' },
  { file: 'spectrum-location_coordinates.csv' },
  { file: 'spectrum-newlines.csv' },
  { file: 'spectrum-newlines_crlf.csv' },
  { file: 'spectrum-quotes_and_newlines.csv' },
  { file: 'spectrum-simple.csv' },
  { file: 'spectrum-simple_crlf.csv' },
  { file: 'spectrum-utf8.csv' },
  {
    file: 'malformed.csv',
    records: [
      ['name', 'domain', 'city'],
      ['Acme', 'acme-shoes.com', 'Springfield'],
      ['Short row', 'globex.io', ''],
      ['Long row', 'initech.co.uk', 'London,extra,more'],
      ['Broken', '"umbrella-health.de', 'Berlin'],
      ['Lonely', 'lonely-seed.com', 'Nowhere'],
      ['Last', 'no-such-company.example', 'Here'],
    ],
    malformedRows: [1, 2, 3],
  },
  {
    file: 'plain-list.txt',
    // Blank lines are not records; the output names its one column `domain`.
    records: [
      ['domain'],
      ['acme-shoes.com'],
      ['https://www.globex.io/about'],
      ['initech.co.uk'],
      ['https://example.org/?a=1,2'],
      ['not a domain'],
    ],
  },
];

let sandbox: SandboxHandle;
let dir: string;
const runs = new Map<string, RunResult>();

beforeAll(async () => {
  sandbox = await startTestSandbox();
  dir = mkdtempSync(join(tmpdir(), 'cd-real-world-csv-'));
  // A few binaries at a time: each run is mostly start-up, and the box has two cores.
  const queue = [...FIXTURE_CASES];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const c = next;
      const result = await runPiped(
        [
          '--base-url',
          sandbox.url,
          'enrich',
          '--input',
          join(FIXTURES, c.file),
          '--output',
          join(dir, `${c.file}.out.csv`),
          ...(c.flags ?? []),
        ],
        {
          env: {
            COMPANY_DATA_API_KEY: sandbox.keys.full,
            XDG_CONFIG_HOME: join(dir, 'config'),
            XDG_CACHE_HOME: join(dir, 'cache'),
          },
        },
      );
      runs.set(c.file, result);
    }
  };
  await Promise.all([worker(), worker(), worker()]);
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function inputRecords(c: Fixture): string[][] {
  if (c.records) return c.records;
  const bytes = readFileSync(join(FIXTURES, c.file));
  return parse(bytes, { bom: true, delimiter: c.parseAs?.delimiter ?? ',', encoding: c.parseAs?.encoding });
}

describe('real-world CSV inputs through batch enrichment', () => {
  it('covers every fixture in test/fixtures/csv', () => {
    const fixtures = readdirSync(FIXTURES).filter((name) => !name.startsWith('.'));
    expect(fixtures.sort()).toEqual(FIXTURE_CASES.map((c) => c.file).sort());
  });

  it.each(FIXTURE_CASES.map((c) => [c.file, c] as const))(
    '%s: every record, in order, cells intact',
    (_, c) => {
      const run = runs.get(c.file);
      expect(run, 'the command ran').toBeDefined();
      const records = inputRecords(c);
      const output = parse(readFileSync(join(dir, `${c.file}.out.csv`)), { bom: true }) as string[][];
      const width = records[0].length;
      expect(output.length).toBe(records.length);
      expect(output[0].slice(0, width)).toEqual(records[0]);
      expect(output.slice(1).map((row) => row.slice(0, width))).toEqual(records.slice(1));

      const header = output[0];
      const found = header.indexOf('found');
      const errorCode = header.indexOf('error_code');
      expect(found).toBeGreaterThanOrEqual(width);
      expect(errorCode).toBeGreaterThan(found);
      const codes = output.slice(1).map((row) => row[errorCode]);
      output.slice(1).forEach((row, i) => {
        // A result for every row: an answer, or the code that says why there is none.
        expect(['true', 'false'].includes(row[found]) || row[errorCode] !== '', `row ${i}`).toBe(true);
        expect(row[errorCode] === 'invalid_input', `row ${i}`).toBe((c.malformedRows ?? []).includes(i));
      });
      expect(run?.code, run?.stderr).toBe(codes.some((code) => code !== '') ? 6 : 0);
    },
  );

  it('resolves the domains of the spreadsheet exports (BOM, semicolons, Latin-1)', () => {
    const column = (file: string, name: string) => {
      const output = parse(readFileSync(join(dir, `${file}.out.csv`)), { bom: true }) as string[][];
      const at = output[0].indexOf(name);
      return output.slice(1).map((row) => row[at]);
    };
    // The BOM did not stick to the first header name, so the Website column was recognised.
    expect(column('excel-utf8-bom-crlf.csv', 'domain')).toEqual([
      'acme-shoes.com',
      'globex.io',
      'umbrella-health.de',
      'initech.co.uk',
    ]);
    expect(column('semicolon.csv', 'found')).toEqual(['true', 'true', 'true']);
    // Latin-1 rows name domains the dataset lacks: looked up and not found, never mangled.
    expect(column('latin1.csv', 'found')).toEqual(['false', 'false', 'false']);
    expect(column('latin1.csv', 'error_code')).toEqual(['', '', '']);
  });
});
