// The failures of a PostgreSQL store as problems naming it (never its password): one that cannot
// be used at all (store_unavailable, exit 2), and one whose connection went mid-run (store_lost,
// exit 5).
import type pg from 'pg';
import { Problem } from '../../problem.js';

export function unavailable(shown: string, cause: string, error: unknown, hint?: string): Problem {
  if (tooManyConnections(error)) hint ??= TOO_MANY_HINT;
  return new Problem({
    code: 'store_unavailable',
    title: 'Cannot use the result store',
    detail: `${shown}: ${cause}`,
    source: 'client',
    hint:
      hint ??
      'Check the URL (or the PG* variables), that the server runs and takes connections, and the user and password (PGPASSWORD or ~/.pgpass keeps a password out of the URL); or give another store with --store, or run with --no-store.',
    cause: error,
  });
}

const LOST_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
  '57014', // statement timeout
  '55P03', // lock timeout
  '25P03', // idle in transaction timeout
]);
const LOST_MESSAGE =
  /Connection terminated|connection timeout|Connection ended|not queryable|ended the connection|Query read timeout/i;

/** True when `error` means the connection (or the server) went, rather than a mistake of ours. */
export function connectionLost(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return (code !== undefined && LOST_CODES.has(code)) || LOST_MESSAGE.test(message ?? '');
}

/**
 * The server refused a connection for want of slots: "sorry, too many clients already", or
 * "remaining connection slots are reserved for …" (both SQLSTATE 53300, too_many_connections).
 */
export function tooManyConnections(error: unknown): boolean {
  return (error as { code?: string }).code === '53300';
}

/** Why the server refused, naming max_connections and what each process takes of it. */
export function tooManyCause(connections: number): string {
  return `the server refused a connection: all its connections are in use (its max_connections, less the slots it reserves for superusers); each company-data process opens up to ${connections} (store_connections, or COMPANY_DATA_STORE_CONNECTIONS)`;
}

const TOO_MANY_HINT =
  "Raise max_connections in the server's postgresql.conf (and restart it), or run fewer processes at once on this database; each needs its connections while it runs.";

/** The cause of a failure to connect, in words, and never the password. */
export function causeOf(
  error: unknown,
  config: pg.ClientConfig,
  password: string | undefined,
  connections: number,
): string {
  const { code, message } = error as { code?: string; message?: string };
  const where = `${config.host}:${config.port}`;
  if (tooManyConnections(error)) return tooManyCause(connections);
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused by ${where} (is the server running, and listening there?)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found: ${config.host}`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `cannot reach ${where}`;
    case '28P01':
    case '28000':
      return `authentication failed for user "${config.user}" (wrong or missing password, or not allowed by pg_hba.conf)`;
    case '3D000':
      return `database "${config.database}" does not exist`;
    case '42501':
      return `permission denied: ${scrub(message ?? '', password)} (the user needs CREATE on the database, or an existing schema it may use)`;
    default:
      return scrub(message || String(code ?? error), password);
  }
}

/** Never the password, not even inside a message of the server or the driver. */
export function scrub(text: string, password: string | undefined): string {
  if (!password) return text;
  return text.split(password).join('***').split(encodeURIComponent(password)).join('***');
}

/** The connection went after opening: store_lost, naming the store without its password. */
export function lostProblem(shown: string, error: unknown, password: string | undefined): Problem {
  const { message, code } = error as { message?: string; code?: string };
  return new Problem({
    code: 'store_lost',
    title: 'Lost the connection to the result store',
    detail: `${shown}: ${scrub(message || String(code ?? error), password)}`,
    source: 'client',
    hint: 'Check that the database server is up and reachable, then run the same command again: it resumes where it stopped.',
    cause: error,
  });
}

/** Any other failure of the server: store_unavailable, naming the store without its password. */
export function failureProblem(
  shown: string,
  error: unknown,
  password: string | undefined,
  connections: number,
): Problem {
  if (error instanceof Problem) return error;
  // A connection of the pool opened later (its first statement) is refused as the first was.
  if (tooManyConnections(error)) return unavailable(shown, tooManyCause(connections), error);
  if (connectionLost(error)) return lostProblem(shown, error, password);
  const { message, code } = error as { message?: string; code?: string };
  const cause = scrub(message || String(code ?? error), password);
  if (code === '42501' && /temporary/i.test(message ?? ''))
    return unavailable(shown, cause, error, tempHint(shown));
  return unavailable(shown, cause, error);
}

/**
 * What to do when the user may not make temporary objects in the database: a batch's claims run a
 * function each session makes for itself (pg_temp, claims.ts), and that needs the privilege.
 */
function tempHint(shown: string): string {
  let grant = 'GRANT TEMPORARY ON DATABASE <database> TO <user>';
  try {
    const url = new URL(shown);
    const database = decodeURIComponent(url.pathname.slice(1));
    if (database && url.username)
      grant = `GRANT TEMPORARY ON DATABASE "${database}" TO "${decodeURIComponent(url.username)}"`;
  } catch {
    // A location that is no URL keeps the placeholders.
  }
  return `A batch's claims need the TEMPORARY privilege on the database (a function of its session). Ask its owner: ${grant}; or give another store with --store, or run with --no-store.`;
}
