// src/output/wrap.ts: text fitted at word boundaries, never inside a word, a quoted command or a
// shell word; help prose refilled, examples continued with ` \`.
import { describe, expect, it } from 'vitest';
import { reflowHelpText, wrapCommandLine, wrapLine } from '../../src/output/wrap.js';

describe('wrapLine', () => {
  it("breaks at spaces under the line's own indentation, never inside a word", () => {
    expect(wrapLine('  one two three four five six', 14)).toEqual([
      '  one two',
      '  three four',
      '  five six',
    ]);
    expect(wrapLine('a supercalifragilistic word', 10)).toEqual(['a', 'supercalifragilistic', 'word']);
  });

  it('keeps a `quoted command` and a bare command to the end of the line in one piece', () => {
    expect(wrapLine('or run `company-data config set-key` now', 20)).toEqual([
      'or run',
      '`company-data config set-key`',
      'now',
    ]);
    expect(wrapLine('what company-data reads and writes', 20)).toEqual([
      'what company-data',
      'reads and writes',
    ]);
    expect(wrapLine('Resume with: company-data enrich --input a.csv', 20)).toEqual([
      'Resume with:',
      'company-data enrich --input a.csv',
    ]);
  });

  it('leaves a line that fits alone', () => {
    expect(wrapLine('short', 80)).toEqual(['short']);
  });
});

describe('wrapCommandLine', () => {
  it('continues with ` \\` on an indented line, never inside quotes', () => {
    expect(wrapCommandLine('  $ company-data search --filters \'{"a": ["b c"]}\' --limit 5', 40)).toEqual([
      '  $ company-data search --filters \\',
      '        \'{"a": ["b c"]}\' --limit 5',
    ]);
  });
});

describe('reflowHelpText', () => {
  it('refills prose, keeps headings and indented lines, joins a command continued by hand', () => {
    const text = [
      '',
      'One two three',
      'four five.',
      '',
      'Examples:',
      '  $ company-data a b \\',
      '      c d',
    ].join('\n');
    expect(reflowHelpText(text, 22)).toBe(
      ['', 'One two three four', 'five.', '', 'Examples:', '  $ company-data a b \\', '        c d'].join(
        '\n',
      ),
    );
    expect(reflowHelpText(text, 80)).toBe(
      ['', 'One two three four five.', '', 'Examples:', '  $ company-data a b c d'].join('\n'),
    );
  });
});
