// A one-column input whose first line is read as the column's title gets a note when nothing says
// it is one: it may be a mistyped domain that is then never looked up. Unit cases for the rule,
// and the command printing the note (or not) against a sandbox, run in-process (main() piped).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doubtfulTitle } from '../../src/csv/domain-columns.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { runPiped } from '../helpers/in-process.js';
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
    return runPiped(
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

  /** The run's summary line: one row enriched (the first line was read as the title). */
  const summary = expect.stringMatching(
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ Enriched: 1 row, 1 unique domain \(1 found, 0 not found\), 0 errors, 1 credit charged, balance [\d,]+, [\d.]+s$/,
  );

  it('prints a note on stderr naming the line, and still enriches the rest', async () => {
    const r = await enrich('acme.txt', 'acme\nacme-shoes.com\n');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n')).toEqual([
      'note: the first line, "acme", was read as the column\'s title, not as a domain to look up; put a title line such as "domain" above the domains, or pass --column "acme" if it is the title',
      summary,
      '',
    ]);
  });

  it('says nothing for a titled column or when --column confirms the title', async () => {
    const titled = await enrich('titled.csv', 'Company website\nacme-shoes.com\n');
    expect(titled.code, titled.stderr).toBe(0);
    expect(titled.stderr.split('\n')).toEqual([summary, '']);
    const confirmed = await enrich('confirmed.txt', 'acme\nacme-shoes.com\n', ['--column', 'acme']);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stderr.split('\n')).toEqual([summary, '']);
  });
});
