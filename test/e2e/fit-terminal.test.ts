// Everything a person reads fits the terminal (issue 46), seen on a real pseudo-terminal of a set
// width (test/helpers/pty-run.py): the help of every command at 80 columns, the sandbox notice, an
// error with its hint, and the tables of `store info`, `config show`, `products`, `fields` and
// `lookalike --evidence` at 50, 80 and 120. Each screen is compared whole with its file under
// test/e2e/screens/ and checked for the three promises: no line wider than the terminal, no word
// broken (the words on the screen are the words of the unwrapped text, in order, or every word of
// every value), and no value cut (no ellipsis). Needs `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { KEYS } from '../helpers/command-cases.js';
import { runInProcess } from '../helpers/in-process.js';
import { type SandboxHandle, sandboxAndDirForTests } from '../helpers/sandbox.js';
import { runOnTerminal, screenText } from '../helpers/terminal.js';

let sandbox: SandboxHandle;
sandboxAndDirForTests('cd-e2e-fit-', { host: '127.0.0.1', companies: 2000 }, (s) => {
  sandbox = s;
});

const homes: string[] = [];
afterAll(() => {
  for (const dir of homes) rmSync(dir, { recursive: true, force: true });
});

/**
 * A home of its own, of a short name of fixed length (mkdtemp's six characters, as short as a
 * person's ~/), so that wrapped paths are stable and a store's path fits 50 columns.
 */
function env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const dir = mkdtempSync('/tmp/cdf-');
  homes.push(dir);
  return {
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    XDG_STATE_HOME: join(dir, 'state'),
    COMPANY_DATA_BASE_URL: sandbox.url,
    COMPANY_DATA_API_KEY: KEYS.full,
    NO_COLOR: '1',
    COLUMNS: undefined,
    PAGER: undefined,
    COMPANY_DATA_PAGER: 'cat',
    ...extra,
  };
}

/**
 * The screen as shown (`raw`), and with what changes from run to run (the home's name, ports, the
 * balance) masked (`text`).
 */
async function screen(
  args: string[],
  columns: number,
  extra: Record<string, string | undefined> = {},
  environment = env(extra),
) {
  const run = await runOnTerminal(args, { columns, rows: 200, env: environment });
  const raw = screenText(run.output);
  const text = raw
    .replaceAll(environment.HOME as string, '/tmp/cdf-XXXXXX')
    .replace(/(127\.0\.0\.1:)\d{5}/g, '$1PORT5')
    .replace(/balance [\d,]+/g, 'balance N');
  return { status: run.status, raw, text };
}

/** The screen's words: what is left between spaces and table borders; `\` continuations dropped. */
function words(text: string): string[] {
  return text.split(/[\s│|┌┐└┘├┤┬┴┼─+]+/).filter((w) => w !== '' && w !== '\\');
}

function expectFits(text: string, columns: number): void {
  for (const line of text.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(columns);
  // No ellipsis but the redacted key's own (`config show`).
  expect(text.replace(/cd_s…\w{4}/g, '')).not.toContain('…');
}

function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    return [path, ...commandPaths(sub, path)];
  });
}

describe('--help of every command at 80 columns', () => {
  const paths = [[], ...commandPaths(buildProgram())];
  it.each(paths.map((p) => [p.join(' ') || '(the program)', p]))('%s', async (name, path) => {
    const { status, text } = await screen([...path, '--help'], 80);
    expect(status).toBe(0);
    expectFits(text, 80);
    // The same words, in the same order, as the help written without a width to fit.
    const unwrapped = await runInProcess([...path, '--help'], { env: { COLUMNS: '100000' } });
    expect(words(text)).toEqual(words(unwrapped.stdout));
    await expect(text).toMatchFileSnapshot(`screens/help-80/${name.replaceAll(' ', '-')}.txt`);
  });
});

describe('talk on stderr at 80 columns', () => {
  it('the sandbox notice: two lines at most, nothing broken', async () => {
    const { status, text } = await screen(['--sandbox', 'me'], 80, { COMPANY_DATA_BASE_URL: undefined });
    expect(status).toBe(0);
    expectFits(text, 80);
    const notice = text.split('\n').slice(0, 2);
    expect(notice[0]).toBe(
      'Using the offline sandbox at http://127.0.0.1:PORT5 (demo key, no real credits).',
    );
    expect(notice[1]).toBe('Sandbox store: /tmp/cdf-XXXXXX/state/company-data/store.sandbox.db');
  });

  it('an error with its hint, wrapped at word boundaries under its indentation', async () => {
    const { status, text } = await screen(['me'], 80, { COMPANY_DATA_API_KEY: undefined });
    expect(status).toBe(3);
    expectFits(text, 80);
    expect(text).toBe(
      [
        'error: No API key (invalid_api_key, HTTP 401)',
        '  No API key configured.',
        '  Replace the key: set COMPANY_DATA_API_KEY, pass --api-key-file, or run',
        '  `company-data config set-key`.',
        '',
      ].join('\n'),
    );
  });
});

/**
 * The pieces of the words of the same output with no width to fit (in-process, a terminal of
 * 100,000 columns, stdout and stderr): what every value looks like whole.
 */
async function wholePieces(
  args: string[],
  environment: Record<string, string | undefined>,
): Promise<string[]> {
  const r = await runInProcess(args, { tty: true, columns: 100_000, env: environment });
  return pieces(`${r.stdout}${r.stderr}`);
}

/** Words cut where a value may continue on the next line: after a `/` or a `,`. */
function pieces(text: string): string[] {
  return words(text.replace(/balance [\d,]+/g, 'balance N')).flatMap((w) =>
    w.split(/(?<=[/,])/).filter((p) => p !== ''),
  );
}

const TABLES: Array<[string, string[]]> = [
  ['store-info', ['store', 'info']],
  ['config-show', ['config', 'show']],
  ['products', ['products']],
  ['fields', ['fields']],
  ['lookalike-evidence', ['lookalike', 'acme-shoes.com', '-k', '3', '--evidence']],
];

describe.each([50, 80, 120])('tables at %i columns: every value whole', (columns) => {
  it.each(TABLES)('%s', async (name, args) => {
    const environment = env();
    const { status, raw, text } = await screen(args, columns, {}, environment);
    expect(status).toBe(0);
    expectFits(text, columns);
    // Every piece of every word of the unwrapped output is on the screen whole: nothing was cut,
    // and nothing broken but after a space, a `,` or a path's `/`.
    const shown = new Set(pieces(raw));
    for (const piece of await wholePieces(args, environment))
      expect(shown.has(piece), `${name} at ${columns}: "${piece}"`).toBe(true);
    await expect(text).toMatchFileSnapshot(`screens/tables-${columns}/${name}.txt`);
  });
});
