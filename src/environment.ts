// Every environment variable company-data reads, in one place (issue 46): `help environment` and
// the man page's ENVIRONMENT section print this list, and a test checks that every variable the
// source reads is in it.

export interface EnvironmentVariable {
  name: string;
  /** What it sets, and what wins over it. */
  sets: string;
}

export interface EnvironmentGroup {
  title: string;
  variables: EnvironmentVariable[];
}

export const ENVIRONMENT: EnvironmentGroup[] = [
  {
    title: 'Settings (a flag wins over its variable; the variable over the config file; both over defaults)',
    variables: [
      { name: 'COMPANY_DATA_BASE_URL', sets: 'the service root URL (--base-url wins)' },
      {
        name: 'COMPANY_DATA_API_KEY',
        sets: 'the API key itself (--api-key-file wins; over the config file key of `config set-key`)',
      },
      {
        name: 'COMPANY_DATA_AUTH_HEADER',
        sets: 'how the key is sent: bearer or x-api-key (--auth-header wins)',
      },
      {
        name: 'COMPANY_DATA_FORMAT',
        sets: 'the output format: table, json, ndjson or csv (-o wins; default table on a terminal, json otherwise)',
      },
      { name: 'COMPANY_DATA_TIMEOUT', sets: 'per-attempt timeout in seconds (--timeout wins; default 30)' },
      { name: 'COMPANY_DATA_RETRIES', sets: 'retries of retryable failures (--retries wins; default 3)' },
      {
        name: 'COMPANY_DATA_PROFILE',
        sets: 'the config file profile in force (--profile wins; over the one `config use` chose)',
      },
      {
        name: 'COMPANY_DATA_STORE',
        sets: 'the result store and spend ledger, a path or postgres:// URL (--store and --no-store win)',
      },
      {
        name: 'COMPANY_DATA_BUDGET_MONTH',
        sets: "the key's month cap in credits, across runs and commands (--budget-month wins)",
      },
      {
        name: 'COMPANY_DATA_CREDITS_CHARGED_HEADER, COMPANY_DATA_CREDITS_REMAINING_HEADER',
        sets: "the names of a service's own credit headers (over the config file's; no flag)",
      },
      {
        name: 'COMPANY_DATA_SANDBOX_LAYOUT',
        sets: 'how the --sandbox service shapes its answers: flat, grouped, enveloped or metered (default flat)',
      },
      {
        name: 'COMPANY_DATA_LOG_FORMAT',
        sets: 'plain or timestamped stderr lines, for a log (--log-format wins; default plain)',
      },
    ],
  },
  {
    title: 'Terminal',
    variables: [
      {
        name: 'COMPANY_DATA_PAGER',
        sets: 'the pager for long output on a terminal (over PAGER; --no-pager wins)',
      },
      {
        name: 'PAGER',
        sets: 'the pager when COMPANY_DATA_PAGER is unset (default less -FRX; empty or cat: none)',
      },
      { name: 'NO_COLOR', sets: 'no colour and no spinner when set to anything (as --no-color)' },
      { name: 'TERM', sets: 'dumb: no colour and no spinner' },
      { name: 'COLUMNS', sets: 'the width when the terminal reports none (help and tables; else 80)' },
      {
        name: 'LINES',
        sets: 'the screen height the pager waits for when the terminal reports none (else 24)',
      },
      { name: 'LC_ALL, LC_CTYPE, LANG', sets: 'whether tables and bars use Unicode (UTF-8) or ASCII' },
    ],
  },
  {
    title: 'Files',
    variables: [
      { name: 'XDG_CONFIG_HOME', sets: 'where company-data/config.json is (default ~/.config)' },
      { name: 'XDG_CACHE_HOME', sets: 'where the cached catalogs are (default ~/.cache)' },
      { name: 'XDG_STATE_HOME', sets: 'where the default store.db is (default ~/.local/state)' },
      { name: 'HOME', sets: 'the base of those defaults' },
    ],
  },
  {
    title: 'Network',
    variables: [
      {
        name: 'HTTPS_PROXY, HTTP_PROXY, NO_PROXY',
        sets: 'the proxy to the service, and the hosts reached directly (lower-case names win; see `doctor`)',
      },
      { name: 'NODE_EXTRA_CA_CERTS', sets: 'a private certificate authority to trust (read by Node.js)' },
    ],
  },
  {
    title: 'PostgreSQL store (for a postgres:// --store, as psql reads them; the URL wins)',
    variables: [
      { name: 'PGHOST, PGPORT, PGDATABASE', sets: 'the server and database' },
      { name: 'PGUSER, USER', sets: 'the user name (PGUSER first)' },
      { name: 'PGPASSWORD, PGSSLMODE', sets: 'the password and the TLS mode' },
      {
        name: 'COMPANY_DATA_STORE_CONNECTIONS',
        sets: "connections each process opens to the database, at most: 2 to 32 (over the profile's store_connections; default 2)",
      },
    ],
  },
  {
    title: "Tests only (the real binary's retries made fast)",
    variables: [
      {
        name: 'COMPANY_DATA_RETRY_BASE_MS, COMPANY_DATA_RETRY_CAP_MS, COMPANY_DATA_RETRY_FLOOR_MS',
        sets: 'the retry back-off in milliseconds',
      },
    ],
  },
];

/** Every variable name in the list. */
export function environmentNames(): string[] {
  return ENVIRONMENT.flatMap((group) => group.variables.flatMap((v) => v.name.split(', ')));
}

/** `company-data help environment`: the list, fitted to `columns`. */
export function environmentHelp(
  columns: number,
  wrap: (line: string, width: number, hang: number) => string[],
): string {
  const out = [
    'Environment variables that company-data reads, what each sets and what wins over it.',
    '',
  ].flatMap((line) => wrap(line, columns, 0));
  for (const group of ENVIRONMENT) {
    out.push(...wrap(`${group.title}:`, columns, 2));
    for (const v of group.variables) {
      // The name on its own line when it is long; the description under it, indented.
      out.push(...wrap(`  ${v.name}`, columns, 2));
      out.push(...wrap(`      ${v.sets}`, columns, 0));
    }
    out.push('');
  }
  out.push(
    ...wrap('See also: `company-data config show` (each setting and where it came from).', columns, 0),
  );
  return `${out.join('\n')}\n`;
}
