// The tables of a PostgreSQL store, in a schema of their own (company_data, or the sandbox's):
// created on first use under a transaction advisory lock, so that two hosts starting at once create
// them once; a schema of a newer version is refused (store_too_new).
import type pg from 'pg';
import { Problem } from '../../problem.js';

/** The schema this release reads and writes (the row of `schema_version`). */
export const POSTGRES_SCHEMA_VERSION = 2;
/** The PostgreSQL schema the tables live in, unless told otherwise (the sandbox has its own). */
export const DEFAULT_SCHEMA = 'company_data';
/** The first key of the two-key advisory locks of transactions (schema set-up, a run's start). */
export const LOCK_SPACE = 0x0c0da7a;

/** Version 1 of the tables: a new schema is made so, then brought forward by MIGRATIONS. */
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

/** The first instant (epoch ms) of the UTC month of `at`: rules.ts's counterMonth in PostgreSQL. */
const MONTH_OF_AT =
  "(extract(epoch FROM date_trunc('month', to_timestamp(at / 1000.0) AT TIME ZONE 'UTC')) * 1000)::bigint";

/**
 * The steps from each version to the next, in order: a new schema is made as version 1 (SCHEMA)
 * and brought forward by every step, so each table is written down once. Each step is its own
 * entry, so that another change of the schema is one more entry (and one more version).
 */
const MIGRATIONS: Record<number, string> = {
  // To version 2: the month's counter (rules.ts, counterMonth), one row per key and month, built
  // from the ledger and the live holds; a hold of version 1 written without its time (at 0)
  // counts in the month of the upgrade. The lock rows of `months` are no longer used: the row of
  // the counter is the lock (an older release still running fails its next month hold, rather
  // than hold against a table nobody else reads).
  1: `
CREATE TABLE month_usage (
  key_id text NOT NULL,
  month_from bigint NOT NULL,
  spent bigint NOT NULL DEFAULT 0,
  held bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, month_from)
);
UPDATE reservations SET at = (extract(epoch FROM clock_timestamp()) * 1000)::bigint WHERE at = 0;
INSERT INTO month_usage (key_id, month_from, spent, held)
  SELECT key_id, ${MONTH_OF_AT}, SUM(credits), 0 FROM ledger GROUP BY 1, 2;
INSERT INTO month_usage AS m (key_id, month_from, spent, held)
  SELECT key_id, ${MONTH_OF_AT}, 0, SUM(amount) FROM reservations GROUP BY 1, 2
  ON CONFLICT (key_id, month_from) DO UPDATE SET held = EXCLUDED.held;
DROP TABLE months;
`,
};

/** Creates the schema, or checks its version, under a transaction lock (two hosts may start at once). */
export async function ensureSchema(client: pg.Client, schema: string, shown: string): Promise<void> {
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
    let current = await versionOf();
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
      await client.query('INSERT INTO schema_version (version) VALUES (1)');
      current = 1;
    }
    if (current < POSTGRES_SCHEMA_VERSION) {
      await client.query(`SET LOCAL search_path = ${schema}`);
      for (; current < POSTGRES_SCHEMA_VERSION; current++) await client.query(MIGRATIONS[current]);
      await client.query('UPDATE schema_version SET version = $1', [POSTGRES_SCHEMA_VERSION]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
