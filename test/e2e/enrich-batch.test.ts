// Batch enrichment by the real binary on a pseudo-terminal: the spinner drawn on stderr. The rest of
// batch enrichment (messy input, budget, credits, dry run, pipes) is test/commands/enrich-batch.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { startInTerminal } from '../helpers/cli.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let dir: string;

// A little latency so that concurrency is real: many lookups are in flight at once.
sandboxAndDirForTests('cd-enrich-batch-', { companies: 2000, latencyMs: 5 }, (s, d) => {
  sandbox = s;
  dir = d;
});

function env(key: string, store = 'store.db') {
  return {
    COMPANY_DATA_API_KEY: key,
    COMPANY_DATA_STORE: join(dir, store),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
  };
}

const file = (name: string) => join(dir, name);
const readCsv = (path: string): string[][] =>
  parse(readFileSync(path), { bom: true, relax_column_count: true });

/** Found domains of the dataset, skipping the showcase records at the start. */
function datasetDomains(from: number, count: number): string[] {
  return sandbox.dataset.companies.slice(from, from + count).map((c) => c.domain);
}

describe('on a terminal', () => {
  it('on a terminal (script -qec) the spinner is drawn on stderr', async () => {
    const domains = datasetDomains(700, 60);
    writeFileSync(file('tty.csv'), `domain\n${domains.join('\n')}\n`);
    const slow = await startSandbox({ port: 0, companies: 2000, latencyMs: 25 });
    try {
      const args = [
        'enrich',
        '--input',
        file('tty.csv'),
        '--output',
        file('tty-out.csv'),
        '--concurrency',
        '1',
      ];
      const { stdout: out } = await startInTerminal(['--base-url', slow.url, ...args], {
        env: env(slow.keys.full),
        columns: 120,
      }).done;
      expect(out).toContain('\x1b');
      expect(out).toMatch(/\d+ rows.*found/);
      expect(readCsv(file('tty-out.csv')).length).toBe(61);
    } finally {
      await slow.close();
    }
  });
});
