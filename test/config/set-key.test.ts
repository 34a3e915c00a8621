import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSet, runSetKey, runUnset } from '../../src/commands/config.js';
import { createIO } from '../../src/io.js';
import { Problem } from '../../src/problem.js';

const KEY = 'cd_sandbox_full_7f3a9c2e';
let home: string;
let env: NodeJS.ProcessEnv;
let configPath: string;

function fakeIO(input: string) {
  let stderr = '';
  const io = createIO({
    stdin: Readable.from([input]),
    stdout: new Writable({ write: (_c, _e, done) => done() }),
    stderr: new Writable({
      write(chunk, _e, done) {
        stderr += chunk.toString();
        done();
      },
    }),
    env: {},
  });
  return { io, stderr: () => stderr };
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'cd-setkey-'));
  env = { XDG_CONFIG_HOME: home };
  configPath = join(home, 'company-data', 'config.json');
});

afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

describe('config set-key (stdin piped)', () => {
  it('writes the key atomically into a 0600 file in a 0700 directory', async () => {
    const { io, stderr } = fakeIO(`${KEY}\n`);
    await runSetKey(io, env);
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({ api_key: KEY });
    expect(statSync(configPath).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'company-data')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(home, 'company-data'))).toEqual(['config.json']);
    expect(stderr()).toContain('cd_s…9c2e');
    expect(stderr()).not.toContain(KEY);
  });

  it('keeps the other settings and tightens a loose file', async () => {
    mkdirSync(join(home, 'company-data'), { recursive: true });
    writeFileSync(configPath, JSON.stringify({ format: 'csv', api_key: 'old_key_000000' }), { mode: 0o644 });
    await runSetKey(fakeIO(KEY).io, env);
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({ format: 'csv', api_key: KEY });
    expect(statSync(configPath).mode & 0o777).toBe(0o600);
  });

  it.each(['', '  \n', 'two words'])('refuses %j with a usage error and writes nothing', async (input) => {
    const error = await runSetKey(fakeIO(input).io, env).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Problem);
    expect((error as Problem).exitCode).toBe(2);
    expect(() => statSync(configPath)).toThrow();
  });
});

describe('config set / unset', () => {
  it('stores validated settings and removes them again', async () => {
    await runSet(fakeIO('').io, env, 'timeout', '2.5');
    await runSet(fakeIO('').io, env, 'format', 'ndjson');
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({ timeout: 2.5, format: 'ndjson' });
    await runUnset(fakeIO('').io, env, 'format');
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({ timeout: 2.5 });
  });

  it('refuses unknown names and bad values', async () => {
    const unknown = await runSet(fakeIO('').io, env, 'api-key', KEY).catch((e: unknown) => e);
    expect((unknown as Problem).code).toBe('usage_error');
    const bad = await runSet(fakeIO('').io, env, 'retries', '42').catch((e: unknown) => e);
    expect((bad as Problem).code).toBe('usage_error');
    expect((bad as Problem).detail).toContain('config set retries');
  });
});
