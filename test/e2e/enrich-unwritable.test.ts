// A run whose output cannot be written: a reader that went away (`| head -n 2`), a full stdout
// (/dev/full), a full filesystem under the output and the result store (a small tmpfs). A batch
// then stops sending lookups, keeps every answer it bought in the store, says so in one problem and
// exits 8; the same command resumes and pays only for the rest. One-request commands stay quiet
// when their reader goes away, and exit 8 with one problem when stdout is full.
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { type RunResult, runCli, runShell, startCli } from '../helpers/cli.js';
import { cannotRunHere } from '../helpers/skips.js';
import { integrityOf, storedDomains } from '../helpers/store.js';

const ROWS = 300;
/** A device that refuses every write with ENOSPC (Linux, the BSDs). */
const hasDevFull = existsSync('/dev/full');
const noDevFull = cannotRunHere('devfull', hasDevFull ? undefined : 'this system has no /dev/full');

let sandbox: SandboxHandle;
let dir: string;
let reference: Buffer;
let referenceCharge: number;

/** Writes the test input (found domains, one a row) under `name` in the scratch directory. */
function writeInput(name: string): string {
  const domains = sandbox.dataset.companies.slice(20, 20 + ROWS).map((c) => c.domain);
  const path = join(dir, name);
  writeFileSync(path, `name,domain\n${domains.map((d, i) => `row ${i},${d}`).join('\n')}\n`);
  return path;
}

beforeAll(async () => {
  // A little latency: the answers to 300 rows arrive over half a second or more, so a run that
  // did not stop at the failure would buy many more of them.
  sandbox = await startSandbox({ port: 0, companies: 2000, latencyMs: 10 });
  dir = mkdtempSync(join(tmpdir(), 'cd-enrich-unwritable-'));
  const before = sandbox.balances().full;
  const r = await runCli(enrichArgs(writeInput('reference.csv'), join(dir, 'reference.out.csv')), {
    env: env(join(dir, 'reference.db')),
  });
  expect(r.code, r.stderr).toBe(0);
  reference = readFileSync(join(dir, 'reference.out.csv'));
  referenceCharge = before - sandbox.balances().full;
});

afterAll(async () => {
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Each scenario names its store: what one bought must not serve another. */
const env = (store: string) => ({
  COMPANY_DATA_STORE: store,
  COMPANY_DATA_API_KEY: sandbox.keys.full,
  XDG_CONFIG_HOME: join(dir, 'config'),
  XDG_CACHE_HOME: join(dir, 'cache'),
});

function enrichArgs(input: string, output?: string): string[] {
  return ['--base-url', sandbox.url, 'enrich', '--input', input, ...(output ? ['--output', output] : [])];
}

const domainRequests = () => sandbox.requests().filter((r) => r.path.startsWith('/api/domains/'));
/** Domains the sandbox answered (and charged) since the log held `from` lookups. */
const answeredSince = (from: number) =>
  domainRequests()
    .slice(from)
    .filter((r) => r.status === 200)
    .map((r) => decodeURIComponent(r.path.slice('/api/domains/'.length)));

/** The one problem on stderr (JSON, as stdout is no terminal), after checking there is no stack. */
function problemOf(stderr: string): Record<string, string> {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toContain('internal_bug');
  const lines = stderr.trim().split('\n');
  const problems = lines.filter((line) => line.startsWith('{'));
  expect(problems, stderr).toHaveLength(1);
  return JSON.parse(problems[0]);
}

/** Runs the binary with its stdout on an open file descriptor (a device, say). */
function runWithStdout(args: string[], fd: number, store: string): Promise<RunResult> {
  return runCli(args, { env: env(store), input: 'ignore', stdout: fd, timeoutMs: 40_000 });
}

/**
 * After a failed first run: what it bought is in the store (all of it unless `mayLose`), and the
 * same command buys only the rest (at the sandbox's own pace: queued delays are dropped) and writes
 * what an uninterrupted run writes (to stdout unless `output`). Returns the answers bought twice.
 */
async function expectResumeWithoutPayingTwice(
  args: string[],
  store: string,
  firstFrom: number,
  options: { output?: string; mayLose?: boolean } = {},
): Promise<number> {
  sandbox.faults.clear();
  const bought = answeredSince(firstFrom);
  const kept = storedDomains(store);
  const lost = bought.filter((domain) => !kept.has(domain));
  if (!options.mayLose) expect(lost).toEqual([]);
  const from = domainRequests().length;
  const r = await runCli(args, { env: env(store) });
  expect(r.code, r.stderr).toBe(0);
  for (const domain of answeredSince(from)) expect(kept.has(domain), domain).toBe(false);
  const written = options.output ? readFileSync(options.output) : Buffer.from(r.stdout);
  expect(written.equals(reference)).toBe(true);
  // Each domain bought once, but for those the store could not hold: bought once more.
  expect(answeredSince(firstFrom)).toHaveLength(ROWS + lost.length);
  return lost.length;
}

describe('a batch whose stdout cannot be written', () => {
  it('| head -n 2: stops buying, keeps every answer, exits 8 with one problem; a re-run pays for the rest', async () => {
    const input = writeInput('piped.csv');
    const store = join(dir, 'piped.db');
    const before = sandbox.balances().full;
    const from = domainRequests().length;
    // Lookups of 50 ms while the reader goes away: at most 160 a second, so however late `head`
    // exits on a busy machine, a third of the rows take more than half a second.
    sandbox.faults.add('delay:40', { path: '/api/domains/', times: ROWS });
    // The sandbox answers from this process: the shell must not block it (no spawnSync). Under
    // pipefail the pipeline exits as company-data did (head exits 0).
    const r = await runShell(`company-data ${enrichArgs(input).join(' ')} | head -n 2`, {
      env: env(store),
      input: 'ignore',
      timeoutMs: 40_000,
      pipefail: true,
    });
    expect(r.stdout.split('\n')[0]).toMatch(/^name,domain,found,/);
    expect(r.code, r.stderr).toBe(8);
    const problem = problemOf(r.stderr);
    expect(problem.code).toBe('output_closed');
    expect(problem.detail).toContain('stdout');
    expect(problem.hint).toContain(`Resume with: company-data ${enrichArgs(input).join(' ')}`);
    // The reader was gone after a few rows: the run stopped sending long before the end.
    expect(answeredSince(from).length).toBeLessThan(ROWS / 3);
    await expectResumeWithoutPayingTwice(enrichArgs(input), store, from);
    expect(before - sandbox.balances().full).toBe(referenceCharge);
  });

  it.skipIf(noDevFull)(
    '> /dev/full: stops buying, keeps every answer, exits 8 naming the cause; a re-run pays for the rest',
    async () => {
      const input = writeInput('full.csv');
      const store = join(dir, 'full.db');
      const from = domainRequests().length;
      const full = openSync('/dev/full', 'w');
      let r: RunResult;
      try {
        r = await runWithStdout(enrichArgs(input), full, store);
      } finally {
        closeSync(full);
      }
      expect(r.code, r.stderr).toBe(8);
      const problem = problemOf(r.stderr);
      expect(problem.code).toBe('write_failed');
      expect(problem.detail).toContain('no space left on device: stdout');
      expect(problem.hint).toContain('Resume with: company-data');
      expect(answeredSince(from).length).toBeLessThan(ROWS / 3);
      await expectResumeWithoutPayingTwice(enrichArgs(input), store, from);
    },
  );
});

describe('a one-request command whose stdout cannot be written', () => {
  it('stays quiet when its reader went away, with the exit code of the command', async () => {
    const run = startCli(['--base-url', sandbox.url, 'enrich', 'acme-shoes.com'], {
      env: env(join(dir, 'one-request.db')),
      input: 'ignore',
    });
    run.child.stdout?.destroy(); // the reader is gone before the command writes a byte
    const { code, stderr } = await run.done;
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it.skipIf(noDevFull)('exits 8 with one problem when stdout is full', async () => {
    const full = openSync('/dev/full', 'w');
    let r: RunResult;
    try {
      r = await runWithStdout(
        ['--base-url', sandbox.url, 'enrich', 'acme-shoes.com'],
        full,
        join(dir, 'one-request-full.db'),
      );
    } finally {
      closeSync(full);
    }
    expect(r.code, r.stderr).toBe(8);
    const problem = problemOf(r.stderr);
    expect(problem).toMatchObject({ code: 'write_failed', detail: 'no space left on device: stdout' });
  });
});

/** Whether this machine lets us mount a tmpfs (root on Linux, outside most containers' limits). */
function probeTmpfs(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  const probe = mkdtempSync(join(tmpdir(), 'cd-tmpfs-probe-'));
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], {
      encoding: 'utf8',
    });
    if (mounted.status !== 0)
      return `mount -t tmpfs failed: ${(mounted.stderr || mounted.error?.message) ?? ''}`;
    spawnSync('umount', [probe]);
    return undefined;
  } catch (error) {
    return String(error);
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

const noTmpfs = probeTmpfs();

const KIB = 1024;
const MOUNT_KIB = 8 * 1024;
// The output (300 rows) takes about 25 KiB, the store about 150 KiB and its WAL more while the run
// goes: each layout leaves room for a part of what lands on the small filesystem.
const layouts = [
  { name: 'the output', output: true, store: false, room: 8 * KIB },
  { name: 'the store', output: false, store: true, room: 150 * KIB },
  { name: 'the output and the store', output: true, store: true, room: 250 * KIB },
  // Under a month cap every lookup also holds its worst case in the store first.
  { name: 'the store under --budget-month', output: false, store: true, room: 150 * KIB, month: true },
];

// The full disk is a real one: a tmpfs of 8 MiB, most of it taken by a filler file, under the
// output or the store or both. CI without the right to mount skips this (the reason is printed).
describe.skipIf(cannotRunHere('mount', noTmpfs))('a batch on a full filesystem', () => {
  let mount: string;
  beforeAll(() => {
    mount = join(dir, 'small');
    mkdirSync(mount);
    // SQLite's write-ahead log grows to about 4 MiB before it is checkpointed and reused: a store
    // needs that much room to work at all once space is freed.
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${MOUNT_KIB}k`, 'tmpfs', mount], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
  });
  afterAll(() => {
    if (mount) spawnSync('umount', [mount]);
  });

  it.each(layouts)(
    '$name: names the path and the cause, exits 8, keeps the store whole, resumes once space is freed',
    async (layout) => {
      const name = `disk-${layout.output ? 'o' : ''}${layout.store ? 's' : ''}${'month' in layout ? 'm' : ''}`;
      const input = writeInput(`${name}.csv`);
      const output = join(layout.output ? mount : dir, `${name}.out.csv`);
      const store = join(layout.store ? mount : dir, `${name}.db`);
      const args = [...enrichArgs(input, output), ...('month' in layout ? ['--budget-month', '100000'] : [])];
      for (const file of readdirSync(mount)) rmSync(join(mount, file));
      const filler = join(mount, 'filler');
      writeFileSync(filler, Buffer.alloc(MOUNT_KIB * KIB - layout.room));
      const from = domainRequests().length;
      const r = await runCli(args, { env: env(store) });
      expect(r.code, r.stderr).toBe(8);
      const problem = problemOf(r.stderr);
      expect(problem.code).toBe('write_failed');
      expect(problem.detail, r.stderr).toContain('; the run stopped sending lookups, and ');
      const onMount = [layout.output && output, layout.store && store].filter(Boolean);
      expect(onMount.map((path) => `no space left on device: ${path};`)).toContain(
        problem.detail.slice(0, problem.detail.indexOf(';') + 1),
      );
      expect(problem.hint).toContain(`Resume with: company-data ${args.join(' ')}`);
      expect(existsSync(output)).toBe(false);
      expect(readdirSync(mount).filter((file) => file.endsWith('.tmp'))).toEqual([]);
      expect(answeredSince(from).length).toBeLessThan(ROWS);
      expect(integrityOf(store)).toBe('ok');

      rmSync(filler);
      // A store that fills up cannot keep the answer whose write failed: the problem says so, and
      // it is bought again. Answers the store holds never are.
      const lost = await expectResumeWithoutPayingTwice(args, store, from, {
        output,
        mayLose: layout.store,
      });
      const kept = `the answers bought so far are kept in the store (${store})`;
      if (lost > 0)
        expect(problem.detail).toContain(
          `${kept}, except ${lost} that did not fit (${lost === 1 ? 'it' : 'they'} will be bought again)`,
        );
      else expect(problem.detail.endsWith(kept)).toBe(true);
    },
  );
});
