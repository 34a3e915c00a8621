// A one-column input whose first line is read as the column's title gets a note when nothing says
// it is one: it may be a mistyped domain that is then never looked up. Unit cases for the rule,
// and the real binary printing the note (or not) against a sandbox.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doubtfulTitle } from '../../src/csv/domain-columns.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { sandboxAndDirForTests } from '../helpers/sandbox.js';

describe('doubtfulTitle', () => {
  it('names a one-column title that nothing marks as one', () => {
    expect(doubtfulTitle(['acme'])).toBe('acme');
    expect(doubtfulTitle([' Companies '])).toBe('Companies');
  });

  it('says nothing for known names, title-like words, --column, several columns or a plain list', () => {
    for (const title of ['domain', 'Website', 'URL', 'company_domain', 'Company websites', 'Domains', 'Site'])
      expect(doubtfulTitle([title]), title).toBeUndefined();
    expect(doubtfulTitle(['acme'], 'acme')).toBeUndefined();
    expect(doubtfulTitle(['name', 'acme'])).toBeUndefined();
    expect(doubtfulTitle(null)).toBeUndefined();
  });
});

describe('enrich --input with a doubtful first line', () => {
  let sandbox: SandboxHandle;
  let dir: string;
  sandboxAndDirForTests('cd-title-note-', { companies: 50 }, (s, d) => {
    sandbox = s;
    dir = d;
  });

  const enrich = (name: string, text: string, extra: string[] = []) => {
    const input = join(dir, name);
    writeFileSync(input, text);
    return runCli(
      ['--base-url', sandbox.url, 'enrich', '--input', input, '--output', `${input}.out.csv`, ...extra],
      {
        env: {
          COMPANY_DATA_API_KEY: sandbox.keys.full,
          XDG_CONFIG_HOME: join(dir, 'config'),
          XDG_CACHE_HOME: join(dir, 'cache'),
        },
      },
    );
  };

  it('prints a note on stderr naming the line, and still enriches the rest', async () => {
    const r = await enrich('acme.txt', 'acme\nacme-shoes.com\n');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('note: the first line, "acme", was read as the column\'s title');
    expect(r.stderr).toContain('--column "acme"');
  });

  it('says nothing for a titled column or when --column confirms the title', async () => {
    const titled = await enrich('titled.csv', 'Company website\nacme-shoes.com\n');
    expect(titled.code, titled.stderr).toBe(0);
    expect(titled.stderr).not.toContain('note:');
    const confirmed = await enrich('confirmed.txt', 'acme\nacme-shoes.com\n', ['--column', 'acme']);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stderr).not.toContain('note:');
  });
});
