// The result store on a PostgreSQL database that several hosts share (node-postgres, a small pool):
// the same tables and the same rules as the SQLite store (src/store/sqlite.ts), with what a fleet
// needs on top. Every write is one short transaction at READ COMMITTED, made safe across hosts by
// row locks: a claim is an INSERT … ON CONFLICT DO UPDATE that only takes over a row whose owner is
// gone, and a month hold is taken under the lock of one row per key and month, so two hosts can
// never both take the last room under a cap.
//
// Owners: host, pid and a random token, as in SQLite. The token is also the key of a session-level
// advisory lock that the store holds on a connection of its own for as long as it is open: another
// host judges an owner gone at once when that lock is not held (its process was killed, its session
// ended), and otherwise when its lease ran out (it stopped renewing: stalled, or cut off). Leases are
// judged by the database's clock, never the hosts', whose clocks may differ.
import { randomBytes } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import type pg from 'pg';
import { Problem } from '../problem.js';
import { exportedOf } from './admin.js';
import { selectionOf, withoutPassword } from './location.js';
import { describeOwner } from './sqlite.js';
import type {
  AnswerAges,
  AnswerStore,
  Claim,
  Cleared,
  ExportedAnswer,
  Freshness,
  HoldRequest,
  LedgerEntry,
  MonthReservation,
  Removed,
  RunHandle,
  Scope,
  Settlement,
  SpendBy,
  SpendRow,
  StoreCounts,
  StoredAnswer,
} from './types.js';

/** The schema this release reads and writes (the row of `schema_version`). */
export const POSTGRES_SCHEMA_VERSION = 1;
/** The PostgreSQL schema the tables live in, unless told otherwise (the sandbox has its own). */
export const DEFAULT_SCHEMA = 'company_data';
/** How long a claim, run or hold outlives its last renewal (when the owner's session is still there). */
export const LEASE_MS = 20_000;
const RENEW_MS = 5_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** A statement stuck behind another host's lock fails after this, rather than hang the batch. */
const LOCK_TIMEOUT_MS = 15_000;
const STATEMENT_TIMEOUT_MS = 60_000;
const POOL_SIZE = 4;
const PAGE = 1000;
/** The first key of the two-key advisory locks of transactions (schema set-up, a run's start). */
const LOCK_SPACE = 0x0c0da7a;
const DAY_MS = 86_400_000;

/** The server's clock in epoch ms (leases are judged by one clock for every host). */
const NOW = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/**
 * Whether `owner` (host, pid, 16 hex digits) is alive: its lease runs, and its advisory lock, keyed
 * by the token, is held by a session of this database.
 */
function aliveSql(owner: string, expires: string): string {
  const key = `('x' || split_part(${owner}, E'\\t', 3))::bit(64)::bigint`;
  return `(${owner} IS NOT NULL AND COALESCE(${expires} > ${NOW}, false) AND EXISTS (
    SELECT 1 FROM pg_catalog.pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
      AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
      AND l.classid = (${key} >> 32)::oid AND l.objid = (${key} & 4294967295)::oid))`;
}

const SCHEMA = `
CREATE TABLE schema_version (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  version integer NOT NULL
);
CREATE TABLE scopes (
  id bigserial PRIMARY KEY,
  base_url text NOT NULL,
  key_id text NOT NULL,
  selection text NOT NULL,
  UNIQUE (base_url, key_id, selection)
);
CREATE TABLE answers (
  scope bigint NOT NULL,
  domain text COLLATE "C" NOT NULL,
  found boolean NOT NULL,
  record json,
  credits integer NOT NULL,
  bought_at bigint NOT NULL,
  run bigint,
  PRIMARY KEY (scope, domain)
);
CREATE INDEX answers_domain ON answers (domain, scope);
CREATE INDEX answers_age ON answers (found, bought_at);
CREATE TABLE claims (
  scope bigint NOT NULL,
  domain text COLLATE "C" NOT NULL,
  owner text NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (scope, domain)
);
CREATE INDEX claims_owner ON claims (owner);
CREATE TABLE runs (
  id bigserial PRIMARY KEY,
  fingerprint text NOT NULL,
  detail text NOT NULL,
  state text NOT NULL,
  owner text,
  expires_at bigint,
  started_at bigint NOT NULL
);
CREATE UNIQUE INDEX runs_open ON runs (fingerprint) WHERE state = 'open';
CREATE TABLE ledger (
  id bigserial PRIMARY KEY,
  at bigint NOT NULL,
  base_url text NOT NULL,
  key_id text NOT NULL,
  command text NOT NULL,
  credits integer NOT NULL,
  outcome text NOT NULL
);
CREATE INDEX ledger_key_at ON ledger (key_id, base_url, at);
CREATE TABLE reservations (
  id bigserial PRIMARY KEY,
  base_url text NOT NULL,
  key_id text NOT NULL,
  owner text NOT NULL,
  amount integer NOT NULL,
  expires_at bigint NOT NULL,
  command text NOT NULL,
  at bigint NOT NULL
);
CREATE INDEX reservations_key ON reservations (key_id, base_url);
CREATE INDEX reservations_owner ON reservations (owner);
CREATE TABLE months (
  base_url text NOT NULL,
  key_id text NOT NULL,
  month_from bigint NOT NULL,
  PRIMARY KEY (base_url, key_id, month_from)
);
`;

/** The holds of owners that are gone (and `$1`'s own, with `mine`) become possibly-charged entries. */
function orphanSql(where: string): string {
  return `WITH gone AS (
    DELETE FROM reservations r WHERE ${where}
    RETURNING r.at, r.base_url, r.key_id, r.command, r.amount)
  INSERT INTO ledger (at, base_url, key_id, command, credits, outcome)
  SELECT CASE WHEN at = 0 THEN ${NOW} ELSE at END, base_url, key_id,
    CASE WHEN command = '' THEN 'unknown' ELSE command END, amount, 'unknown' FROM gone`;
}

const SQL = {
  scopeGet: 'SELECT id FROM scopes WHERE base_url = $1 AND key_id = $2 AND selection = $3',
  scopePut:
    'INSERT INTO scopes (base_url, key_id, selection) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING id',
  answerGet: 'SELECT found, record, credits, bought_at, run FROM answers WHERE scope = $1 AND domain = $2',
  answerPut: `INSERT INTO answers (scope, domain, found, record, credits, bought_at, run)
    VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT (scope, domain) DO UPDATE SET found = EXCLUDED.found, record = EXCLUDED.record,
      credits = EXCLUDED.credits, bought_at = EXCLUDED.bought_at, run = EXCLUDED.run`,
  // Ours when there is no claim, when it is ours already, or when its owner is gone: the row lock
  // of ON CONFLICT makes a second host wait for the first and then see its claim.
  claimPut: `INSERT INTO claims AS c (scope, domain, owner, expires_at) VALUES ($1, $2, $3, ${NOW} + ${LEASE_MS})
    ON CONFLICT (scope, domain) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
    WHERE c.owner = $3 OR NOT ${aliveSql('c.owner', 'c.expires_at')}
    RETURNING 1`,
  claimDrop: 'DELETE FROM claims WHERE scope = $1 AND domain = $2 AND owner = $3',
  runLock: `SELECT pg_advisory_xact_lock(${LOCK_SPACE}, hashtext($1))`,
  runGet: `SELECT id, owner, started_at, detail, (owner <> $2 AND ${aliveSql('owner', 'expires_at')}) AS alive
    FROM runs WHERE fingerprint = $1 AND state = 'open' ORDER BY id DESC LIMIT 1 FOR UPDATE`,
  runTake: `UPDATE runs SET owner = $2, expires_at = ${NOW} + ${LEASE_MS} WHERE id = $1`,
  runAbandon: "UPDATE runs SET state = 'abandoned', owner = NULL, expires_at = NULL WHERE id = $1",
  runPut: `INSERT INTO runs (fingerprint, detail, state, owner, expires_at, started_at)
    VALUES ($1, $2, 'open', $3, ${NOW} + ${LEASE_MS}, $4) RETURNING id`,
  runEnd: 'UPDATE runs SET state = $1, owner = NULL, expires_at = NULL WHERE id = $2 AND owner = $3',
  liveRuns: `SELECT owner FROM runs WHERE state = 'open' AND owner IS NOT NULL AND owner <> $1
    AND ${aliveSql('owner', 'expires_at')} ORDER BY id`,
  ledgerPut:
    'INSERT INTO ledger (at, base_url, key_id, command, credits, outcome) VALUES ($1, $2, $3, $4, $5, $6)',
  // The lock of one row per key and month orders every hold of that month, on every host. The
  // account is the key: the row's base_url is always '' (whatever address the key was used through).
  monthLock: `INSERT INTO months AS m (base_url, key_id, month_from) VALUES ('', $1, $2)
    ON CONFLICT (base_url, key_id, month_from) DO UPDATE SET month_from = m.month_from`,
  orphanKey: orphanSql(`r.key_id = $1 AND r.owner <> $2 AND NOT ${aliveSql('r.owner', 'r.expires_at')}`),
  orphanAll: orphanSql(`r.owner <> $1 AND NOT ${aliveSql('r.owner', 'r.expires_at')}`),
  lostHolds: `SELECT CASE WHEN at = 0 THEN ${NOW} ELSE at END AS at, base_url, key_id,
    CASE WHEN command = '' THEN 'unknown' ELSE command END AS command, amount
    FROM reservations r WHERE r.owner <> $1 AND NOT ${aliveSql('r.owner', 'r.expires_at')}`,
  orphanMine: orphanSql('r.owner = $1'),
  usage: `SELECT
    (SELECT COALESCE(SUM(credits), 0) FROM ledger WHERE key_id = $1 AND at >= $2 AND at < $3) AS spent,
    (SELECT COALESCE(SUM(amount), 0) FROM reservations WHERE key_id = $1
      AND (at = 0 OR (at >= $2 AND at < $3))) AS held`,
  holdPut: `INSERT INTO reservations (base_url, key_id, owner, amount, expires_at, command, at)
    VALUES ($1, $2, $3, $4, ${NOW} + ${LEASE_MS}, $5, $6) RETURNING id`,
  // By id and owner: a hold already turned into a possibly-charged entry is no longer ours.
  holdSettle: 'DELETE FROM reservations WHERE id = $1 AND owner = $2',
  renew: `WITH c AS (UPDATE claims SET expires_at = ${NOW} + ${LEASE_MS} WHERE owner = $1),
    r AS (UPDATE runs SET expires_at = ${NOW} + ${LEASE_MS} WHERE owner = $1),
    h AS (UPDATE reservations SET expires_at = ${NOW} + ${LEASE_MS} WHERE owner = $1)
    SELECT 1`,
  dropClaims: 'DELETE FROM claims WHERE owner = $1',
  releaseRuns: 'UPDATE runs SET owner = NULL, expires_at = NULL WHERE owner = $1',
  lapsedClaims: `DELETE FROM claims WHERE owner <> $1 AND NOT ${aliveSql('owner', 'expires_at')}`,
} as const;

/** The columns naming a group of `spend --by`, in UTC. */
const GROUP_COLUMNS: Record<SpendBy, Array<[column: string, sql: string]>> = {
  month: [['month', "to_char(to_timestamp(at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM')"]],
  day: [['day', "to_char(to_timestamp(at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"]],
  command: [['command', 'command']],
  key: [
    ['base_url', 'base_url'],
    ['key', 'key_id'],
  ],
};

interface AnswerRow {
  found: boolean;
  record: Record<string, unknown> | null;
  credits: number;
  bought_at: number;
  run: number | null;
}

interface ExportRow extends AnswerRow {
  domain: string;
  scope: number;
  base_url: string;
  key_id: string;
  selection: string;
}

/** Where and as whom to connect: the URL, with the usual PG* variables for what it leaves out. */
interface Target {
  config: pg.ClientConfig;
  /** The URL as messages show it: without its password. */
  shown: string;
  password: string | undefined;
}

/** bigint, and the numeric of SUM(bigint), as numbers: epoch ms and credits fit in a double. */
function typesOf(types: typeof pg.types): pg.CustomTypesConfig {
  const NUMBERS = new Set<number>([types.builtins.INT8, types.builtins.NUMERIC]);
  return {
    getTypeParser: ((oid: number, format?: string) =>
      NUMBERS.has(oid) && format !== 'binary'
        ? (value: string) => Number(value)
        : types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
  };
}

function targetOf(url: string, env: NodeJS.ProcessEnv): Target {
  const shown = withoutPassword(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw unavailable(
      shown,
      'not a valid URL',
      undefined,
      'Give the store as postgres://user@host:port/database.',
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw unavailable(
      shown,
      'not a postgres:// URL',
      undefined,
      'Give the store as postgres://user@host:port/database.',
    );
  }
  const param = (name: string) => parsed.searchParams.get(name) || undefined;
  const decoded = (text: string) => (text === '' ? undefined : decodeURIComponent(text));
  const host =
    decoded(parsed.hostname.replace(/^\[(.*)\]$/, '$1')) ?? param('host') ?? env.PGHOST ?? 'localhost';
  const user = decoded(parsed.username) ?? param('user') ?? env.PGUSER ?? env.USER ?? userInfo().username;
  const password = decoded(parsed.password) ?? param('password') ?? env.PGPASSWORD;
  const sslmode = param('sslmode') ?? env.PGSSLMODE;
  const ssl =
    sslmode === undefined || sslmode === 'disable' || sslmode === 'prefer' || sslmode === 'allow'
      ? undefined
      : sslmode === 'require' || sslmode === 'no-verify'
        ? { rejectUnauthorized: false }
        : true;
  return {
    shown,
    password,
    config: {
      host,
      port: Number(parsed.port || param('port') || env.PGPORT || 5432),
      user,
      password,
      database: decoded(parsed.pathname.slice(1)) ?? param('dbname') ?? env.PGDATABASE ?? user,
      ssl,
      application_name: param('application_name') ?? 'company-data',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    },
  };
}

function unavailable(shown: string, cause: string, error: unknown, hint?: string): Problem {
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
function connectionLost(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return (code !== undefined && LOST_CODES.has(code)) || LOST_MESSAGE.test(message ?? '');
}

/** The cause of a failure to connect, in words, and never the password. */
function causeOf(error: unknown, config: pg.ClientConfig, password: string | undefined): string {
  const { code, message } = error as { code?: string; message?: string };
  const where = `${config.host}:${config.port}`;
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
function scrub(text: string, password: string | undefined): string {
  if (!password) return text;
  return text.split(password).join('***').split(encodeURIComponent(password)).join('***');
}

/** The owner text of this store: host, pid, and 16 hex digits that also key its advisory lock. */
function ownerToken(): string {
  const bytes = randomBytes(8);
  bytes[0] &= 0x7f; // a positive bigint, so that its halves compare as oids in pg_locks
  return bytes.toString('hex');
}

function answerOf(row: AnswerRow): StoredAnswer {
  return {
    found: row.found,
    record: row.record,
    credits: row.credits,
    boughtAt: row.bought_at,
    run: row.run,
  };
}

function isFresh(row: AnswerRow, fresh: Freshness): boolean {
  if (fresh.run !== undefined && row.run === fresh.run) return true;
  return row.bought_at >= (row.found ? fresh.foundSince : fresh.notFoundSince);
}

type Runner = Pick<pg.ClientBase, 'query'>;

function named<R extends pg.QueryResultRow = pg.QueryResultRow>(
  runner: Runner,
  name: keyof typeof SQL,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  return runner.query<R>({ name, text: SQL[name], values });
}

/**
 * Opens the store in `options.schema` (default `company_data`) of the database at `url`, creating
 * the schema on first use; a problem naming the URL (never its password) when it cannot be used.
 */
export async function openPostgresStore(
  url: string,
  options: { env: NodeJS.ProcessEnv; schema?: string },
): Promise<PostgresStore> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`not a plain schema name: ${schema}`);
  const target = targetOf(url, options.env);
  const { default: driver } = await import('pg');
  const config: pg.ClientConfig = {
    ...target.config,
    types: typesOf(driver.types),
    options: `-c search_path=${schema}`,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    lock_timeout: LOCK_TIMEOUT_MS,
    // The client's own bound, for a server that no longer answers at all (a network cut off).
    query_timeout: STATEMENT_TIMEOUT_MS + 10_000,
  };
  // The connection that keeps this store's advisory lock: its own, for the store's lifetime.
  const lock = new driver.Client(config);
  lock.on('error', () => {
    // Seen by the store through `lost` (below); an error event must not end the process.
  });
  try {
    await lock.connect();
  } catch (error) {
    await lock.end().catch(() => undefined);
    throw unavailable(target.shown, causeOf(error, config, target.password), error);
  }
  try {
    await ensureSchema(lock, schema, target.shown);
    let token = ownerToken();
    // A token another open store holds already (a one in 2^63 chance) is drawn again.
    while (
      !(await lock.query('SELECT pg_try_advisory_lock($1) AS ok', [BigInt(`0x${token}`).toString()])).rows[0]
        .ok
    ) {
      token = ownerToken();
    }
    const pool = new driver.Pool({
      ...config,
      max: POOL_SIZE,
      idleTimeoutMillis: 30_000,
      allowExitOnIdle: true,
    });
    return new PostgresStore(target.shown, schema, pool, lock, token, target.password);
  } catch (error) {
    await lock.end().catch(() => undefined);
    if (error instanceof Problem) throw error;
    throw unavailable(target.shown, causeOf(error, config, target.password), error);
  }
}

/** Creates the schema, or checks its version, under a transaction lock (two hosts may start at once). */
async function ensureSchema(client: pg.Client, schema: string, shown: string): Promise<void> {
  const versionOf = async (): Promise<number | undefined> => {
    // The catalog read as a table (a fresh snapshot), not through the session's catalog caches,
    // which may not have seen yet the schema another host created while this one waited.
    const exists = await client.query(
      "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = 'schema_version') AS ok",
      [schema],
    );
    if (!exists.rows[0].ok) return undefined;
    const row = await client.query(`SELECT version FROM ${schema}.schema_version`);
    return row.rows[0]?.version as number | undefined;
  };
  const refuseNewer = (version: number | undefined) => {
    if (version === undefined || version <= POSTGRES_SCHEMA_VERSION) return;
    throw new Problem({
      code: 'store_too_new',
      title: 'The result store is newer than this company-data',
      detail: `${shown} (schema ${schema}) has schema version ${version}; this release understands version ${POSTGRES_SCHEMA_VERSION} at most`,
      source: 'client',
      hint: 'Upgrade company-data, or give another store with --store (or run with --no-store).',
    });
  };
  const first = await versionOf();
  refuseNewer(first);
  if (first === POSTGRES_SCHEMA_VERSION) return;
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(${LOCK_SPACE}, hashtext($1))`, [`schema:${schema}`]);
    // Another host may have created (or upgraded) it between the first look and the lock.
    const current = await versionOf();
    refuseNewer(current);
    if (current === undefined) {
      // A schema an administrator created for a user without CREATE on the database is used as is.
      const made = await client.query(
        'SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1) AS ok',
        [schema],
      );
      if (!made.rows[0].ok) await client.query(`CREATE SCHEMA ${schema}`);
      await client.query(`SET LOCAL search_path = ${schema}`);
      await client.query(SCHEMA);
      await client.query('INSERT INTO schema_version (version) VALUES ($1)', [POSTGRES_SCHEMA_VERSION]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** A client's socket, to reference or not (pg's Client has ref() and unref(); its types omit them). */
function refOf(client: pg.Client): { ref?: () => void; unref?: () => void } {
  const stream = (client as unknown as { connection?: { stream?: { ref?: () => void; unref?: () => void } } })
    .connection?.stream;
  return { ref: stream?.ref?.bind(stream), unref: stream?.unref?.bind(stream) };
}

export class PostgresStore implements AnswerStore {
  readonly backend = 'postgres' as const;
  /** The owner of what this store claims, holds and runs: host, pid, token (the lock's key). */
  private readonly me: string;
  private readonly scopes = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  /** Claims, runs or holds taken: there is something to renew, and to give up on close. */
  private owned = 0;
  /** Why the connection holding this store's advisory lock went, once it went. */
  private lockLost: unknown;
  private closing: Promise<void> | undefined;

  constructor(
    /** The URL without its password. */
    readonly path: string,
    readonly schema: string,
    private readonly pool: pg.Pool,
    private readonly lock: pg.Client,
    token: string,
    private readonly password: string | undefined,
  ) {
    this.me = `${hostname()}\t${process.pid}\t${token}`;
    // An idle pooled connection that breaks is dropped by the pool; the next query says so.
    pool.on('error', () => undefined);
    // A server shutting down sends each session an error, then closes it. A pooled connection
    // can meet it with no listener of its own (pg-pool's query listens `once`, and the close may
    // bring a second one): the statement in flight still fails with it, but the event must not
    // end the process (seen: exit 1 with an unhandled 57P01 instead of store_lost).
    pool.on('connect', (client) => client.on('error', () => undefined));
    const lost = (error?: unknown) => {
      this.lockLost ??= error ?? new Error('Connection terminated');
    };
    lock.on('error', lost);
    lock.on('end', () => lost());
    // The lock's connection only shows that this process lives: it must not keep it alive.
    refOf(lock).unref?.();
    this.timer = setInterval(() => void this.renew(), RENEW_MS);
    this.timer.unref();
  }

  async scopeId(scope: Scope): Promise<number> {
    const selection = selectionOf(scope);
    const key = `${scope.baseUrl}\n${scope.keyId}\n${selection}`;
    const known = this.scopes.get(key);
    if (known !== undefined) return known;
    const values = [scope.baseUrl, scope.keyId, selection];
    const id = await this.guard(async () => {
      const got = await named<{ id: number }>(this.pool, 'scopeGet', values);
      if (got.rows[0]) return got.rows[0].id;
      const put = await named<{ id: number }>(this.pool, 'scopePut', values);
      // Another host inserted it meanwhile: its row is committed, so a new statement sees it.
      return put.rows[0]?.id ?? (await named<{ id: number }>(this.pool, 'scopeGet', values)).rows[0].id;
    });
    this.scopes.set(key, id);
    return id;
  }

  async find(scope: number, domain: string, fresh: Freshness): Promise<StoredAnswer | undefined> {
    const row = await this.guard(
      async () => (await named<AnswerRow>(this.pool, 'answerGet', [scope, domain])).rows[0],
    );
    return row && isFresh(row, fresh) ? answerOf(row) : undefined;
  }

  async claim(scope: number, domain: string, fresh: Freshness, hold?: HoldRequest): Promise<Claim> {
    this.mustOwn();
    const decide = async (db: Runner): Promise<Claim> => {
      const claimed = (await named(db, 'claimPut', [scope, domain, this.me])).rowCount === 1;
      // Read after the claim: a host that saved this domain and dropped its claim while we waited
      // for the claim's row lock has committed its answer, which this new statement sees.
      const row = (await named<AnswerRow>(db, 'answerGet', [scope, domain])).rows[0];
      if (row && isFresh(row, fresh)) {
        if (claimed) await named(db, 'claimDrop', [scope, domain, this.me]);
        return { kind: 'answered', answer: answerOf(row) };
      }
      if (!claimed) return { kind: 'busy' };
      this.owned++;
      return hold ? { kind: 'claimed', reservation: await this.holdIn(db, hold) } : { kind: 'claimed' };
    };
    // Without a hold each statement stands alone (the claim is committed, or not, by itself).
    return this.guard(() => (hold ? this.transaction(decide) : decide(this.pool)));
  }

  async save(scope: number, domain: string, a: StoredAnswer, settlement?: Settlement): Promise<void> {
    await this.guard(() =>
      this.transaction(async (db) => {
        await named(db, 'answerPut', [
          scope,
          domain,
          a.found,
          a.record === null ? null : JSON.stringify(a.record),
          a.credits,
          a.boughtAt,
          a.run,
        ]);
        await named(db, 'claimDrop', [scope, domain, this.me]);
        if (settlement) await this.settleIn(db, settlement);
      }),
    );
  }

  async release(scope: number, domain: string): Promise<void> {
    await this.guard(() => named(this.pool, 'claimDrop', [scope, domain, this.me]));
  }

  async beginRun(fingerprint: string, detail: string, now: number): Promise<RunHandle | { busy: string }> {
    this.mustOwn();
    const run = await this.guard(() =>
      this.transaction(async (db): Promise<RunHandle | { busy: string }> => {
        // Two hosts starting the same run at once: the second waits for the first's decision.
        await named(db, 'runLock', [fingerprint]);
        const open = (
          await named<{
            id: number;
            owner: string | null;
            started_at: number;
            detail: string;
            alive: boolean;
          }>(db, 'runGet', [fingerprint, this.me])
        ).rows[0];
        if (open) {
          if (open.alive && open.owner) return { busy: describeOwner(open.owner) };
          if (open.detail === detail) {
            await named(db, 'runTake', [open.id, this.me]);
            return { id: open.id, startedAt: open.started_at, resumed: true };
          }
          // The same output with another input or other options: a new run.
          await named(db, 'runAbandon', [open.id]);
        }
        const id = (await named<{ id: number }>(db, 'runPut', [fingerprint, detail, this.me, now])).rows[0]
          .id;
        return { id, startedAt: now, resumed: false };
      }),
    );
    if (!('busy' in run)) this.owned++;
    return run;
  }

  async endRun(run: RunHandle, complete: boolean): Promise<void> {
    await this.guard(() => named(this.pool, 'runEnd', [complete ? 'done' : 'open', run.id, this.me]));
  }

  async monthUsage(keyId: string, from: number, to: number): Promise<{ spent: number; held: number }> {
    return this.guard(() =>
      this.transaction(async (db) => {
        await named(db, 'orphanKey', [keyId, this.me]);
        return (await named<{ spent: number; held: number }>(db, 'usage', [keyId, from, to])).rows[0];
      }),
    );
  }

  async reserve(hold: HoldRequest): Promise<MonthReservation | null> {
    this.mustOwn();
    return this.guard(() => this.transaction((db) => this.holdIn(db, hold)));
  }

  async settle(settlement: Settlement): Promise<void> {
    await this.guard(() => this.transaction((db) => this.settleIn(db, settlement)));
  }

  /** A database's tables are made on first use: an emptied one cannot be told from a new one. */
  async ledgerLost(): Promise<number | undefined> {
    return undefined;
  }

  async lostHolds(): Promise<LedgerEntry[]> {
    const { rows } = await this.guard(() =>
      named<{ at: string; base_url: string; key_id: string; command: string; amount: number }>(
        this.pool,
        'lostHolds',
        [this.me],
      ),
    );
    return rows.map((r) => ({
      at: Number(r.at),
      baseUrl: r.base_url,
      keyId: r.key_id,
      command: r.command,
      credits: Number(r.amount),
      outcome: 'unknown' as const,
    }));
  }

  async sweep(): Promise<void> {
    await this.guard(() => named(this.pool, 'orphanAll', [this.me]));
  }

  async liveRuns(): Promise<string[]> {
    const rows = await this.guard(
      async () => (await named<{ owner: string }>(this.pool, 'liveRuns', [this.me])).rows,
    );
    return rows.map((row) => describeOwner(row.owner));
  }

  async spend(by: SpendBy, since: number | undefined): Promise<SpendRow[]> {
    const groups = GROUP_COLUMNS[by];
    const exprs = groups.map(([, expr]) => expr).join(', ');
    const text = `SELECT ${groups.map(([column, expr]) => `${expr} AS "${column}"`).join(', ')},
        COALESCE(SUM(CASE WHEN outcome = 'charged' THEN credits ELSE 0 END), 0) AS charged,
        COALESCE(SUM(CASE WHEN outcome = 'charged' THEN 0 ELSE credits END), 0) AS possibly_charged,
        COUNT(*) AS calls
      FROM ledger WHERE at >= $1 GROUP BY ${exprs}
      ORDER BY ${groups.map(([, expr]) => `${expr} COLLATE "C"`).join(', ')}`;
    return this.guard(
      async () =>
        (
          await this.pool.query<SpendRow>({
            name: `spend_${by}`,
            text,
            values: [since ?? Number.MIN_SAFE_INTEGER],
          })
        ).rows,
    );
  }

  async counts(now: number, ages: AnswerAges): Promise<StoreCounts> {
    const text = `SELECT
        (SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_catalog.pg_class c
          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND c.relkind = 'r') AS size_bytes,
        (SELECT version FROM schema_version) AS schema_version,
        COUNT(*) AS answers,
        COUNT(*) FILTER (WHERE found) AS found,
        COUNT(*) FILTER (WHERE bought_at > $2) AS d1,
        COUNT(*) FILTER (WHERE bought_at <= $2 AND bought_at > $3) AS d7,
        COUNT(*) FILTER (WHERE bought_at <= $3 AND bought_at > $4) AS d30,
        COUNT(*) FILTER (WHERE bought_at <= $4) AS older,
        COUNT(*) FILTER (WHERE CASE WHEN found THEN bought_at < $5 ELSE bought_at < $6 END) AS expired,
        (SELECT COUNT(*) FROM ledger) AS ledger_entries
      FROM answers`;
    const row = await this.guard(
      async () =>
        (
          await this.pool.query<Record<string, number>>({
            name: 'counts',
            text,
            values: [
              this.schema,
              now - DAY_MS,
              now - 7 * DAY_MS,
              now - 30 * DAY_MS,
              now - ages.maxAgeMs,
              now - ages.notFoundMaxAgeMs,
            ],
          })
        ).rows[0],
    );
    return {
      size_bytes: row.size_bytes,
      schema_version: row.schema_version ?? null,
      answers: row.answers,
      found: row.found,
      not_found: row.answers - row.found,
      age_under_1_day: row.d1,
      age_1_to_7_days: row.d7,
      age_7_to_30_days: row.d30,
      age_over_30_days: row.older,
      expired: row.expired,
      ledger_entries: row.ledger_entries,
    };
  }

  async prune(now: number, ages: AnswerAges): Promise<Removed> {
    return this.guard(() =>
      this.transaction(async (db) => {
        const drop = 'DELETE FROM answers WHERE found = $1 AND bought_at < $2';
        const found = (
          await db.query({ name: 'pruneAnswers', text: drop, values: [true, now - ages.maxAgeMs] })
        ).rowCount;
        const notFound = (
          await db.query({ name: 'pruneAnswers', text: drop, values: [false, now - ages.notFoundMaxAgeMs] })
        ).rowCount;
        await this.dropLapsed(db);
        return { found: found ?? 0, not_found: notFound ?? 0 };
      }),
    );
  }

  async clear(ledger: boolean): Promise<Cleared> {
    return this.guard(() =>
      this.transaction(async (db) => {
        const answers = (await db.query('DELETE FROM answers')).rowCount ?? 0;
        const entries = ledger ? ((await db.query('DELETE FROM ledger')).rowCount ?? 0) : 0;
        await this.dropLapsed(db);
        return { answers, ledger_entries: entries };
      }),
    );
  }

  async *exportAnswers(): AsyncIterable<ExportedAnswer> {
    for await (const row of this.pages(
      'exportPage',
      `a.domain, a.scope, a.found, a.record, a.credits, a.bought_at, s.base_url, s.key_id, s.selection`,
      'answers a JOIN scopes s ON s.id = a.scope',
    )) {
      yield exportedOf(row);
    }
  }

  async recordFields(): Promise<string[]> {
    const seen = new Set<string>();
    for await (const row of this.pages(
      'fieldsPage',
      'a.domain, a.scope, a.record',
      'answers a',
      'a.record IS NOT NULL',
    )) {
      for (const key of Object.keys(row.record ?? {})) seen.add(key);
    }
    return [...seen];
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    clearInterval(this.timer);
    if (this.owned > 0) {
      try {
        await this.transaction(async (db) => {
          await named(db, 'dropClaims', [this.me]);
          // A hold never settled belongs to a request whose answer never came: maybe charged.
          await named(db, 'orphanMine', [this.me]);
          await named(db, 'releaseRuns', [this.me]);
        });
      } catch {
        // The server is gone: the lock went with the session, so others take over at once.
      }
    }
    // Referenced again while it ends: the wait for its goodbye must keep the process alive.
    refOf(this.lock).ref?.();
    await this.lock.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }

  /** A hold under `hold.cap` (null when there is no room), inside the caller's transaction. */
  private async holdIn(db: Runner, hold: HoldRequest): Promise<MonthReservation | null> {
    if (hold.cap !== undefined) {
      await named(db, 'monthLock', [hold.keyId, hold.window.from]);
      await named(db, 'orphanKey', [hold.keyId, this.me]);
      const { spent, held } = (
        await named<{ spent: number; held: number }>(db, 'usage', [
          hold.keyId,
          hold.window.from,
          hold.window.to,
        ])
      ).rows[0];
      if (spent + held + hold.amount > hold.cap) return null;
    }
    const { id } = (
      await named<{ id: number }>(db, 'holdPut', [
        hold.baseUrl,
        hold.keyId,
        this.me,
        hold.amount,
        hold.command,
        hold.at,
      ])
    ).rows[0];
    this.owned++;
    return { id, amount: hold.amount };
  }

  private async settleIn(db: Runner, { reservation, entry }: Settlement): Promise<void> {
    // A hold already turned into a possibly-charged entry (its owner was judged gone) keeps that
    // entry, which is at least the charge: no second one.
    if (reservation && (await named(db, 'holdSettle', [reservation.id, this.me])).rowCount === 0) return;
    if (entry && entry.credits > 0) await this.putLedger(db, entry);
  }

  private putLedger(db: Runner, e: LedgerEntry): Promise<unknown> {
    return named(db, 'ledgerPut', [e.at, e.baseUrl, e.keyId, e.command, e.credits, e.outcome]);
  }

  /** Claims of owners that are gone are dropped; their holds become possibly-charged entries. */
  private async dropLapsed(db: Runner): Promise<void> {
    await named(db, 'lapsedClaims', [this.me]);
    await named(db, 'orphanAll', [this.me]);
  }

  /** Rows in pages of PAGE, by domain then scope (keyset: no transaction stays open meanwhile). */
  private async *pages(
    name: string,
    columns: string,
    from: string,
    where = 'true',
  ): AsyncGenerator<ExportRow> {
    const text = `SELECT ${columns} FROM ${from}
      WHERE ${where} AND (a.domain, a.scope) > ($1, $2) ORDER BY a.domain, a.scope LIMIT ${PAGE}`;
    let after: [string, number] = ['', -1];
    for (;;) {
      const rows = await this.guard(
        async () => (await this.pool.query<ExportRow>({ name, text, values: after })).rows,
      );
      yield* rows;
      if (rows.length < PAGE) return;
      const last = rows[rows.length - 1];
      after = [last.domain, last.scope];
    }
  }

  /**
   * Runs `work` in one transaction (READ COMMITTED: each rule takes the row locks it needs). One
   * that the server chose as a deadlock's victim (two hosts turning the same lapsed holds into
   * entries in another order, say) is run again, up to three times in all.
   */
  private async transaction<T>(work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(work);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (attempt === 3 || (code !== '40P01' && code !== '40001')) throw error;
      }
    }
  }

  private async once<T>(work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // A checked-out connection that breaks between two statements emits 'error': the next
    // statement fails with it, and the process goes on.
    const ignore = () => undefined;
    client.on('error', ignore);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      client.removeListener('error', ignore);
      client.release();
      return result;
    } catch (error) {
      let broken = connectionLost(error);
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      client.removeListener('error', ignore);
      // A broken connection must not go back to the pool.
      client.release(broken ? (error as Error) : undefined);
      throw error;
    }
  }

  private async renew(): Promise<void> {
    if (this.owned === 0 || this.closing || this.lockLost !== undefined) return;
    try {
      await named(this.pool, 'renew', [this.me]);
    } catch {
      // The next renewal tries again; a lost server is reported by the next operation.
    }
  }

  /**
   * Taking something new needs this store's advisory lock: once its session is gone, others judge
   * this process gone and may take over what it claimed. Saving and settling go on meanwhile
   * (settling by id and owner never counts a charge twice).
   */
  private mustOwn(): void {
    if (this.closing) throw new Error(`the store ${this.path} is closed`);
    if (this.lockLost !== undefined) throw this.lost(this.lockLost);
  }

  private lost(error: unknown): Problem {
    const { message, code } = error as { message?: string; code?: string };
    return new Problem({
      code: 'store_lost',
      title: 'Lost the connection to the result store',
      detail: `${this.path}: ${scrub(message || String(code ?? error), this.password)}`,
      source: 'client',
      hint: 'Check that the database server is up and reachable, then run the same command again: it resumes where it stopped.',
      cause: error,
    });
  }

  /** Runs `work`; a failure of the server becomes a problem naming the store (never its password). */
  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof Problem) throw error;
      if (connectionLost(error)) throw this.lost(error);
      const { message, code } = error as { message?: string; code?: string };
      throw unavailable(this.path, scrub(message || String(code ?? error), this.password), error);
    }
  }
}
