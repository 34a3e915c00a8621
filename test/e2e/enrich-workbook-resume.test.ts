// A workbook output (--output x.xlsx) under the built binary: killed with SIGKILL mid-run and run
// again, it ends with the workbook an uninterrupted run writes (cell for cell: a workbook's bytes
// carry its creation time), pays again only for what never reached the store, and a second
// process on the same output is refused while the first runs (exit 7), as for a CSV output.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { storedDomains } from '../helpers/store.js';

let sandbox: SandboxHandle;
let dir: string;
let input: string;
let domains: string[];

beforeAll(async () => {
  // Latency and a low concurrency stretch a run over about a second, so the kill lands mid-run.
  sandbox = await startSandbox({ port: 0, companies: 2000, latencyMs: 30 });
  dir = mkdtempSync(join(tmpdir(), 'cd-workbook-resume-'));
  domains = sandbox.dataset.companies.slice(60, 100).map((c) => c.domain);
  const rows = domains.map(
    (d, i) => `row ${i},${d},${String(i).padStart(5, '0')},${i % 3 === 0 ? `=${i}+1` : `@note ${i}`}`,
  );
  input = join(dir, 'in.csv');
  writeFileSync(input, `name,domain,zip,note\n${rows.join('\n')}\n`);
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = (store: string) => ({
  COMPANY_DATA_STORE: join(dir, store),
  COMPANY_DATA_API_KEY: sandbox.keys.full,
  XDG_CONFIG_HOME: join(dir, 'config'),
  XDG_CACHE_HOME: join(dir, 'cache'),
});
const args = (output: string) => [
  '--base-url',
  sandbox.url,
  '-q',
  'enrich',
  '--input',
  input,
  '--output',
  output,
  '--include',
  'company_name,founded_year',
  '--concurrency',
  '2',
];
const domainRequests = () => sandbox.requests().filter((r) => r.path.startsWith('/api/domains/')).length;

/** Every cell of the workbook's one sheet, with its type. */
async function cellsOf(path: string): Promise<Array<Array<[unknown, number]>>> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(path);
  expect(workbook.worksheets).toHaveLength(1);
  const rows: Array<Array<[unknown, number]>> = [];
  workbook.worksheets[0].eachRow({ includeEmpty: true }, (row) => {
    const cells: Array<[unknown, number]> = [];
    row.eachCell({ includeEmpty: true }, (cell) => {
      cells.push([cell.value, cell.type]);
    });
    rows.push(cells);
  });
  return rows;
}

describe('a workbook output and a kill', () => {
  let reference: Array<Array<[unknown, number]>>;
  let referenceCharge: number;

  it('an uninterrupted run writes every row once, in order, with text and number cells', async () => {
    const before = sandbox.balances().full;
    const r = await runCli(args(join(dir, 'reference.xlsx')), { env: env('reference.db') });
    expect(r.code, r.stderr).toBe(0);
    referenceCharge = before - sandbox.balances().full;
    expect(referenceCharge).toBe(domains.length);
    reference = await cellsOf(join(dir, 'reference.xlsx'));
    expect(reference.map((row) => row[1][0])).toEqual(['domain', ...domains]);
    // Leading zeros and formula-like text as text cells; returned numbers as numbers.
    expect(reference[1].slice(0, 4)).toEqual([
      ['row 0', ExcelJS.ValueType.String],
      [domains[0], ExcelJS.ValueType.String],
      ['00000', ExcelJS.ValueType.String],
      ['=0+1', ExcelJS.ValueType.String],
    ]);
    expect(reference[2][3]).toEqual(['@note 1', ExcelJS.ValueType.String]);
    expect(reference[0][6]).toEqual(['founded_year', ExcelJS.ValueType.String]);
    expect(reference[1][6][1]).toBe(ExcelJS.ValueType.Number);
    expect(reference[1][7]).toEqual([1, ExcelJS.ValueType.Number]);
  });

  it('SIGKILL mid-run, then the same command: the same cells, nothing stored paid twice, no file left over', async () => {
    const output = join(dir, 'killed.xlsx');
    const store = join(dir, 'killed.db');
    const before = sandbox.balances().full;
    const from = domainRequests();
    const killed = await startCli(args(output), {
      env: env('killed.db'),
      input: 'ignore',
      timeoutMs: 40_000,
      signalWhen: { when: () => domainRequests() - from >= 16, signal: 'SIGKILL' },
    }).done;
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(existsSync(output)).toBe(false);
    const requested = domainRequests() - from;
    const kept = storedDomains(store).size;
    expect(kept).toBeGreaterThan(0);

    const resumed = await runCli(args(output), { env: env('killed.db') });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await cellsOf(output)).toEqual(reference);
    // Only the answers in flight at the kill (requested, never stored) were bought twice.
    expect(before - sandbox.balances().full).toBe(referenceCharge + (requested - kept));
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('a second process on the same workbook output is refused while the first runs (exit 7)', async () => {
    const output = join(dir, 'locked.xlsx');
    const from = domainRequests();
    // Paced at 10 lookups a second: the first run lasts 4 s, however slowly the second starts.
    const first = startCli([...args(output), '--concurrency', '1', '--rate', '10'], {
      env: env('locked.db'),
      input: 'ignore',
      timeoutMs: 40_000,
    });
    while (domainRequests() - from < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await runCli(args(output), { env: env('locked.db') });
    expect(second.code, second.stderr).toBe(7);
    expect(JSON.parse(second.stderr.trimEnd().split('\n').at(-1) ?? '{}').code).toBe('run_busy');
    const done = await first.done;
    expect(done.code, done.stderr).toBe(0);
    expect(await cellsOf(output)).toEqual(reference);
  });

  it('SIGINT: exit 130, no workbook, and --summary-json says the run was interrupted', async () => {
    const output = join(dir, 'interrupted.xlsx');
    const summaryFile = join(dir, 'interrupted-summary.json');
    const from = domainRequests();
    const r = await startCli(
      [...args(output), '--summary-json', summaryFile, '--report', join(dir, 'interrupted.jsonl')],
      {
        env: env('interrupted.db'),
        input: 'ignore',
        timeoutMs: 40_000,
        signalWhen: { when: () => domainRequests() - from >= 8, signal: 'SIGINT' },
      },
    ).done;
    expect(r.code, r.stderr).toBe(130);
    expect(existsSync(output)).toBe(false);
    // The report goes with the output: an interrupted run leaves neither.
    expect(existsSync(join(dir, 'interrupted.jsonl'))).toBe(false);
    const summary = JSON.parse(readFileSync(summaryFile, 'utf8'));
    expect(summary).toMatchObject({
      status: 'interrupted',
      exit_code: 130,
      error_code: 'interrupted',
      output,
    });
    expect(summary.credits_charged).toBeGreaterThan(0);
    // Outcomes count the rows written; answers bought for rows after the last one written are
    // charged (and stored) but have no row yet.
    expect(summary.outcomes.bought).toBeLessThanOrEqual(summary.credits_charged);
    expect(summary.rows).toBe(Object.values(summary.outcomes).reduce((a: number, b) => a + Number(b), 0));
  });
});
