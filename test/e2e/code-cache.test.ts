// The code caches the build leaves (src/cli-loader.ts, scripts/code-cache.mjs) are used by the
// commands that load their files. V8 refuses a cache made under other flags, and a batch sets two
// V8 flags at run time: these tests fail if one is set before a file it would invalidate loads.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, ROOT } from '../helpers/cli.js';

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

function outcomesOf(args: string[]): Record<string, string> {
  const r = spawnSync(process.execPath, ['--require', preload, BIN, '--sandbox', ...args], {
    encoding: 'utf8',
    cwd: dir,
    env: cleanEnv({ HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_CACHE_HOME: join(dir, 'cache') }),
  });
  expect(r.status).toBe(0);
  const line = r.stderr.split('\n').find((l) => l.startsWith('OUTCOMES '));
  expect(line, r.stderr).toBeDefined();
  return JSON.parse(line!.slice('OUTCOMES '.length)) as Record<string, string>;
}

describe('the code caches of the build', () => {
  it('are used by a batch for the bundle, undici, the suffix list and the CSV parser', () => {
    const input = join(dir, 'in.csv');
    // initech.co.uk needs the public suffix list; the batch goes over undici.
    writeFileSync(input, 'domain\nacme-shoes.com\ninitech.co.uk\nno-such-company.example\n');
    const outcomes = outcomesOf(['--quiet', 'enrich', '--input', input, '--output', join(dir, 'out.csv')]);
    expect(outcomes).toMatchObject({
      'cli.cjs': 'used',
      'undici.cjs': 'used',
      'tldts.cjs': 'used',
      'csv-parse.cjs': 'used',
    });
  });

  it('are used for CSV and table output', () => {
    expect(outcomesOf(['-o', 'csv', 'products'])).toMatchObject({
      'cli.cjs': 'used',
      'csv-stringify.cjs': 'used',
    });
    expect(outcomesOf(['-o', 'table', 'products'])).toMatchObject({
      'cli.cjs': 'used',
      'cli-table3.cjs': 'used',
    });
  });
});
