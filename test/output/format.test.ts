import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { createIO } from '../../src/io.js';
import { cellText, printCredits, printJson, printList, printRecord } from '../../src/output/format.js';
import { storeHandle } from '../../src/store/handle.js';
import type { Client, Context, Format } from '../../src/types.js';

interface Fake {
  ctx: Context;
  stdout: () => string;
  stderr: () => string;
}

function sink(tty: boolean): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  Object.assign(stream, { isTTY: tty });
  return { stream, text: () => text };
}

async function fakeContext(
  format: Format,
  opts: { tty?: boolean; columns?: number; lang?: string; quiet?: boolean; csvRaw?: boolean } = {},
): Promise<Fake> {
  const out = sink(opts.tty ?? false);
  const err = sink(opts.tty ?? false);
  const env = { COLUMNS: String(opts.columns ?? 80), LANG: opts.lang ?? 'en_US.UTF-8', TERM: 'xterm' };
  const io = createIO({ stdout: out.stream, stderr: err.stream, env, quiet: opts.quiet });
  const config = await resolveConfig(
    { format, csvRaw: opts.csvRaw },
    { XDG_CONFIG_HOME: '/nonexistent-company-data-test' },
    false,
  );
  const ctx: Context = {
    io,
    config,
    argv: [],
    env,
    now: Date.now,
    command: 'test',
    store: storeHandle(false, [], { env: {} }),
    get client(): Client {
      throw new Error('output tests make no requests');
    },
  };
  return { ctx, stdout: out.text, stderr: err.text };
}

const ESC = '\x1b';
const rows = [
  { id: 'profile', credit_units: 1, fields: ['domain', 'country'], note: null },
  { id: 'tech', credit_units: 1, fields: [], extra: true },
];

describe('cellText', () => {
  it.each([
    [null, 'table', '—'],
    [undefined, 'table', '—'],
    [null, 'csv', ''],
    [['a', 'b'], 'table', 'a, b'],
    [['a', 'b'], 'csv', 'a;b'],
    [true, 'table', 'yes'],
    [false, 'csv', 'false'],
    [-12, 'csv', '-12'],
    [{ a: 1 }, 'table', '{"a":1}'],
    ['two\nlines\tand tab', 'table', 'two lines and tab'],
    ['two\nlines', 'csv', 'two\nlines'],
    [`Acme ${ESC}]0;pwned\x07${ESC}[31mRed${ESC}[0m`, 'table', 'Acme Red'],
    [`Acme ${ESC}]0;pwned\x07Shoes`, 'csv', 'Acme Shoes'],
  ] as const)('%j as %s -> %j', (value, mode, expected) => {
    expect(cellText(value, mode)).toBe(expected);
  });

  it('uses an ASCII placeholder when the terminal is not Unicode', () => {
    expect(cellText(null, 'table', { unicode: false })).toBe('-');
  });
});

describe('printList', () => {
  it('json: one array document with the whole rows', async () => {
    const f = await fakeContext('json');
    printList(f.ctx, rows, { columns: ['id'] });
    expect(JSON.parse(f.stdout())).toEqual(rows);
    expect(f.stderr()).toBe('');
  });

  it('ndjson: one object per line', async () => {
    const f = await fakeContext('ndjson');
    printList(f.ctx, rows);
    const lines = f.stdout().trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(rows);
  });

  it('csv: header row from the given columns, arrays joined with ;', async () => {
    const f = await fakeContext('csv');
    printList(f.ctx, rows, { columns: ['id', 'fields', 'note'] });
    expect(f.stdout()).toBe('id,fields,note\nprofile,domain;country,\ntech,,\n');
  });

  it('table: default columns are the union of keys, headers humanised, nulls shown as a dash', async () => {
    const f = await fakeContext('table');
    printList(f.ctx, rows);
    const out = f.stdout();
    expect(out).toContain('┌');
    expect(out).toMatch(/id\s+│ credit units │ fields\s+│ note │ extra/);
    expect(out).toContain('domain, country');
    expect(out).toContain('—');
    expect(out).not.toContain(ESC);
  });

  it('table: colours headers only when colour is on', async () => {
    const coloured = await fakeContext('table', { tty: true });
    printList(coloured.ctx, rows);
    expect(coloured.stdout()).toContain(`${ESC}[1;36mid`);
    const plain = await fakeContext('table', { tty: false });
    printList(plain.ctx, rows);
    expect(plain.stdout()).not.toContain(ESC);
  });

  it('table: ASCII borders when the locale is not UTF-8', async () => {
    const f = await fakeContext('table', { lang: 'C' });
    printList(f.ctx, rows);
    expect(f.stdout()).toMatch(/^\+-/);
    expect(f.stdout()).not.toMatch(/[┌│—]/);
  });

  it('says the empty message on stderr and prints no table', async () => {
    const f = await fakeContext('table');
    printList(f.ctx, [], { emptyMessage: 'Nothing here.' });
    expect(f.stdout()).toBe('');
    expect(f.stderr()).toBe('Nothing here.\n');
  });

  it('json with no rows is still a document', async () => {
    const f = await fakeContext('json');
    printList(f.ctx, []);
    expect(JSON.parse(f.stdout())).toEqual([]);
  });

  it('strips escape sequences from table and csv, escapes them in json', async () => {
    const record = { domain: 'escape-test.com', company_name: `Evil ${ESC}]0;pwned\x07${ESC}[31mCorp` };
    for (const format of ['table', 'csv'] as const) {
      const f = await fakeContext(format);
      printList(f.ctx, [record]);
      expect(f.stdout()).toContain('Evil');
      expect(f.stdout()).not.toContain(ESC);
      expect(f.stdout()).not.toContain('\x07');
    }
    const j = await fakeContext('json');
    printList(j.ctx, [record]);
    expect(j.stdout()).not.toContain(ESC);
    expect(j.stdout()).toContain('\\u001b');
    expect(JSON.parse(j.stdout())[0].company_name).toBe(record.company_name);
  });
});

describe('printRecord', () => {
  const account = { plan: 'pro', balance: 5, capabilities: ['search', 'domains'] };

  it('table: a field / value table under its title', async () => {
    const f = await fakeContext('table');
    printRecord(f.ctx, account, { title: 'Account' });
    const lines = f.stdout().split('\n');
    expect(lines[0]).toBe('Account');
    expect(f.stdout()).toMatch(/field\s+│ value/);
    expect(f.stdout()).toMatch(/capabilities │ search, domains/);
  });

  it('json, ndjson and csv carry the object', async () => {
    const j = await fakeContext('json');
    printRecord(j.ctx, account);
    expect(JSON.parse(j.stdout())).toEqual(account);
    const n = await fakeContext('ndjson');
    printRecord(n.ctx, account);
    expect(n.stdout()).toBe(`${JSON.stringify(account)}\n`);
    const c = await fakeContext('csv');
    printRecord(c.ctx, account);
    expect(c.stdout()).toBe('plan,balance,capabilities\npro,5,search;domains\n');
  });
});

describe('printJson', () => {
  it('pretty in json, one line per element in ndjson', async () => {
    const j = await fakeContext('json');
    printJson(j.ctx, [{ a: 1 }, { a: 2 }]);
    expect(j.stdout()).toBe('[\n  {\n    "a": 1\n  },\n  {\n    "a": 2\n  }\n]\n');
    const n = await fakeContext('ndjson');
    printJson(n.ctx, [{ a: 1 }, { a: 2 }]);
    expect(n.stdout()).toBe('{"a":1}\n{"a":2}\n');
    const one = await fakeContext('ndjson');
    printJson(one.ctx, { a: 1 });
    expect(one.stdout()).toBe('{"a":1}\n');
  });
});

describe('printCredits', () => {
  it('one stderr line in table format, with thousands separators', async () => {
    const f = await fakeContext('table');
    printCredits(f.ctx, { charged: 2, remaining: 999_998 });
    expect(f.stderr()).toBe('Credits: charged 2, balance 999,998\n');
    expect(f.stdout()).toBe('');
  });

  it('omits what the server did not send, and says nothing when it sent neither', async () => {
    const f = await fakeContext('table');
    printCredits(f.ctx, { remaining: 10 });
    printCredits(f.ctx, {});
    expect(f.stderr()).toBe('Credits: balance 10\n');
  });

  it('is silent for scripts and with --quiet', async () => {
    for (const format of ['json', 'ndjson', 'csv'] as const) {
      const f = await fakeContext(format);
      printCredits(f.ctx, { charged: 1, remaining: 2 });
      expect(f.stderr()).toBe('');
    }
    const q = await fakeContext('table', { quiet: true });
    printCredits(q.ctx, { charged: 1, remaining: 2 });
    expect(q.stderr()).toBe('');
  });
});
