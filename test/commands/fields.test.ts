// `fields`: the fields catalog as a table (filter summary, facet, credits), as received piped, the
// CSV columns, the selections (--product, --facets), and an empty selection.
import { describe, it } from 'vitest';
import { type CommandCase, expectCase, lines, usageLine } from '../helpers/command-cases.js';

const lead = (name: string, description: string) => ({
  name,
  product: 'leads',
  type: 'string',
  description,
  filter: null,
  facet: false,
  billing: { product: 'leads', credit_units: 5, charged: 'when the product returns data' },
  capabilities: ['domains'],
  plans: ['pro'],
});

const LEADS = [
  lead('lead_name', 'Name of a decision maker'),
  lead('lead_title', "The decision maker's job title"),
  lead('lead_email', "The decision maker's e-mail address"),
];

const cases: CommandCase[] = [
  {
    name: 'one product on a terminal: the filter as "enum (N)", "—" where a field cannot filter',
    argv: ['fields', '--product', 'tech'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌──────────────────┬─────────┬───────────┬───────┬─────────┬────────────────────────────┬───────┐',
      '│ name             │ product │ filter    │ facet │ credits │ capabilities               │ plans │',
      '├──────────────────┼─────────┼───────────┼───────┼─────────┼────────────────────────────┼───────┤',
      '│ primary_platform │ tech    │ enum (10) │ yes   │ 1       │ domains, search, lookalike │ pro   │',
      '│ tech             │ tech    │ enum (54) │ no    │ 1       │ domains, search, lookalike │ pro   │',
      '│ tech_count       │ tech    │ —         │ no    │ 1       │ domains, search, lookalike │ pro   │',
      '└──────────────────┴─────────┴───────────┴───────┴─────────┴────────────────────────────┴───────┘',
    ),
    wantStderr: '',
  },
  {
    name: 'the facets on a terminal: the four fields breakdown accepts',
    argv: ['fields', '--facets'],
    tty: true,
    wantCode: 0,
    wantStdout: lines(
      '┌──────────────────┬─────────┬───────────┬───────┬─────────┬───────────────────────────┬───────────┐',
      '│ name             │ product │ filter    │ facet │ credits │ capabilities              │ plans     │',
      '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
      '│ country          │ profile │ enum (25) │ yes   │ 1       │ domains, search,          │ free, pro │',
      '│                  │         │           │       │         │ lookalike                 │           │',
      '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
      '│ site_category    │ profile │ enum (16) │ yes   │ 1       │ domains, search,          │ free, pro │',
      '│                  │         │           │       │         │ lookalike                 │           │',
      '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
      '│ employee_range   │ profile │ enum (6)  │ yes   │ 1       │ domains, search,          │ free, pro │',
      '│                  │         │           │       │         │ lookalike                 │           │',
      '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
      '│ primary_platform │ tech    │ enum (10) │ yes   │ 1       │ domains, search,          │ pro       │',
      '│                  │         │           │       │         │ lookalike                 │           │',
      '└──────────────────┴─────────┴───────────┴───────┴─────────┴───────────────────────────┴───────────┘',
    ),
    wantStderr: '',
  },
  {
    name: 'one product piped: the entries as JSON, every member',
    argv: ['fields', '--product', 'leads'],
    tty: false,
    wantCode: 0,
    wantStdout: `${JSON.stringify(LEADS, null, 2)}\n`,
    wantStderr: '',
  },
  {
    name: '-o csv piped: filter, value source and values in their own columns',
    argv: ['fields', '--product', 'leads', '-o', 'csv'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      'name,product,type,filter,value_source,values,facet,credit_units,capabilities,plans,description',
      'lead_name,leads,string,,,,false,5,domains,pro,Name of a decision maker',
      "lead_title,leads,string,,,,false,5,domains,pro,The decision maker's job title",
      "lead_email,leads,string,,,,false,5,domains,pro,The decision maker's e-mail address",
    ),
    wantStderr: '',
  },
  {
    name: 'a selection that matches nothing on a terminal: said on stderr, exit 0',
    argv: ['fields', '--product', 'nope'],
    tty: true,
    wantCode: 0,
    wantStdout: '',
    wantStderr: lines('No fields match.'),
  },
  {
    name: 'a selection that matches nothing piped: an empty array',
    argv: ['fields', '--product', 'nope'],
    tty: false,
    wantCode: 0,
    wantStdout: lines('[]'),
    wantStderr: lines('No fields match.'),
  },
  {
    name: 'a base URL that is not http(s): exit 2 naming the variable',
    argv: ['fields'],
    tty: true,
    env: { COMPANY_DATA_BASE_URL: 'ftp://example.com' },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Configuration error (config_error)',
      '  COMPANY_DATA_BASE_URL (environment): base URL must be an http:// or https:// URL, got "ftp://example.com"',
      '  Run `company-data config show` to see which settings are in effect.',
    ),
  },
  {
    name: '--product without its value: exit 2',
    argv: ['fields', '--product'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine("option '--product <id>' argument missing"),
  },
];

describe('fields', () => {
  it.each(cases)('$name', expectCase);
});
