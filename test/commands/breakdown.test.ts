// `breakdown`: the bar chart on a terminal (Unicode, ASCII, colour), the breakdown object piped,
// the flat rows of CSV and NDJSON, and the facet and flag checks.
//
// The sandbox's "shoes" segment has 125 companies, 120 of them with a country: US 44, GB 16,
// DE 12, and 48 over 19 other values. A bar's length is its share over the largest share drawn.
import { describe, it } from 'vitest';
import { type CommandCase, expectCase, lines, usageLine } from '../helpers/command-cases.js';

const SEGMENT = 'companies matching "shoes": 125 companies';
const COVERAGE = 'country coverage: 96.0% (120 with a value, 5 missing)';
const bar = (full: number, eighth = '') => `${'█'.repeat(full)}${eighth}`;

const cases: CommandCase[] = [
  {
    name: 'on a terminal: the segment, the coverage and one bar per bucket, 100 columns wide',
    argv: ['breakdown', 'country', 'shoes', '--limit', '3'],
    tty: true,
    wantCode: 0,
    // Bars of 70 cells at most: 100 columns less the label (17), the numbers (9) and the gaps (4).
    wantStdout: lines(
      SEGMENT,
      COVERAGE,
      '',
      `US                 44  36.7%  ${bar(64, '▏')}`,
      `GB                 16  13.3%  ${bar(23, '▍')}`,
      `DE                 12  10.0%  ${bar(17, '▌')}`,
      `other (19 values)  48  40.0%  ${bar(70)}`,
    ),
    wantStderr: lines('Credits: charged 1, balance 999,999'),
  },
  {
    name: 'on a 60-column ASCII terminal: # bars of 30 cells at most',
    argv: ['breakdown', 'country', 'shoes', '--limit', '3'],
    tty: true,
    env: { LANG: 'C', COLUMNS: '60' },
    wantCode: 0,
    wantStdout: lines(
      SEGMENT,
      COVERAGE,
      '',
      `US                 44  36.7%  ${'#'.repeat(28)}`,
      `GB                 16  13.3%  ${'#'.repeat(10)}`,
      `DE                 12  10.0%  ${'#'.repeat(8)}`,
      `other (19 values)  48  40.0%  ${'#'.repeat(30)}`,
    ),
    wantStderr: lines('Credits: charged 1, balance 999,999'),
  },
  {
    name: 'on a colour terminal: a bold title and cyan bars',
    argv: ['breakdown', 'country', 'shoes', '--limit', '1'],
    tty: true,
    env: { NO_COLOR: undefined },
    wantCode: 0,
    wantStdout: lines(
      `\x1b[1m${SEGMENT}\x1b[0m`,
      COVERAGE,
      '',
      `US                 44  36.7%  \x1b[36m${bar(40, '▌')}\x1b[0m`,
      `other (21 values)  76  63.3%  \x1b[36m${bar(70)}\x1b[0m`,
    ),
    wantStderr: lines('Credits: charged 1, balance 999,999'),
  },
  {
    name: 'piped: the breakdown object, with the field named',
    argv: ['breakdown', 'country', 'shoes', '--limit', '3'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{',
      '  "field": "country",',
      '  "population": "all",',
      '  "segment": {',
      '    "description": "companies matching \\"shoes\\"",',
      '    "size": 125',
      '  },',
      '  "coverage": {',
      '    "with_value": 120,',
      '    "missing": 5,',
      '    "ratio": 0.96',
      '  },',
      '  "buckets": [',
      '    {',
      '      "value": "US",',
      '      "count": 44,',
      '      "share": 0.3667',
      '    },',
      '    {',
      '      "value": "GB",',
      '      "count": 16,',
      '      "share": 0.1333',
      '    },',
      '    {',
      '      "value": "DE",',
      '      "count": 12,',
      '      "share": 0.1',
      '    }',
      '  ],',
      '  "other": {',
      '    "buckets": 19,',
      '    "count": 48',
      '  }',
      '}',
    ),
    wantStderr: '',
  },
  {
    name: '-o csv piped: one row per bucket, then other and missing; the counts add up to 125',
    argv: ['breakdown', 'country', 'shoes', '--limit', '3', '-o', 'csv'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      'value,count,share,kind',
      'US,44,0.3667,value',
      'GB,16,0.1333,value',
      'DE,12,0.1,value',
      ',48,0.4,other',
      ',5,,missing',
    ),
    wantStderr: '',
  },
  {
    name: '-o ndjson piped: the same rows as JSON lines',
    argv: ['breakdown', 'country', 'shoes', '--limit', '3', '-o', 'ndjson'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{"value":"US","count":44,"share":0.3667,"kind":"value"}',
      '{"value":"GB","count":16,"share":0.1333,"kind":"value"}',
      '{"value":"DE","count":12,"share":0.1,"kind":"value"}',
      '{"value":null,"count":48,"share":0.4,"kind":"other"}',
      '{"value":null,"count":5,"share":null,"kind":"missing"}',
    ),
    wantStderr: '',
  },
  {
    name: 'a field that is not a facet on a terminal: exit 2 listing the facets',
    argv: ['breakdown', 'colour'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  unknown field `colour`',
      '  Facets: country, site_category, employee_range, primary_platform.',
    ),
  },
  {
    name: 'a field that is not a facet piped: exit 2 with one JSON problem line',
    argv: ['breakdown', 'colour'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"usage_error","status":0,"title":"Usage error","detail":"unknown field `colour`","retryable":false,"hint":"Facets: country, site_category, employee_range, primary_platform."}',
    ),
  },
  {
    name: 'an unknown --population: exit 2 naming the choices',
    argv: ['breakdown', 'country', '--population', 'online'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      "error: option '--population <population>' argument 'online' is invalid. Allowed choices are all, ecommerce.",
      '(add --help for usage)',
    ),
  },
  {
    name: 'no field: exit 2',
    argv: ['breakdown'],
    tty: false,
    wantCode: 2,
    wantStdout: '',
    wantStderr: usageLine("missing required argument 'field'"),
  },
];

describe('breakdown', () => {
  it.each(cases)('$name', expectCase);
});
