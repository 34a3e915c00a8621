// `company-data breakdown` by the real binary on a pseudo-terminal: bars scaled to its width, and
// # bars where it is not Unicode. The numbers: test/commands/breakdown-counts.test.ts.
import { describe, expect, it } from 'vitest';
import { startInTerminal } from '../helpers/cli.js';
import { serviceEnvironment } from '../helpers/command-cases.js';
import { type SandboxHandle, sandboxAndDirForTests } from '../helpers/sandbox.js';

let sandbox: SandboxHandle;
let dir: string;
sandboxAndDirForTests('cd-breakdown-tty-', { companies: 2000 }, (s, d) => {
  sandbox = s;
  dir = d;
});

const env = () => ({ ...serviceEnvironment(dir, sandbox.url), LANG: 'C.UTF-8' });

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** Runs the binary in a real pseudo-terminal of the given width; returns its lines, escapes removed. */
async function inTerminal(columns: number, args: string[]): Promise<string[]> {
  const { stdout } = await startInTerminal(['--base-url', sandbox.url, ...args], { env: env(), columns })
    .done;
  return stdout
    .replace(ANSI, '')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');
}

describe('breakdown picture in a terminal', () => {
  it('scales the bars with the width and keeps every line within it', async () => {
    const args = ['-q', 'breakdown', 'country', 'shoes', '--limit', '5'];
    const narrow = await inTerminal(60, args);
    const wide = await inTerminal(120, args);
    for (const [lines, width] of [
      [narrow, 60],
      [wide, 120],
    ] as const) {
      expect(lines[0]).toMatch(/shoes.*: [\d,]+ compan/);
      expect(lines[1]).toMatch(/^country coverage: [\d.]+% \([\d,]+ with a value, [\d,]+ missing\)$/);
      for (const line of lines) expect([...line].length).toBeLessThanOrEqual(width);
    }
    const bar = (line: string) => (line.match(/[█▏▎▍▌▋▊▉]+$/) ?? [''])[0].length;
    const narrowBars = narrow.filter((l) => bar(l) > 0);
    const wideBars = wide.filter((l) => bar(l) > 0);
    expect(narrowBars.length).toBeGreaterThanOrEqual(5);
    expect(wideBars.length).toBe(narrowBars.length);
    // The largest bucket's bar fills the rest of the line: 60 columns more room, 60 cells longer.
    const longest = (lines: string[]) => Math.max(...lines.map(bar));
    expect(longest(wideBars) - longest(narrowBars)).toBe(60);
    expect(Math.max(...wideBars.map((l) => [...l].length))).toBe(120);
    expect(Math.max(...narrowBars.map((l) => [...l].length))).toBe(60);
  });

  it('draws # bars when the terminal is not Unicode', async () => {
    const ascii = await startInTerminal(
      ['--base-url', sandbox.url, '-q', 'breakdown', 'country', '--limit', '3'],
      {
        env: { ...env(), LANG: 'C', LC_ALL: 'C' },
        columns: 80,
      },
    ).done;
    const text = ascii.stdout.replace(ANSI, '');
    expect(text).toMatch(/#{5,}/);
    expect(text).not.toContain('█');
  });
});
