// Finished-tool details (issue 30): messages that say what the options in force do, one title per
// code, counts written by one plural helper, a missing output folder caught before anything is
// bought, and failures that stay human text while stderr is a terminal.
import { describe, expect, it } from 'vitest';
import { formatProgress, formatSummary } from '../../src/batch/progress.js';
import { Problem } from '../../src/problem.js';
import { checkMaxCredits, type Selection } from '../../src/spend/selection.js';
import { plural } from '../../src/text.js';
import { type CommandCase, DIR, expectCase, lines } from '../helpers/command-cases.js';
import { FIXED_NOW, runInProcess } from '../helpers/in-process.js';
import { expectStoreCase, SCOPE_PROFILE, STORE } from '../helpers/store-cases.js';

const INPUT = lines(
  'name,domain',
  'Acme,acme-shoes.com',
  'Globex,globex.io',
  'Initech,initech.co.uk',
  'Sacor,sacor-sneakers.com',
);

const cases: CommandCase[] = [
  {
    name: '--budget reached: "Budget reached", credits counted once, the store promised',
    argv: ['enrich', '--input', `${DIR}/in.csv`, '--output', `${DIR}/out.csv`, '--budget', '2', '-q'],
    tty: true,
    files: { 'in.csv': INPUT },
    wantCode: 4,
    wantStdout: '',
    wantStderr: lines(
      'error: Budget reached (budget_exhausted)',
      `  --budget 2 reached after 2 credits. The rows not requested carry error_code budget_exhausted; the answers bought so far are kept in the store (${DIR}/home/.local/state/company-data/store.db).`,
      '  Raise --budget (or --budget-month) and re-run the same command; answers already bought are reused from the store at no cost.',
    ),
  },
  {
    name: '--budget reached with --no-store: no promise of reuse from the store',
    argv: [
      '--no-store',
      'enrich',
      '--input',
      `${DIR}/in.csv`,
      '--output',
      `${DIR}/out.csv`,
      '--budget',
      '2',
      '-q',
    ],
    tty: true,
    files: { 'in.csv': INPUT },
    wantCode: 4,
    wantStdout: '',
    wantStderr: lines(
      'error: Budget reached (budget_exhausted)',
      '  --budget 2 reached after 2 credits. The rows not requested carry error_code budget_exhausted; nothing was kept (--no-store).',
      '  Raise --budget (or --budget-month) and re-run; with --no-store nothing was kept, so the re-run buys every answer again.',
    ),
  },
  {
    name: 'a missing output folder: exit 2 naming it, before the catalogs or any lookup',
    argv: ['enrich', '--input', `${DIR}/in.csv`, '--output', `${DIR}/missing/dir/out.csv`],
    tty: true,
    files: { 'in.csv': INPUT },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      `  the folder of --output ${DIR}/missing/dir/out.csv does not exist: ${DIR}/missing/dir`,
      `  Create it first (mkdir -p ${DIR}/missing/dir) or write the output elsewhere; nothing was bought.`,
    ),
  },
  {
    name: 'a failure with -o json, stdout redirected, stderr on a terminal: human text',
    argv: ['-o', 'json', 'enrich', '--input', `${DIR}/nope.csv`],
    tty: false,
    stderrTTY: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines('error: Cannot read the input (invalid_input)', `  no such file: ${DIR}/nope.csv`),
  },
];

describe('finished-tool details', () => {
  it.each(cases)('$name', expectCase);

  it('a failure with -o json and stderr piped: one JSON line (for scripts)', async () => {
    const run = await runInProcess(['-o', 'json', 'enrich', '--input', '/nonexistent/nope.csv'], {
      tty: true,
      stderrTTY: false,
    });
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: lines(
        '{"code":"config_error","status":0,"title":"Configuration error","detail":"No service URL is configured: set --base-url or COMPANY_DATA_BASE_URL, or use --sandbox.","retryable":false,"hint":"Run `company-data config show` to see which settings are in effect."}',
      ),
    });
  });

  it('budget_exhausted has one title wherever it is made', () => {
    expect(new Problem({ code: 'budget_exhausted' }).title).toBe('Budget reached');
    expect(new Problem({ code: 'budget_exhausted', detail: 'x', source: 'client' }).message).toBe(
      'Budget reached: x',
    );
  });

  it('counts are written by one plural helper', () => {
    expect([plural(1, 'error'), plural(2, 'error'), plural(1000, 'entry', 'entries')]).toEqual([
      '1 error',
      '2 errors',
      '1,000 entries',
    ]);
    const one = {
      rows: 1,
      uniqueDomains: 1,
      found: 0,
      notFound: 0,
      failed: 1,
      errors: 1,
      charged: 1,
      reused: 0,
      rowsRead: 1,
      bytesRead: 0,
    };
    expect(formatSummary(one as never, 1000)).toBe(
      'Enriched: 1 row, 1 unique domain (0 found, 0 not found, 1 failed), 1 error, 1 credit charged, 1.0s',
    );
    expect(formatProgress(one as never, 0)).toBe('1 row, 0 found, 1 error, 1 credit');
  });
});

describe('counts in messages', () => {
  it('"up to 1 credit", not "1 credits"', () => {
    const selection = {
      products: [{ id: 'profile', credit_units: 1 }],
      worstCase: 1,
    } as unknown as Selection;
    expect(() => checkMaxCredits(selection, 0)).toThrow(
      'the selected products (profile 1) can cost up to 1 credit per lookup, more than --max-credits 0; nothing was sent',
    );
  });

  it('store clear of a store holding one answer asks about "the 1 stored answer"', () =>
    expectStoreCase({
      name: 'clear one',
      argv: ['store', 'clear'],
      tty: true,
      stdinTTY: true,
      stdin: 'n\n',
      fill: async (store) => {
        await store.save(await store.scopeId(SCOPE_PROFILE), 'acme-shoes.com', {
          found: true,
          record: { domain: 'acme-shoes.com' },
          credits: 1,
          boughtAt: FIXED_NOW,
          run: null,
        });
      },
      wantCode: 0,
      wantStdout: '',
      wantStderr: `Remove the 1 stored answer from ${STORE}? The spend ledger stays (0 entries): --budget-month counts it. [y/N] Nothing was removed.\n`,
    }));
});
