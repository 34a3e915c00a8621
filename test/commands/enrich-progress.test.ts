// The progress line's total and ETA come from how much of the file the rows taken so far stand
// for, not from how much the reader has read: a small file is read whole at once, and its total
// was then the rows taken so far (a 13 s run showed "ETA 0.7s").
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runPiped } from '../helpers/in-process.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let home: string;
// 20 ms a lookup at concurrency 2: 250 rows take at least 2.5 s, so at least one progress line
// (one every 2 s) comes before the end.
sandboxAndDirForTests('cd-progress-', { companies: 2000, latencyMs: 20 }, (s, d) => {
  sandbox = s;
  home = d;
});

describe('--progress on a small file (about 10 KB)', () => {
  it('estimates the total rows and an ETA that counts down to the end', async () => {
    const rows = 250;
    const domains = sandbox.dataset.companies.slice(0, rows).map((c) => c.domain);
    const input = join(home, 'small.csv');
    writeFileSync(input, `name,domain\n${domains.map((d, i) => `Company number ${i},${d}`).join('\n')}\n`);
    const r = await runPiped(
      [
        '--base-url',
        sandbox.url,
        'enrich',
        '--input',
        input,
        '--output',
        join(home, 'out.csv'),
        '--concurrency',
        '2',
        '--progress',
      ],
      {
        env: {
          COMPANY_DATA_API_KEY: sandbox.keys.full,
          XDG_CONFIG_HOME: join(home, 'c'),
          XDG_CACHE_HOME: join(home, 'k'),
        },
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.split('\n').filter((line) => line.includes('progress: '));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const match = /progress: ([\d,]+)\/~([\d,]+) rows.*ETA ([\d.]+)s/.exec(line);
      expect(match, line).not.toBeNull();
      const [done, total, eta] = [
        Number(match![1].replace(',', '')),
        Number(match![2].replace(',', '')),
        Number(match![3]),
      ];
      // Within a tenth of the real count.
      expect(total, line).toBeGreaterThanOrEqual(rows * 0.9);
      expect(total, line).toBeLessThanOrEqual(rows * 1.1);
      // The ETA is about the rows left at the rate so far (about 100 a second here), not a fraction
      // of a second. It is printed to a tenth of a second, so a line near the end on a slow machine
      // ("249/~250 rows ... ETA 0.0s") rounds down: the bound allows that half-tenth.
      expect(eta + 0.05, line).toBeGreaterThan(((rows - done) / 100) * 0.3);
    }
  }, 60_000);
});
