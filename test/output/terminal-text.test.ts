// Text from the service on its way to a terminal (issues 28 and 30): C0 and C1 controls (U+009B
// CSI, U+009D OSC, U+009C ST) and bidirectional overrides (U+202E...) never reach a terminal raw,
// in any format: tables strip them, JSON and NDJSON on a terminal escape them (the same value for
// a program), `store export` too; piped, the service's text is written exactly.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createIO } from '../../src/io.js';
import { printJson, printList, printRecord } from '../../src/output/format.js';
import type { Context, Format } from '../../src/types.js';
import { lines } from '../helpers/command-cases.js';
import { FIXED_NOW } from '../helpers/in-process.js';
import { expectStoreCase, KEY_A, SCOPE_PROFILE, type StoreCase } from '../helpers/store-cases.js';

const NAME = 'Evil\x9b2J\x9d0;title\x9c Corp \u202Egnp.exe\u202C \u2066x\u2069';
const ROW = { domain: 'evil.example', company_name: NAME };

function run(format: Format, tty: boolean, print: (ctx: Context) => void): string {
  let text = '';
  const stdout = new Writable({
    write(chunk, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  Object.assign(stdout, { isTTY: tty, columns: 100 });
  const io = createIO({ stdout, stderr: stdout, env: { LANG: 'C.UTF-8', COLUMNS: '100', NO_COLOR: '1' } });
  print({ io, config: { format: { value: format, source: 'flag' }, csvRaw: false } } as unknown as Context);
  return text;
}

describe('service text on a terminal', () => {
  it('a table strips the controls and the overrides', () => {
    expect(run('table', true, (ctx) => printList(ctx, [ROW]))).toBe(
      lines(
        '┌──────────────┬─────────────────────┐',
        '│ domain       │ company name        │',
        '├──────────────┼─────────────────────┤',
        '│ evil.example │ Evil Corp gnp.exe x │',
        '└──────────────┴─────────────────────┘',
      ),
    );
  });

  it('a record as a table strips them too', () => {
    expect(run('table', true, (ctx) => printRecord(ctx, ROW))).toBe(
      lines(
        '┌──────────────┬─────────────────────┐',
        '│ field        │ value               │',
        '├──────────────┼─────────────────────┤',
        '│ domain       │ evil.example        │',
        '│ company_name │ Evil Corp gnp.exe x │',
        '└──────────────┴─────────────────────┘',
      ),
    );
  });

  it('JSON on a terminal escapes them: the same value for a program, nothing for the terminal to run', () => {
    const shown = run('json', true, (ctx) => printList(ctx, [ROW]));
    expect(shown).toBe(
      lines(
        '[',
        '  {',
        '    "domain": "evil.example",',
        '    "company_name": "Evil\\u009b2J\\u009d0;title\\u009c Corp \\u202egnp.exe\\u202c \\u2066x\\u2069"',
        '  }',
        ']',
      ),
    );
    expect(JSON.parse(shown)[0].company_name).toBe(NAME);
  });

  it('NDJSON on a terminal, and a raw document (api), escape them as well', () => {
    const ndjson = run('ndjson', true, (ctx) => printList(ctx, [ROW]));
    expect(ndjson).toBe(
      lines(
        '{"domain":"evil.example","company_name":"Evil\\u009b2J\\u009d0;title\\u009c Corp \\u202egnp.exe\\u202c \\u2066x\\u2069"}',
      ),
    );
    expect(run('json', true, (ctx) => printJson(ctx, ROW))).not.toMatch(
      /[\x80-\x9f\u202a-\u202e\u2066-\u2069]/,
    );
  });

  it('piped, JSON and NDJSON keep the service text exactly', () => {
    expect(run('json', false, (ctx) => printList(ctx, [ROW]))).toBe(`${JSON.stringify([ROW], null, 2)}\n`);
    expect(run('ndjson', false, (ctx) => printList(ctx, [ROW]))).toBe(`${JSON.stringify(ROW)}\n`);
  });
});

const fillEvil: StoreCase['fill'] = async (store) => {
  await store.save(await store.scopeId(SCOPE_PROFILE), 'evil.example', {
    found: true,
    record: ROW,
    credits: 1,
    boughtAt: FIXED_NOW,
    run: null,
  });
};

const EXPORTED = {
  domain: 'evil.example',
  found: true,
  bought_at: '2026-11-24T12:00:00.000Z',
  credits: 1,
  base_url: 'https://api.example.com',
  key: KEY_A,
  products: ['profile'],
  include: null,
  max_credits: null,
  record: ROW,
};

describe('store export', () => {
  it.each<StoreCase>([
    {
      name: 'on a terminal: NDJSON with the controls escaped',
      argv: ['store', 'export'],
      tty: true,
      fill: fillEvil,
      wantCode: 0,
      wantStdout: lines(
        JSON.stringify(EXPORTED).replace(
          /[\x80-\x9f\u202a-\u202e\u2066-\u2069]/g,
          (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
        ),
      ),
      wantStderr: '',
    },
    {
      name: 'piped: the service text exactly',
      argv: ['store', 'export'],
      tty: false,
      fill: fillEvil,
      wantCode: 0,
      wantStdout: lines(JSON.stringify(EXPORTED)),
      wantStderr: '',
    },
  ])('$name', expectStoreCase);
});
