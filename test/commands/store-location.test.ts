// Where the store is: a file, or a postgres:// URL. Any other scheme is refused before anything is
// read or bought (it is never taken as the name of a file), and a database that cannot be reached
// stops the command with the cause, its URL shown without the password. In-process, exact stderr;
// the cases that need a running PostgreSQL are in test/e2e/shared-store.test.ts.
import { describe, it } from 'vitest';
import { type CommandCase, DIR, expectCase, lines } from '../helpers/command-cases.js';

const UNREACHABLE_HINT =
  'Check the URL (or the PG* variables), that the server runs and takes connections, and the user and password (PGPASSWORD or ~/.pgpass keeps a password out of the URL); or give another store with --store, or run with --no-store.';

const cases: CommandCase[] = [
  {
    name: 'a mysql:// --store: exit 2, nothing created',
    argv: ['--store', 'mysql://ann:secret@db.example.com/shop', 'enrich', 'acme-shoes.com'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Usage error (usage_error)',
      '  --store takes a file path or a postgres:// URL, not a mysql:// URL (mysql://ann@db.example.com/shop)',
      '  Give a file (--store ./store.db) or a PostgreSQL database (--store postgres://user@host/db).',
    ),
    wantFiles: { 'mysql:': null },
  },
  {
    name: 'a sqlite:// COMPANY_DATA_STORE, piped: exit 2 as JSON',
    argv: ['spend'],
    tty: false,
    env: { COMPANY_DATA_STORE: `sqlite://${DIR}/store.db` },
    wantCode: 2,
    wantStdout: '',
    wantStderr: `${JSON.stringify({
      code: 'usage_error',
      status: 0,
      title: 'Usage error',
      detail: `COMPANY_DATA_STORE takes a file path or a postgres:// URL, not a sqlite:// URL (sqlite://${DIR}/store.db)`,
      retryable: false,
      hint: 'Set it to a file (COMPANY_DATA_STORE=./store.db) or a PostgreSQL database (COMPANY_DATA_STORE=postgres://user@host/db).',
    })}\n`,
  },
  {
    name: 'an unreachable database stops a single lookup before it buys (exit 2), without the password',
    argv: ['--store', 'postgres://company:hunter2@127.0.0.1:CLOSED/shop', 'enrich', 'acme-shoes.com'],
    tty: true,
    wantCode: 2,
    wantStdout: '',
    wantStderr: lines(
      'error: Cannot use the result store (store_unavailable)',
      '  postgres://company@127.0.0.1:CLOSED/shop: connection refused by 127.0.0.1:CLOSED (is the server running, and listening there?)',
      `  ${UNREACHABLE_HINT}`,
    ),
  },
  {
    name: 'an unreachable database stops a batch before it buys',
    argv: [
      '--store',
      'postgresql://company:hunter2@127.0.0.1:CLOSED/shop',
      'enrich',
      '--input',
      `${DIR}/in.csv`,
    ],
    tty: false,
    files: { 'in.csv': 'domain\nacme-shoes.com\n' },
    wantCode: 2,
    wantStdout: '',
    wantStderr: `${JSON.stringify({
      code: 'store_unavailable',
      status: 0,
      title: 'Cannot use the result store',
      detail:
        'postgresql://company@127.0.0.1:CLOSED/shop: connection refused by 127.0.0.1:CLOSED (is the server running, and listening there?)',
      retryable: false,
      hint: UNREACHABLE_HINT,
    })}\n`,
  },
];

describe('the store given as a URL', () => {
  for (const c of cases) it(c.name, () => expectCase(c));
});
