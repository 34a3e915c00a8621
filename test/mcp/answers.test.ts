// The answer cap and projection of the mcp server (src/mcp/answers.ts), on plain data.
import { describe, expect, it } from 'vitest';
import { fitRows, inToolTerms, MAX_ANSWER_CHARS, problemResult, project } from '../../src/mcp/answers.js';
import { Problem } from '../../src/problem.js';

const build = (rows: unknown[], omitted: number) => ({ rows, omitted });

describe('fitRows', () => {
  it('keeps every row of an answer within the cap', () => {
    const rows = [{ domain: 'a.com' }, { domain: 'b.com' }];
    expect(fitRows(rows, build)).toEqual({ rows, omitted: 0 });
  });

  it('keeps the most leading whole rows that fit, the note included', () => {
    const rows = Array.from({ length: 10 }, (_, i) => ({ domain: `d${i}.com`, pad: 'x'.repeat(80) }));
    const one = JSON.stringify(rows[0]).length + 1;
    const empty = JSON.stringify(build([], 10)).length;
    const limit = empty + 3 * one + 5;
    const fitted = fitRows(rows, build, limit);
    expect(fitted).toEqual({ rows: rows.slice(0, 3), omitted: 7 });
    expect(JSON.stringify(build(fitted.rows, fitted.omitted)).length).toBeLessThanOrEqual(limit);
  });

  it('leaves out a row larger than the whole cap rather than cut it', () => {
    const rows = [{ domain: 'big.com', pad: 'x'.repeat(MAX_ANSWER_CHARS) }, { domain: 'small.com' }];
    expect(fitRows(rows, build)).toEqual({ rows: [], omitted: 2 });
  });
});

describe('project', () => {
  it('keeps domain, the members named to keep, and the fields asked for, in that order', () => {
    const rows = [{ country: 'US', domain: 'a.com', tech: ['x'], found: true, company_name: 'A' }];
    expect(project(rows, ['company_name', 'missing'], ['found'])).toEqual([
      { domain: 'a.com', found: true, company_name: 'A' },
    ]);
    expect(project(rows, undefined)).toEqual(rows);
  });
});

describe('problemResult', () => {
  it('is a tool error whose text and structured content carry the code, title, detail and remedy', () => {
    const problem = new Problem({ code: 'invalid_filter', detail: 'no filter "colour"', status: 400 });
    const result = problemResult(problem, { caps: { session: null, month: null } });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: 'text',
        text: `${problem.title} (invalid_filter): no filter "colour"\nWhat to do: Check filter names and values with the fields tool.`,
      },
    ]);
    expect(result.structuredContent).toEqual({
      error: {
        code: 'invalid_filter',
        title: problem.title,
        detail: 'no filter "colour"',
        remedy: 'Check filter names and values with the fields tool.',
        status: 400,
        retryable: false,
      },
      caps: { session: null, month: null },
    });
  });
});

describe('inToolTerms', () => {
  it("names the tools' arguments and tools where a command names its options and commands", () => {
    expect(
      inToolTerms(
        'add it with --products profile,tech; drop it from --include; check --filter names with `company-data fields --filters`; the balance: `company-data me`; --exclude-domain',
      ),
    ).toBe(
      'add it with products profile,tech; drop it from include; check filters names with the fields tool; the balance: the account tool; exclude_domains',
    );
    expect(inToolTerms('--allow-spend 5 and --budget-month 10 stay')).toBe(
      '--allow-spend 5 and --budget-month 10 stay',
    );
  });
});
