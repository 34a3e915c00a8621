// The back ends of the result store as the contract suite (test/store/contract.test.ts) drives
// them: a place (a SQLite file, or a schema of a real PostgreSQL server) where several stores stand
// for several processes or hosts, the place's tables read and written from the outside, and an
// owner made gone while its leases still run (its process killed). The cases see only this, so
// they are the same on both.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStore } from '../../src/store/postgres.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { AnswerStore } from '../../src/store/types.js';
import { type Postgres, postgresMissing, startPostgres } from './postgres.js';

/** A store as the cases open it: any back end, with the owner text of what it claims and holds. */
export type OpenStore = AnswerStore & { readonly owner: string };

export interface Place {
  /** One more store on this place: another process (SQLite) or host (PostgreSQL). */
  open(): Promise<OpenStore>;
  /** SQL on the place's tables from the outside; `$S.` before a table names the place's schema. */
  sql(text: string): Promise<Record<string, unknown>[]>;
  /** The store's owner is gone (its process killed) while the leases of what it owns still run. */
  kill(store: OpenStore): Promise<void>;
  /**
   * The place as the release before the month's counter left it (its tables and schema version,
   * without `month_usage`): the next store opened on it upgrades it. Close its stores first.
   */
  downgrade(): Promise<void>;
}

export interface Backend {
  readonly name: 'sqlite' | 'postgres';
  /** True when this machine cannot run it, having said so through cannotRunHere. */
  missing(): boolean;
  start(): Promise<void>;
  /** Closes every store opened, and removes every place. */
  stop(): Promise<void>;
  place(): Promise<Place>;
}

/** A process id no process has (above Linux's largest): an owner of this host that is gone. */
const GONE_PID = 4_194_999;

function sqliteBackend(): Backend {
  let dir = '';
  let places = 0;
  const opened: OpenStore[] = [];
  const files: Database.Database[] = [];
  return {
    name: 'sqlite',
    missing: () => false,
    async start() {
      dir = mkdtempSync(join(tmpdir(), 'cd-contract-'));
    },
    async stop() {
      await Promise.all(opened.map((store) => store.close()));
      for (const db of files) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
    async place() {
      const path = join(dir, `place${++places}.db`);
      const open = async () => {
        const store = await openSqliteStore(path);
        opened.push(store);
        return store;
      };
      // The tables exist before the outside looks at them.
      await open();
      const db = new Database(path);
      files.push(db);
      const sql = async (text: string) => {
        const plain = text.replaceAll('$S.', '');
        const statement = db.prepare(plain);
        if (statement.reader) return statement.all() as Record<string, unknown>[];
        statement.run();
        return [];
      };
      return {
        open,
        sql,
        async downgrade() {
          db.exec('DROP TABLE month_usage');
          db.pragma('user_version = 2');
        },
        async kill(store) {
          // Everything it owns now belongs to a process of this host that no longer exists.
          const [host, , token] = store.owner.split('\t');
          const gone = `${host}\t${GONE_PID}\t${token}`;
          for (const table of ['claims', 'runs', 'reservations']) {
            db.prepare(`UPDATE ${table} SET owner = ? WHERE owner = ?`).run(gone, store.owner);
          }
        },
      };
    },
  };
}

function postgresBackend(): Backend {
  let server: Postgres | undefined;
  let outside: pg.Client | undefined;
  let places = 0;
  const opened: OpenStore[] = [];
  const lockHolder = async (owner: string): Promise<number | undefined> => {
    const key = BigInt(`0x${owner.split('\t')[2]}`);
    const rows = await server!.admin<{ pid: number }>(
      "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted AND classid = $1 AND objid = $2",
      [String(key >> 32n), String(key & 0xffffffffn)],
      'company',
    );
    return rows[0]?.pid;
  };
  return {
    name: 'postgres',
    missing: () => postgresMissing(),
    async start() {
      server = await startPostgres();
      // bigint columns as numbers, as the store itself reads them.
      const types = {
        getTypeParser: (oid: number, format?: string) =>
          oid === 20 ? Number : pg.types.getTypeParser(oid, format as 'text'),
      };
      outside = new pg.Client({ connectionString: server.url, types: types as pg.CustomTypesConfig });
      await outside.connect();
    },
    async stop() {
      await Promise.all(opened.map((store) => store.close()));
      await outside?.end();
      await server?.stop();
    },
    async place() {
      const schema = `contract${++places}`;
      const open = async () => {
        const store = await openPostgresStore(server!.url, { env: {}, schema });
        opened.push(store);
        return store;
      };
      await open();
      return {
        open,
        async sql(text) {
          return (await outside!.query(text.replaceAll('$S.', `${schema}.`))).rows;
        },
        async downgrade() {
          await outside!.query(`DROP TABLE ${schema}.month_usage;
            CREATE TABLE ${schema}.months (base_url text NOT NULL, key_id text NOT NULL,
              month_from bigint NOT NULL, PRIMARY KEY (base_url, key_id, month_from));
            UPDATE ${schema}.schema_version SET version = 1`);
        },
        async kill(store) {
          // Its session ends, and with it the advisory lock that says it lives.
          const pid = await lockHolder(store.owner);
          if (pid === undefined) throw new Error(`no session holds the lock of ${store.owner}`);
          // With a timeout, the server answers once the backend has exited (its locks gone with it).
          const [ended] = await server!.admin<{ ok: boolean }>(
            'SELECT pg_terminate_backend($1, 30000) AS ok',
            [pid],
            'company',
          );
          if (!ended.ok || (await lockHolder(store.owner)) !== undefined) {
            throw new Error('the killed session kept its lock');
          }
        },
      };
    },
  };
}

/** The table of the contract suite. */
export const BACKENDS: Backend[] = [sqliteBackend(), postgresBackend()];
