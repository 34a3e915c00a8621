// The catalog commands (products, fields, errors), me, and the key's ways in (config set-key, the
// config file, --api-key-file), in-process against the sandbox: the whole stdout and stderr in
// every format, and every request the sandbox received (the public catalogs never get the key;
// a cached catalog is not asked again). Server text with escape sequences (escape-test.com) never
// reaches stdout as control bytes.
import { describe, expect, it } from 'vitest';
import { ERRORS_RESPONSE, FIELDS, PRODUCTS } from '../../src/sandbox/catalogs.js';
import { type CommandCase, DIR, expectCase, KEYS, lines } from '../helpers/command-cases.js';

const CONFIG = 'config/company-data/config.json';
/**
 * The catalogs are printed piped as the service sent them: the sandbox's own documents, pretty
 * JSON, or one member a line.
 */
const json = (data: unknown) => `${JSON.stringify(data, null, 2)}\n`;
const ndjson = (items: unknown[]) => items.map((item) => `${JSON.stringify(item)}\n`).join('');
/** A config file holding the full key, with this mode. */
const keyInConfig = (mode: number) => ({ text: `{\n  "api_key": "${KEYS.full}"\n}\n`, mode });
/** A key file holding the full key, with this mode. */
const keyFile = (mode: number) => ({ text: `${KEYS.full}\n`, mode });

const PRODUCTS_JSON = json(PRODUCTS);

const PRODUCTS_CSV = lines(
  'id,description,credit_units,kind,fields,bundles',
  'profile,"Company profile: name, country, category, size, founding year",1,default,domain;company_name;country;site_category;employee_range;founded_year,starter;growth;enterprise',
  'tech,Technology: the commerce platform and the technologies detected on the site,1,optional,primary_platform;tech;tech_count,growth;enterprise',
  'leads,Lead add-on: a named decision maker with title and e-mail address,5,add-on,lead_name;lead_title;lead_email,enterprise',
);

const FIELDS_CSV = lines(
  'name,product,type,filter,value_source,values,facet,credit_units,capabilities,plans,description',
  'domain,profile,string,,,,false,1,domains;search;lookalike,free;pro,The company domain (lower case; IDN as punycode)',
  'company_name,profile,string,,,,false,1,domains;search;lookalike,free;pro,Company name',
  "country,profile,string,country,enum,US;GB;DE;FR;CA;AU;NL;ES;IT;SE;CH;BE;AT;DK;NO;IE;PL;JP;BR;IN;NZ;FI;PT;SG;MX,true,1,domains;search;lookalike,free;pro,ISO 3166-1 alpha-2 country of the company's headquarters",
  'site_category,profile,string,site_category,enum,fashion;electronics;home_garden;beauty;sports;food_drink;b2b_software;travel;health;toys;jewelry;pets;automotive;media;education;finance,true,1,domains;search;lookalike,free;pro,Main category of the website',
  'employee_range,profile,string,employee_range,enum,1-10;11-50;51-200;201-1000;1001-5000;5000+,true,1,domains;search;lookalike,free;pro,"Number of employees, as a range"',
  'founded_year,profile,integer,,,,false,1,domains;search;lookalike,free;pro,Year the company was founded',
  'primary_platform,tech,string,primary_platform,enum,shopify;woocommerce;magento;bigcommerce;salesforce_commerce;custom;prestashop;shopware;wix;squarespace,true,1,domains;search;lookalike,pro,Commerce or site platform the website runs on',
  'tech,tech,string[],tech,enum,shopify;woocommerce;magento;bigcommerce;salesforce_commerce;prestashop;shopware;wix;squarespace;google_analytics;google_tag_manager;facebook_pixel;stripe;paypal;klaviyo;hotjar;hubspot;intercom;segment;mailchimp;zendesk;gorgias;yotpo;trustpilot;cloudflare;recaptcha;tiktok_pixel;pinterest_tag;afterpay;klarna;apple_pay;google_pay;algolia;optimizely;vwo;salesforce;marketo;drift;livechat;tidio;judge_me;okendo;recharge;attentive;postscript;sentry;new_relic;datadog;fastly;akamai;contentful;onetrust;cookiebot;bazaarvoice,false,1,domains;search;lookalike,pro,Technologies detected on the website (a filter matches any of its values)',
  'tech_count,tech,integer,,,,false,1,domains;search;lookalike,pro,Number of technologies detected',
  'lead_name,leads,string,,,,false,5,domains,pro,Name of a decision maker',
  "lead_title,leads,string,,,,false,5,domains,pro,The decision maker's job title",
  "lead_email,leads,string,,,,false,5,domains,pro,The decision maker's e-mail address",
);

const ERRORS_CSV = lines(
  'code,http_status,title,detail,retryable,charged',
  'invalid_api_key,401,Invalid API key,The API key is missing or invalid.,false,false',
  'invalid_field,400,Invalid field,A requested field does not exist.,false,false',
  'field_not_available_for_capability,400,Field not available for this capability,The field is known but not exposed by this capability; use the domain endpoint and select its product.,false,false',
  'invalid_product,400,Invalid product,A requested product does not exist.,false,false',
  'field_not_in_product,400,Field not in selected products,An included field belongs to a product that is not selected.,false,false',
  'product_without_visible_fields,400,Product without visible fields,include was given and a selected product exposes none of the included fields.,false,false',
  'max_credits_exceeded,400,Maximum credits exceeded,The selected products could cost more than max_credits.,false,false',
  'invalid_filter,400,Invalid filter,A filter is not in the catalog.,false,false',
  'invalid_request,400,Invalid request,The request parameters cannot be parsed.,false,false',
  'invalid_exclude_domains,400,Invalid exclude_domains,"exclude_domains must be a JSON array of at most 20,000 domains or HTTP(S) URLs.",false,false',
  'upgrade_required,403,Upgrade required,A field is not available on the current plan.,false,false',
  'insufficient_credits,403,Insufficient credits,The request needs more credits than are available.,false,false',
  'api_key_restricted,403,API key restricted,The API key is not permitted for this action.,false,false',
  'domain_not_found,200,Domain not found,No record exists for the domain; found is false and nothing is charged.,false,false',
  'lookalike_not_available,200,Lookalike not available,No candidate set exists for the seed; found is false and nothing is charged.,false,false',
  'unsupported_media_type,415,Unsupported media type,POST /api/search requires Content-Type: application/json.,false,false',
  'request_too_large,413,Request too large,The JSON request body is larger than 5 MB.,false,false',
  'rate_limited,429,Rate limited,Too many requests in a short window; wait for Retry-After.,true,false',
  'exclusion_filter_mismatch,503,Exclusion filter mismatch,Exclusion verification found an inconsistent backend result; nothing was returned or charged.,true,false',
  'catalog_refresh_in_progress,503,Catalog refresh in progress,The catalog changed during the request; retry the same operation.,true,false',
  'search_unavailable,503,Search unavailable,The search service is temporarily unavailable.,true,false',
  'search_capability_unavailable,503,Search capability unavailable,A required search capability is temporarily unavailable.,true,false',
  'search_timeout,504,Search timeout,The search did not finish within its bounded execution time.,true,false',
  'search_limit_exceeded,422,Search limit exceeded,The search exceeds a bounded engine limit.,false,false',
  'search_contract_error,502,Search contract error,The generated request was rejected by the search contract.,false,false',
  'search_upstream_error,502,Search upstream error,The search service could not complete the request.,true,false',
  'internal_error,500,Internal error,The request failed before completion.,true,false',
);

const ACCOUNT_CSV = lines(
  'plan,balance,capabilities,key_name,rate_limit_per_second',
  'pro,1000000,domains;search;breakdown;lookalike,full,',
);

const FIELDS_TABLE = lines(
  '┌──────────────────┬─────────┬───────────┬───────┬─────────┬───────────────────────────┬───────────┐',
  '│ name             │ product │ filter    │ facet │ credits │ capabilities              │ plans     │',
  '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
  '│ domain           │ profile │ —         │ no    │ 1       │ domains, search,          │ free, pro │',
  '│                  │         │           │       │         │ lookalike                 │           │',
  '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
  '│ company_name     │ profile │ —         │ no    │ 1       │ domains, search,          │ free, pro │',
  '│                  │         │           │       │         │ lookalike                 │           │',
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
  '│ founded_year     │ profile │ —         │ no    │ 1       │ domains, search,          │ free, pro │',
  '│                  │         │           │       │         │ lookalike                 │           │',
  '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
  '│ primary_platform │ tech    │ enum (10) │ yes   │ 1       │ domains, search,          │ pro       │',
  '│                  │         │           │       │         │ lookalike                 │           │',
  '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
  '│ tech             │ tech    │ enum (54) │ no    │ 1       │ domains, search,          │ pro       │',
  '│                  │         │           │       │         │ lookalike                 │           │',
  '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
  '│ tech_count       │ tech    │ —         │ no    │ 1       │ domains, search,          │ pro       │',
  '│                  │         │           │       │         │ lookalike                 │           │',
  '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
  '│ lead_name        │ leads   │ —         │ no    │ 5       │ domains                   │ pro       │',
  '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
  '│ lead_title       │ leads   │ —         │ no    │ 5       │ domains                   │ pro       │',
  '├──────────────────┼─────────┼───────────┼───────┼─────────┼───────────────────────────┼───────────┤',
  '│ lead_email       │ leads   │ —         │ no    │ 5       │ domains                   │ pro       │',
  '└──────────────────┴─────────┴───────────┴───────┴─────────┴───────────────────────────┴───────────┘',
);

const cases: CommandCase[] = [
  // Each catalog in each format, piped, without a key: nothing on stderr, one request without a key.
  // (products and errors as a table: test/commands/products.test.ts and errors.test.ts.)
  ...(
    [
      ['products', 'json', PRODUCTS_JSON],
      ['products', 'ndjson', ndjson(PRODUCTS)],
      ['products', 'csv', PRODUCTS_CSV],
      ['fields', 'table', FIELDS_TABLE],
      ['fields', 'json', json(FIELDS)],
      ['fields', 'ndjson', ndjson(FIELDS)],
      ['fields', 'csv', FIELDS_CSV],
      ['errors', 'json', json(ERRORS_RESPONSE)],
      ['errors', 'ndjson', ndjson(ERRORS_RESPONSE.errors)],
      ['errors', 'csv', ERRORS_CSV],
    ] as const
  ).map(
    ([command, format, stdout]): CommandCase => ({
      name: `${command} -o ${format} piped, without a key: no stderr`,
      argv: ['-o', format, command],
      tty: false,
      env: { COMPANY_DATA_API_KEY: undefined },
      wantCode: 0,
      wantStdout: stdout,
      wantStderr: '',
      wantRequests: [`GET /api/${command} no key -> 200`],
    }),
  ),
  // The public catalogs never get the key, whichever header would carry it.
  ...(['bearer', 'x-api-key'] as const).flatMap((header) =>
    (
      [
        ['products', PRODUCTS_CSV],
        ['fields', FIELDS_CSV],
        ['errors', ERRORS_CSV],
      ] as const
    ).map(
      ([command, stdout]): CommandCase => ({
        name: `${command} with --auth-header ${header} and a key: the public endpoint gets no key`,
        argv: ['--auth-header', header, '-o', 'csv', command],
        tty: false,
        wantCode: 0,
        wantStdout: stdout,
        wantStderr: '',
        wantRequests: [`GET /api/${command} no key -> 200`],
      }),
    ),
  ),
  {
    name: 'catalogs are cached per base URL: a second run sends no request',
    argv: ['products'],
    tty: false,
    before: [['products']],
    wantCode: 0,
    wantStdout: PRODUCTS_JSON,
    wantStderr: '',
    wantRequests: [],
  },
  {
    name: 'me -o ndjson piped',
    argv: ['-o', 'ndjson', 'me'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{"plan":"pro","balance":1000000,"key_name":"full","capabilities":["domains","search","breakdown","lookalike"],"rate_limit_per_second":null}',
    ),
    wantStderr: '',
    wantRequests: ['GET /api/me bearer:full -> 200'],
  },
  ...(['bearer', 'x-api-key'] as const).map(
    (header): CommandCase => ({
      name: `me sends the key with --auth-header ${header}`,
      argv: ['--auth-header', header, '-o', 'ndjson', 'me'],
      tty: false,
      env: { COMPANY_DATA_API_KEY: KEYS.free },
      wantCode: 0,
      wantStdout: lines(
        '{"plan":"free","balance":1000,"key_name":"free","capabilities":["domains","search","breakdown","lookalike"],"rate_limit_per_second":null}',
      ),
      wantStderr: '',
      wantRequests: [`GET /api/me ${header}:free -> 200`],
    }),
  ),
  {
    name: 'me with a wrong key piped: exit 3, the key not echoed',
    argv: ['me'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: 'cd_wrong_key_0000000000' },
    wantCode: 3,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"invalid_api_key","status":401,"title":"Invalid API key","detail":"The API key is missing or invalid.","retryable":false,"hint":"Replace the key: set COMPANY_DATA_API_KEY, pass --api-key-file, or run `company-data config set-key`."}',
    ),
    wantRequests: ['GET /api/me bearer:unknown -> 401'],
  },
  {
    name: 'me with the key of the config file',
    argv: ['-o', 'csv', 'me'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: undefined },
    files: { [CONFIG]: keyInConfig(0o600) },
    wantCode: 0,
    wantStdout: ACCOUNT_CSV,
    wantStderr: '',
    wantRequests: ['GET /api/me bearer:full -> 200'],
  },
  {
    name: 'config show -o json with the key of the config file: redacted, base-url from the flag',
    argv: ['--base-url', 'http://127.0.0.1:PORT', '-o', 'json', 'config', 'show'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: undefined, COMPANY_DATA_BASE_URL: undefined },
    files: { [CONFIG]: keyInConfig(0o600) },
    wantCode: 0,
    wantStdout: lines(
      '[',
      '  {',
      '    "setting": "profile",',
      '    "value": "default",',
      '    "source": "default"',
      '  },',
      '  {',
      '    "setting": "base-url",',
      '    "value": "http://127.0.0.1:PORT",',
      '    "source": "flag"',
      '  },',
      '  {',
      '    "setting": "api-key",',
      '    "value": "cd_s…9c2e",',
      '    "source": "config file"',
      '  },',
      '  {',
      '    "setting": "auth-header",',
      '    "value": "bearer",',
      '    "source": "default"',
      '  },',
      '  {',
      '    "setting": "format",',
      '    "value": "json",',
      '    "source": "flag"',
      '  },',
      '  {',
      '    "setting": "timeout",',
      '    "value": 30,',
      '    "source": "default"',
      '  },',
      '  {',
      '    "setting": "retries",',
      '    "value": 3,',
      '    "source": "default"',
      '  },',
      '  {',
      '    "setting": "config-file",',
      '    "value": "/tmp/cdt-XXXXXX/config/company-data/config.json",',
      '    "source": "environment"',
      '  },',
      '  {',
      '    "setting": "cache-dir",',
      '    "value": "/tmp/cdt-XXXXXX/cache/company-data",',
      '    "source": "environment"',
      '  }',
      ']',
    ),
    wantStderr: '',
  },
  {
    name: 'me with a config file others can read: exit 2 with the chmod to run, nothing sent',
    argv: ['me'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: undefined },
    files: { [CONFIG]: keyInConfig(0o644) },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"config_error","status":0,"title":"Configuration error","detail":"config file /tmp/cdt-XXXXXX/config/company-data/config.json is readable by other users (mode 644); run: chmod 600 /tmp/cdt-XXXXXX/config/company-data/config.json","retryable":false,"hint":"Run `company-data config show` to see which settings are in effect."}',
    ),
    wantRequests: [],
  },
  {
    name: 'config set-key piped refuses an empty line',
    argv: ['config', 'set-key'],
    tty: false,
    stdin: '\n',
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"usage_error","status":0,"title":"Usage error","detail":"no API key was given on stdin","retryable":false,"hint":"Pipe the key in, e.g. `company-data config set-key < key.txt`."}',
    ),
    wantFiles: {
      [CONFIG]: null,
    },
  },
  {
    name: '--api-key-file reads the key',
    argv: ['--api-key-file', `${DIR}/key`, '-o', 'csv', 'me'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: undefined },
    files: { key: keyFile(0o600) },
    wantCode: 0,
    wantStdout: ACCOUNT_CSV,
    wantStderr: '',
    wantRequests: ['GET /api/me bearer:full -> 200'],
  },
  {
    name: '--api-key-file readable by the group: exit 2 with the chmod to run, nothing sent',
    argv: ['--api-key-file', `${DIR}/key`, 'me'],
    tty: false,
    env: { COMPANY_DATA_API_KEY: undefined },
    files: { key: keyFile(0o640) },
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      '{"code":"config_error","status":0,"title":"Configuration error","detail":"key file /tmp/cdt-XXXXXX/key is readable by other users (mode 640); run: chmod 600 /tmp/cdt-XXXXXX/key","retryable":false,"hint":"Run `company-data config show` to see which settings are in effect."}',
    ),
    wantRequests: [],
  },
  {
    name: 'escape-test.com -o csv piped: no ESC or BEL byte on stdout',
    argv: ['-o', 'csv', 'enrich', 'escape-test.com'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      'domain,found,company_name,country,site_category,employee_range,founded_year,credits_charged,bought_at',
      'escape-test.com,true,Escape Test Corp,US,electronics,11-50,2020,1,',
    ),
    wantStderr: '',
  },
  {
    name: 'escape-test.com -o json piped: no ESC or BEL byte on stdout',
    argv: ['-o', 'json', 'enrich', 'escape-test.com'],
    tty: false,
    wantCode: 0,
    wantStdout: lines(
      '{',
      '  "results": [',
      '    {',
      '      "domain": "escape-test.com",',
      '      "found": true,',
      '      "company_name": "Escape \\u001b]0;pwned\\u0007Test \\u001b[31mCorp",',
      '      "country": "US",',
      '      "site_category": "electronics",',
      '      "employee_range": "11-50",',
      '      "founded_year": 2020,',
      '      "credits_charged": 1,',
      '      "bought_at": null',
      '    }',
      '  ],',
      '  "credits": {',
      '    "charged": 1,',
      '    "remaining": 999999',
      '  }',
      '}',
    ),
    wantStderr: '',
  },
];

describe('catalog commands, me and the key', () => {
  it.each(cases)('$name', async (c) => expectCase(c));

  it('the documents printed as received are the catalogs these commands show: 3 products, 12 fields, 27 problem codes', () => {
    expect(PRODUCTS.map((p) => p.id)).toEqual(['profile', 'tech', 'leads']);
    expect(PRODUCTS[2]).toMatchObject({ credit_units: 5, add_on: true, default: false });
    expect(FIELDS).toHaveLength(12);
    expect(FIELDS.filter((f) => f.facet).map((f) => f.name)).toEqual([
      'country',
      'site_category',
      'employee_range',
      'primary_platform',
    ]);
    expect(ERRORS_RESPONSE.contract_version).toBe('2026-08-26');
    expect(ERRORS_RESPONSE.errors).toHaveLength(27);
  });
});
