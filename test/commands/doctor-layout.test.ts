// `doctor` shows what it recognised of each open shape, from free calls only (the catalogs and the
// account), on every sandbox layout: a user meeting a new service sees which layout it speaks. No
// paid endpoint is called.
import { describe, expect, it } from 'vitest';
import type { LayoutName } from '../../src/sandbox/layouts.js';
import { runCase } from '../helpers/command-cases.js';
import type { SandboxHandle } from '../helpers/sandbox.js';

const ANSWERS =
  '- answer layouts: records, search rows, breakdown buckets and lookalike candidates are seen only in paid answers; the client reads the layouts of docs/contract.md';

const WANT: Record<LayoutName, string[]> = {
  flat: [
    '✓ products layout: 3 products; default profile (said in each entry)',
    '✓ fields layout: 12 fields; 5 filters (said in each entry); 4 facets (said in each entry)',
    '✓ account layout: plan in `plan` (text), balance in `balance` (number), capabilities in `capabilities` (a list)',
    '✓ credit headers: charge in x-credits-charged, balance in x-credits-remaining',
    ANSWERS,
  ],
  grouped: [
    '✓ products layout: 3 products; default profile (said once for the catalog)',
    '✓ fields layout: 12 fields; 5 filters (said once for the catalog); 4 facets (said once for the catalog)',
    '✓ account layout: plan in `plan` (an object), balance in `balance` (text), capabilities in `capabilities` (an object)',
    '✓ credit headers: charge in x-credits-used, balance in x-credits-balance',
    ANSWERS,
  ],
  enveloped: [
    '✓ products layout: 3 products; default profile (said in each entry)',
    '✓ fields layout: 12 fields; 5 filters (said in each entry); 4 facets (said in each entry)',
    '✓ account layout: under `data` > `account`: plan in `plan` (text), balance in `credits` (an object), capabilities in `capabilities` (text)',
    '✓ credit headers: charge in x-credit-cost, balance in x-credit-balance',
    ANSWERS,
  ],
  metered: [
    '✓ products layout: 3 products; default profile (said in each entry)',
    '✓ fields layout: 12 fields; 5 filters (said in each entry); 4 facets (said in each entry)',
    '✓ account layout: under `data` > `account`: plan in `plan` (text), balance in `credits` (an object), capabilities in `capabilities` (text)',
    '✓ credit headers: charge in x-usage-cost, balance in x-account-balance',
    ANSWERS,
  ],
};

describe('doctor on every sandbox layout', () => {
  for (const layout of Object.keys(WANT) as LayoutName[]) {
    it(`${layout}: says what it recognised, and calls only free endpoints`, async () => {
      let sandbox: SandboxHandle | undefined;
      const got = await runCase({
        name: layout,
        argv: ['doctor', '-o', 'table'],
        tty: true,
        sandbox: { layout },
        setup: (s) => {
          sandbox = s;
        },
        wantCode: 0,
        wantStdout: '',
        wantStderr: '',
      });
      expect(got.code).toBe(0);
      const shown = got.stdout.split('\n');
      const from = shown.findIndex((line) => line.includes('products layout'));
      expect(shown.slice(from, -1)).toEqual(WANT[layout]);
      expect(got.stderr).toBe('No problems found.\n');
      const paths = new Set(got.requests.map((line) => line.split(' ')[1]));
      expect([...paths].sort()).toEqual(['/api/errors', '/api/fields', '/api/me', '/api/products']);
      expect(sandbox?.balances().full).toBe(1_000_000);
    });
  }
});
