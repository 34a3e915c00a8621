import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv, ROOT, runCli } from '../helpers/cli.js';

const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8'));

describe('company-data basics', () => {
  it('prints the package version', async () => {
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('--version with stdout closed, or read by no one, is no error', () => {
    // It writes to file descriptor 1 itself (src/version.ts): EBADF and EPIPE are its to handle.
    for (const redirect of ['>&-', '| true']) {
      const script = `"${process.execPath}" "${BIN}" --version ${redirect}; echo "\${PIPESTATUS[0]}"`;
      const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', env: cleanEnv() });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe('0');
    }
  });

  it('lists every command in --help', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const cmd of [
      'enrich',
      'search',
      'breakdown',
      'lookalike',
      'products',
      'fields',
      'errors',
      'me',
      'sandbox',
      'config',
    ]) {
      expect(r.stdout).toMatch(new RegExp(`^  ${cmd}\\b`, 'm'));
    }
  });

  it('exits 2 with a message on an unknown command', async () => {
    const r = await runCli(['bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'bogus'");
    expect(r.stdout).toBe('');
  });
});
