// The result store on a PostgreSQL database that several hosts share (node-postgres, a small pool),
// loaded only for a postgres:// store (src/store/handle.ts). Its parts, one concern each:
//   postgres/target.ts      the URL, and the PG* variables for what it leaves out
//   postgres/errors.ts      failures as problems naming the store, never its password
//   postgres/schema.ts      the tables, their version, created once when hosts start at once
//   postgres/sql.ts         the statements by name, with the liveness rule in SQL
//   postgres/connection.ts  transactions on the pool, retried on a deadlock
//   postgres/store.ts       PostgresStore: src/store/rules.ts mapped to those statements
//   postgres/admin.ts       spend and store info|prune|clear|export
//   postgres/open.ts        openPostgresStore: the lock's connection, the schema, the pool
export { openPostgresStore } from './postgres/open.js';
export { DEFAULT_SCHEMA, POSTGRES_SCHEMA_VERSION } from './postgres/schema.js';
export { PostgresStore } from './postgres/store.js';
