// `products`: the catalog as a table on a terminal, as received piped, CSV with the bundles, and
// the settings error that stops it. The catalog is public: no key is needed.
import { describe, it } from 'vitest';
import { type CommandCase, expectCase, lines } from '../helpers/command-cases.js';

const TABLE = lines(
  '┌─────────┬─────────────────────────────────┬────────┬──────────┬─────────────────────────────────┐',
  '│ id      │ description                     │ credit │ kind     │ fields                          │',
  '│         │                                 │ units  │          │                                 │',
  '├─────────┼─────────────────────────────────┼────────┼──────────┼─────────────────────────────────┤',
  '│ profile │ Company profile: name, country, │ 1      │ default  │ domain, company_name, country,  │',
  '│         │ category, size, founding year   │        │          │ site_category, employee_range,  │',
  '│         │                                 │        │          │ founded_year                    │',
  '├─────────┼─────────────────────────────────┼────────┼──────────┼─────────────────────────────────┤',
  '│ tech    │ Technology: the commerce        │ 1      │ optional │ primary_platform, tech,         │',
  '│         │ platform and the technologies   │        │          │ tech_count                      │',
  '│         │ detected on the site            │        │          │                                 │',
  '├─────────┼─────────────────────────────────┼────────┼──────────┼─────────────────────────────────┤',
  '│ leads   │ Lead add-on: a named decision   │ 5      │ add-on   │ lead_name, lead_title,          │',
  '│         │ maker with title and e-mail     │        │          │ lead_email                      │',
  '│         │ address                         │        │          │                                 │',
  '└─────────┴─────────────────────────────────┴────────┴──────────┴─────────────────────────────────┘',
);

const PROFILE = {
  id: 'profile',
  description: 'Company profile: name, country, category, size, founding year',
  fields: ['domain', 'company_name', 'country', 'site_category', 'employee_range', 'founded_year'],
  bundles: ['starter', 'growth', 'enterprise'],
  credit_units: 1,
  default: true,
  add_on: false,
};
const TECH = {
  id: 'tech',
  description: 'Technology: the commerce platform and the technologies detected on the site',
  fields: ['primary_platform', 'tech', 'tech_count'],
  bundles: ['growth', 'enterprise'],
  credit_units: 1,
  default: false,
  add_on: false,
};
const LEADS = {
  id: 'leads',
  description: 'Lead add-on: a named decision maker with title and e-mail address',
  fields: ['lead_name', 'lead_title', 'lead_email'],
  bundles: ['enterprise'],
  credit_units: 5,
  default: false,
  add_on: true,
};

const cases: CommandCase[] = [
  {
    name: 'on a terminal: id, description, credit units, kind and fields, cut to 100 columns',
    argv: ['products'],
    tty: true,
    wantCode: 0,
    wantStdout: TABLE,
    wantStderr: '',
  },
  {
    name: 'on a terminal without a key: the same, the catalog is public',
    argv: ['products'],
    tty: true,
    env: { COMPANY_DATA_API_KEY: undefined },
    wantCode: 0,
    wantStdout: TABLE,
    wantStderr: '',
  },
  {
    name: 'piped: the products as JSON, every member',
    argv: ['products'],
    tty: false,
    wantCode: 0,
    wantStdout: `${JSON.stringify([PROFILE, TECH, LEADS], null, 2)}\n`,
    wantStderr: '',
  },
  {
    name: '-o ndjson piped: one product per line',
    argv: ['products', '-o', 'ndjson'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(JSON.stringify(PROFILE), JSON.stringify(TECH), JSON.stringify(LEADS)),
    wantStderr: '',
  },
  {
    name: '-o csv piped: the table columns plus the bundles, lists joined with ;',
    argv: ['products', '-o', 'csv'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      'id,description,credit_units,kind,fields,bundles',
      'profile,"Company profile: name, country, category, size, founding year",1,default,domain;company_name;country;site_category;employee_range;founded_year,starter;growth;enterprise',
      'tech,Technology: the commerce platform and the technologies detected on the site,1,optional,primary_platform;tech;tech_count,growth;enterprise',
      'leads,Lead add-on: a named decision maker with title and e-mail address,5,add-on,lead_name;lead_title;lead_email,enterprise',
    ),
    wantStderr: '',
  },
  {
    name: 'no base URL on a terminal: exit 2 saying how to set one',
    argv: ['products'],
    tty: true,
    env: { COMPANY_DATA_BASE_URL: undefined },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Configuration error (config_error)',
      '  No service URL is configured: set --base-url or COMPANY_DATA_BASE_URL, or use --sandbox.',
      '  Run `company-data config show` to see which settings are in effect.',
    ),
  },
  {
    name: 'no base URL piped: exit 2 with one JSON problem line',
    argv: ['products'],
    tty: false,
    env: { COMPANY_DATA_BASE_URL: undefined },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"config_error","status":0,"title":"Configuration error","detail":"No service URL is configured: set --base-url or COMPANY_DATA_BASE_URL, or use --sandbox.","retryable":false,"hint":"Run `company-data config show` to see which settings are in effect."}',
    ),
  },
  {
    name: 'an unknown --format: exit 2 naming the choices',
    argv: ['products', '-o', 'xml'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      "error: option '-o, --format <format>' argument 'xml' is invalid. Allowed choices are table, json, ndjson, csv.",
      '(add --help for usage)',
    ),
  },
];

describe('products', () => {
  it.each(cases)('$name', expectCase);
});
