// The code caches the build leaves (src/cli-loader.ts, scripts/code-cache.mjs) are used by the
// commands that load their files. V8 refuses a cache made under other flags, and a batch sets two
// V8 flags at run time: these tests fail if one is set before a file it would invalidate loads.
// undici loads only for calls through a proxy (src/http/transport.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';
import { startTestSandbox } from '../helpers/sandbox.js';
import { tunnelProxy } from '../helpers/server.js';

let dir: string;
let preload: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cd-code-cache-'));
  // At exit, what became of each file's cache, as the loader recorded it.
  preload = join(dir, 'outcomes.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => {
  const { loadedBundles } = require(${JSON.stringify(join(ROOT, 'dist/loader.cjs'))});
  const outcomes = Object.fromEntries(loadedBundles().map((b) => [require('node:path').basename(b.file), b.cache]));
  process.stderr.write('OUTCOMES ' + JSON.stringify(outcomes) + '\\n');
});
`,
  );
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function outcomesOf(args: string[], env: Record<string, string> = {}): Promise<Record<string, string>> {
  const r = await runCli(args, {
    nodeArgs: ['--require', preload],
    cwd: dir,
    env: { HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_CACHE_HOME: join(dir, 'cache'), ...env },
  });
  expect(r.code, r.stderr).toBe(0);
  const line = r.stderr.split('\n').find((l) => l.startsWith('OUTCOMES '));
  expect(line, r.stderr).toBeDefined();
  return JSON.parse(line!.slice('OUTCOMES '.length)) as Record<string, string>;
}

/** initech.co.uk needs the public suffix list; csv-parse loads only for quoting (src/batch/csv-records.ts). */
function batchInput(quoted: boolean): string {
  const input = join(dir, quoted ? 'quoted.csv' : 'plain.csv');
  const last = quoted ? '"no-such-company.example"' : 'no-such-company.example';
  writeFileSync(input, `domain\nacme-shoes.com\ninitech.co.uk\n${last}\n`);
  return input;
}

describe('the code caches of the build', () => {
  it('are used by a batch for the bundle, the suffix list and the CSV parser; undici is not loaded', async () => {
    const outcomes = await outcomesOf([
      '--sandbox',
      '--quiet',
      'enrich',
      '--input',
      batchInput(true),
      '--output',
      join(dir, 'out.csv'),
    ]);
    expect(outcomes).toMatchObject({ 'cli.cjs': 'used', 'tldts.cjs': 'used', 'csv-parse.cjs': 'used' });
    expect(outcomes).not.toHaveProperty(['undici.cjs']);
  });

  // Through a proxy, the catalogs' calls load undici and set its V8 flag before the input is
  // opened: csv-parse, if a quote needs it, then compiles from source (src/batch/csv-records.ts).
  it("are used by a batch through a proxy for undici's file too", async () => {
    const sandbox = await startTestSandbox({ companies: 200 });
    const proxy = await tunnelProxy();
    try {
      // A host only the proxy knows: the lookups go through it, over undici.
      const base = sandbox.url.replace('//127.0.0.1:', '//sandbox.invalid:');
      const outcomes = await outcomesOf(
        [
          '--base-url',
          base,
          '--allow-insecure-http',
          '--quiet',
          'enrich',
          '--input',
          batchInput(false),
          '--output',
          join(dir, 'out-proxied.csv'),
        ],
        { HTTP_PROXY: proxy.url, COMPANY_DATA_API_KEY: sandbox.keys.full },
      );
      expect(outcomes).toMatchObject({
        'cli.cjs': 'used',
        'undici.cjs': 'used',
        'tldts.cjs': 'used',
      });
      expect(proxy.tunnels.length).toBeGreaterThan(0);
    } finally {
      await proxy.close();
      await sandbox.close();
    }
  });

  it('are used for CSV and table output', async () => {
    expect(await outcomesOf(['--sandbox', '-o', 'csv', 'products'])).toMatchObject({
      'cli.cjs': 'used',
      'csv-stringify.cjs': 'used',
    });
    expect(await outcomesOf(['--sandbox', '-o', 'table', 'products'])).toMatchObject({
      'cli.cjs': 'used',
      'cli-table3.cjs': 'used',
    });
  });
});
