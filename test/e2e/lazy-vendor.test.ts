// The heavier dependencies (dist/vendor/*.cjs) load where the code first needs them, so a command
// that does not use one never pays for it. Each test runs a copy of the build with files removed:
// a command that still works never loaded them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, copyBuild } from '../helpers/cli.js';

let dir: string;
let app: string;
let bin: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cd-lazy-vendor-'));
  app = join(dir, 'app');
  bin = copyBuild(app);
  rmSync(join(app, 'dist/vendor/csv-stringify.cjs'));
  rmSync(join(app, 'dist/vendor/cli-table3.cjs'));
  rmSync(join(app, 'dist/vendor/csv-parse.cjs'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]) {
  return spawnSync(process.execPath, [bin, '--sandbox', ...args], {
    encoding: 'utf8',
    env: cleanEnv({ HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_CACHE_HOME: join(dir, 'cache') }),
  });
}

describe('a command loads neither csv-stringify nor cli-table3 unless it writes CSV or a table', () => {
  it('writes JSON without them', () => {
    const r = run(['-o', 'json', 'products']);
    expect(r.stderr).not.toContain('Cannot find module');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).map((p: { id: string }) => p.id)).toContain('profile');
  });

  it('needs csv-stringify for CSV (so the copy above really lacks it)', () => {
    const r = run(['-o', 'csv', 'products']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('csv-stringify');
  });
});

describe('a batch loads csv-parse only for an input with quoting', () => {
  const batch = (content: string) => {
    const input = join(dir, 'in.csv');
    writeFileSync(input, content);
    const output = join(dir, 'out.csv');
    rmSync(output, { force: true });
    return { result: run(['--quiet', 'enrich', '--input', input, '--output', output, '--fresh']), output };
  };

  it('reads an input without a quote without it', () => {
    const { result, output } = batch('domain,note\r\nacme-shoes.com,first\r\n\r\ninitech.co.uk,second\r\n');
    expect(result.stderr).not.toContain('csv-parse');
    expect(result.status).toBe(0);
    const lines = readFileSync(output, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^acme-shoes\.com,first,/);
    expect(lines[2]).toMatch(/^initech\.co\.uk,second,/);
  });

  it('needs it from the first quote on (so the copy above really lacks it)', () => {
    const { result } = batch('domain,note\nacme-shoes.com,first\ninitech.co.uk,"second, quoted"\n');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('csv-parse');
  });
});
