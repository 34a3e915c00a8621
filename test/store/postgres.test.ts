// The PostgreSQL store against a real server (test/helpers/postgres.ts): two store instances stand
// for two hosts (two pools, two sessions, two advisory locks). What is this back end's own: the
// refusals of opening, a host whose session died taking nothing new, hosts racing for claims, the
// month cap and a run's start, a host killed with SIGKILL as a process, export in pages, and a
// server that goes away. The rules both back ends share are test/store/contract.test.ts's.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor, Problem } from '../../src/problem.js';
import { isPostgresUrl, withoutPassword } from '../../src/store/location.js';
import { openPostgresStore, POSTGRES_SCHEMA_VERSION, type PostgresStore } from '../../src/store/postgres.js';
import { freePort, type Postgres, postgresMissing, startPostgres } from '../helpers/postgres.js';
import { answer, charge, fresh, hold, scope } from '../helpers/store-values.js';

const env = {};
const me = `process ${process.pid}`;

async function rejection(promise: Promise<unknown>): Promise<Problem> {
  return promise.then(
    () => {
      throw new Error('resolved');
    },
    (error: unknown) => {
      if (!(error instanceof Problem)) throw error;
      return error;
    },
  );
}

describe.skipIf(postgresMissing())('the PostgreSQL store', () => {
  let server: Postgres;
  let schemas = 0;
  const opened: PostgresStore[] = [];

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
    await server?.stop();
  });

  /** Stores on one new schema: one per host. */
  async function hosts(n: number, schema = `t${++schemas}`): Promise<PostgresStore[]> {
    const stores: PostgresStore[] = [];
    for (let i = 0; i < n; i++) stores.push(await openPostgresStore(server.url, { env, schema }));
    opened.push(...stores);
    return stores;
  }

  /** The rows of a schema's table, as the superuser reads them. */
  function rows(schema: string, sql: string): Promise<Record<string, unknown>[]> {
    return server.admin(sql.replaceAll('$S', schema), [], 'company');
  }

  /** The backends that hold a session advisory lock (each open store holds one). */
  async function lockHolders(): Promise<Set<number>> {
    const held = await server.admin<{ pid: number }>(
      "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted",
      [],
      'company',
    );
    return new Set(held.map((row) => row.pid));
  }

  /** A store whose session can be killed: the backend holding its advisory lock. */
  async function killable(schema: string): Promise<{ store: PostgresStore; kill(): Promise<void> }> {
    const before = await lockHolders();
    const [store] = await hosts(1, schema);
    const pid = [...(await lockHolders())].find((p) => !before.has(p));
    expect(pid).toBeDefined();
    return {
      store,
      kill: async () => {
        // With a timeout, the server answers once the backend has exited: its locks went with it.
        await server.admin('SELECT pg_terminate_backend($1, 30000)', [pid], 'company');
        expect((await lockHolders()).has(pid!)).toBe(false);
      },
    };
  }

  describe('opening', () => {
    it('creates the schema on first use with its version, once when two hosts start at once', async () => {
      const [a, b] = await Promise.all([
        openPostgresStore(server.url, { env, schema: 'together' }),
        openPostgresStore(server.url, { env, schema: 'together' }),
      ]);
      opened.push(a, b);
      expect(await rows('together', 'SELECT version FROM $S.schema_version')).toEqual([
        { version: POSTGRES_SCHEMA_VERSION },
      ]);
      expect(a.backend).toBe('postgres');
      expect(a.path).toBe(`postgres://company@127.0.0.1:${server.port}/company`);
      expect((await a.counts(0, { maxAgeMs: 1, notFoundMaxAgeMs: 1 })).schema_version).toBe(
        POSTGRES_SCHEMA_VERSION,
      );
    });

    it('refuses a schema of a newer version, naming both (store_too_new, exit 2)', async () => {
      const [store] = await hosts(1, 'newer');
      await store.close();
      await rows('newer', `UPDATE $S.schema_version SET version = ${POSTGRES_SCHEMA_VERSION + 1}`);
      const problem = await rejection(openPostgresStore(server.url, { env, schema: 'newer' }));
      expect(problem.code).toBe('store_too_new');
      expect(problem.message).toBe(
        `The result store is newer than this company-data: postgres://company@127.0.0.1:${server.port}/company (schema newer) has schema version ${POSTGRES_SCHEMA_VERSION + 1}; this release understands version ${POSTGRES_SCHEMA_VERSION} at most`,
      );
      expect(exitCodeFor(problem)).toBe(2);
    });

    it('a wrong password: store_unavailable (exit 2), the cause named, the password never shown', async () => {
      const url = server.url.replace(server.password, 'not-the-password');
      const problem = await rejection(openPostgresStore(url, { env }));
      expect(problem.code).toBe('store_unavailable');
      expect(problem.message).toBe(
        `Cannot use the result store: postgres://company@127.0.0.1:${server.port}/company: authentication failed for user "company" (wrong or missing password, or not allowed by pg_hba.conf)`,
      );
      expect(`${problem.message} ${problem.hint}`).not.toContain('not-the-password');
      expect(exitCodeFor(problem)).toBe(2);
    });

    it('a port where nothing listens, and a database that does not exist: store_unavailable (exit 2)', async () => {
      const port = await freePort();
      const refused = await rejection(
        openPostgresStore(`postgres://company:${server.password}@127.0.0.1:${port}/company`, { env }),
      );
      expect(refused.message).toBe(
        `Cannot use the result store: postgres://company@127.0.0.1:${port}/company: connection refused by 127.0.0.1:${port} (is the server running, and listening there?)`,
      );
      expect(exitCodeFor(refused)).toBe(2);
      const missing = await rejection(openPostgresStore(server.url.replace(/company$/, 'nowhere'), { env }));
      expect(missing.message).toBe(
        `Cannot use the result store: postgres://company@127.0.0.1:${server.port}/nowhere: database "nowhere" does not exist`,
      );
      expect(exitCodeFor(missing)).toBe(2);
      expect(`${refused.message}${missing.message}`).not.toContain(server.password);
      // Once it exists, it is used.
      const created = await openPostgresStore(await server.createDatabase('nowhere'), { env });
      opened.push(created);
      expect(created.path).toBe(`postgres://company@127.0.0.1:${server.port}/nowhere`);
    });

    it('a user without CREATE on the database: a schema made for it is used; none is refused with the cause', async () => {
      await server.admin("CREATE ROLE limited LOGIN PASSWORD 'limited-pw'");
      await server.admin('CREATE SCHEMA given AUTHORIZATION limited', [], 'company');
      const url = `postgres://limited:limited-pw@127.0.0.1:${server.port}/company`;
      const store = await openPostgresStore(url, { env, schema: 'given' });
      opened.push(store);
      expect(await store.scopeId(scope)).toBe(1);
      const problem = await rejection(openPostgresStore(url, { env, schema: 'not_given' }));
      expect(problem.message).toBe(
        `Cannot use the result store: postgres://limited@127.0.0.1:${server.port}/company: permission denied: permission denied for database company (the user needs CREATE on the database, or an existing schema it may use)`,
      );
      expect(exitCodeFor(problem)).toBe(2);
    });

    it('a user without TEMPORARY on the database: a batch claim is refused with the grant it needs', async () => {
      const url = await server.createDatabase('notemp');
      await server.admin('REVOKE TEMPORARY ON DATABASE notemp FROM PUBLIC');
      await server.admin('REVOKE TEMPORARY ON DATABASE notemp FROM company');
      const store = await openPostgresStore(url, { env });
      opened.push(store);
      const id = await store.scopeId(scope);
      const problem = await rejection(store.claim(id, 'acme.com', { foundSince: 0, notFoundSince: 0 }));
      expect(problem.message).toBe(
        `Cannot use the result store: postgres://company@127.0.0.1:${server.port}/notemp: permission denied to create temporary tables in database "notemp"`,
      );
      expect(problem.hint).toBe(
        'A batch\'s claims need the TEMPORARY privilege on the database (a function of its session). Ask its owner: GRANT TEMPORARY ON DATABASE "notemp" TO "company"; or give another store with --store, or run with --no-store.',
      );
      expect(exitCodeFor(problem)).toBe(2);
    });

    it('takes what the URL leaves out from the PG* variables', async () => {
      const url = `postgres://127.0.0.1:${server.port}`;
      const store = await openPostgresStore(url, {
        env: { PGUSER: 'company', PGPASSWORD: server.password, PGDATABASE: 'company' },
        schema: 'from_env',
      });
      opened.push(store);
      expect(store.path).toBe(url);
      expect(await store.scopeId(scope)).toBe(1);
    });
  });

  describe('claims between hosts', () => {
    it('a host whose session died takes nothing new (store_lost, exit 5); its claims are taken over at once', async () => {
      const schema = `t${++schemas}`;
      const [other] = await hosts(1, schema);
      const a = await other.scopeId(scope);
      const killed = await killable(schema);
      expect(await killed.store.claim(a, 'killed.com', fresh)).toEqual({ kind: 'claimed' });
      await killed.kill();
      expect(await other.claim(a, 'killed.com', fresh)).toEqual({ kind: 'claimed' });
      const problem = await rejection(killed.store.claim(a, 'more.com', fresh));
      expect(problem.code).toBe('store_lost');
      expect(exitCodeFor(problem)).toBe(5);
      await killed.store.close();
      await killed.store.close(); // idempotent
    });

    it('two hosts racing for the same domains: each domain is claimed exactly once', async () => {
      const [one, two] = await hosts(2);
      const a = await one.scopeId(scope);
      const domains = Array.from({ length: 30 }, (_, i) => `d${i}.com`);
      const results = await Promise.all(
        domains.flatMap((domain) => [one.claim(a, domain, fresh), two.claim(a, domain, fresh)]),
      );
      const kinds = results.map((claim) => claim.kind);
      expect(kinds.filter((kind) => kind === 'claimed')).toHaveLength(30);
      expect(kinds.filter((kind) => kind === 'busy')).toHaveLength(30);
      for (let i = 0; i < 30; i++)
        expect([kinds[2 * i], kinds[2 * i + 1]].sort()).toEqual(['busy', 'claimed']);
    });
  });

  describe('a host killed with SIGKILL', () => {
    let dir: string;
    beforeAll(async () => {
      // The store as a program of its own: bundled with esbuild, pg from this node_modules.
      dir = mkdtempSync(join(tmpdir(), 'cd-pg-host-'));
      symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
      await build({
        entryPoints: ['src/store/postgres.ts'],
        outfile: join(dir, 'store.cjs'),
        bundle: true,
        format: 'cjs',
        platform: 'node',
        target: 'node20',
        external: ['pg', 'better-sqlite3'],
        logLevel: 'error',
      });
      writeFileSync(
        join(dir, 'host.cjs'),
        `const { openPostgresStore } = require('./store.cjs');
(async () => {
  const [url, schema, stay] = process.argv.slice(2);
  const store = await openPostgresStore(url, { env: {}, schema });
  const scope = await store.scopeId(${JSON.stringify(scope)});
  const claim = await store.claim(scope, 'kill.com', { foundSince: 0, notFoundSince: 0 }, ${JSON.stringify(hold)});
  process.stdout.write(JSON.stringify(claim) + '\\n');
  if (stay) setInterval(() => {}, 1000);
})();
`,
      );
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    /** A host process that claims kill.com with a hold of 3, says so, then stays (or just ends). */
    function host(schema: string, stay: boolean) {
      const child = spawn(process.execPath, [join(dir, 'host.cjs'), server.url, schema, stay ? 'stay' : ''], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let errors = '';
      child.stderr.on('data', (chunk) => {
        errors += chunk;
      });
      const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
      const said = new Promise<string>((done, fail) => {
        let out = '';
        child.stdout.on('data', (chunk) => {
          out += chunk;
          if (out.includes('\n')) done(out.trim());
        });
        child.on('exit', () => fail(new Error(`the host exited before claiming: ${out}${errors}`)));
      });
      return { child, exited, said };
    }

    it('has its claims taken over at once (its lease still runs), and its hold kept as possibly charged', async () => {
      const schema = `t${++schemas}`;
      const [other] = await hosts(1, schema);
      const a = await other.scopeId(scope);
      const killed = host(schema, true);
      expect(JSON.parse(await killed.said)).toMatchObject({ kind: 'claimed', reservation: { amount: 3 } });
      expect(await other.claim(a, 'kill.com', fresh)).toEqual({ kind: 'busy' });
      killed.child.kill('SIGKILL');
      await killed.exited;
      // The server sees the connection close as the process dies; no wait for the 20 s lease.
      let claim = await other.claim(a, 'kill.com', fresh);
      // Looked at until then, for at most 15 s: a loaded machine may take its time, yet less than
      // the 20 s lease, so the lease running out cannot be what frees the claim.
      for (let i = 0; i < 750 && claim.kind === 'busy'; i++) {
        await sleep(20);
        claim = await other.claim(a, 'kill.com', fresh);
      }
      expect(claim).toEqual({ kind: 'claimed' });
      expect(await other.monthUsage(hold.keyId, 0, 10_000)).toEqual({ spent: 3, held: 0 });
      expect(await other.spend('command', undefined)).toEqual([
        { command: 'enrich', charged: 0, possibly_charged: 3, calls: 1 },
      ]);
    });

    it('an open store does not keep its process alive', async () => {
      const ended = host(`t${++schemas}`, false);
      await ended.said;
      expect(await ended.exited).toBe(0);
    });
  });

  describe('the month cap', () => {
    it('stays atomic across two hosts racing: 2 × 20 holds of 1 under a cap of 15 grant exactly 15', async () => {
      const schema = `t${++schemas}`;
      const [one, two] = await hosts(2, schema);
      const race = (store: PostgresStore) =>
        Array.from({ length: 20 }, () => store.reserve({ ...hold, amount: 1, cap: 15 }));
      const granted = (await Promise.all([...race(one), ...race(two)])).filter((r) => r !== null);
      expect(granted).toHaveLength(15);
      expect(await one.monthUsage(hold.keyId, 0, 10_000)).toEqual({ spent: 0, held: 15 });
      expect(await rows(schema, 'SELECT COUNT(*)::int AS n FROM $S.reservations')).toEqual([{ n: 15 }]);
    });

    it('settle drops the hold and records the charge; save does it with the answer, all or nothing', async () => {
      const schema = `t${++schemas}`;
      const [store] = await hosts(1, schema);
      const a = await store.scopeId(scope);
      const ledger = 'SELECT credits, outcome, command FROM $S.ledger ORDER BY id';
      const held = (await store.reserve(hold))!;
      await store.settle({ reservation: held, entry: charge(1, 1_000, 'search') });
      expect(await rows(schema, ledger)).toEqual([{ credits: 1, outcome: 'charged', command: 'search' }]);
      expect(await store.monthUsage(hold.keyId, 0, 10_000)).toEqual({ spent: 1, held: 0 });

      const claim = await store.claim(a, 's.com', fresh, hold);
      if (claim.kind !== 'claimed' || !claim.reservation)
        throw new Error(`not claimed: ${JSON.stringify(claim)}`);
      // A ledger entry the table refuses (credits beyond an integer): nothing of the save stays.
      const refused = await rejection(
        store.save(a, 's.com', answer(9), { reservation: claim.reservation, entry: charge(2 ** 40) }),
      );
      expect(refused.code).toBe('store_unavailable');
      expect(await store.find(a, 's.com', fresh)).toBeUndefined();
      expect(await rows(schema, 'SELECT amount FROM $S.reservations')).toEqual([{ amount: 3 }]);
      expect(await rows(schema, 'SELECT domain FROM $S.claims')).toEqual([{ domain: 's.com' }]);
      await store.save(a, 's.com', answer(9), { reservation: claim.reservation, entry: charge(2) });
      expect(await store.find(a, 's.com', fresh)).toEqual(answer(9));
      expect(await rows(schema, ledger)).toEqual([
        { credits: 1, outcome: 'charged', command: 'search' },
        { credits: 2, outcome: 'charged', command: 'enrich' },
      ]);
      expect(await rows(schema, 'SELECT COUNT(*)::int AS n FROM $S.reservations')).toEqual([{ n: 0 }]);
      expect(await rows(schema, 'SELECT COUNT(*)::int AS n FROM $S.claims')).toEqual([{ n: 0 }]);
      // A settlement of no credits records nothing.
      await store.settle({ entry: charge(0) });
      expect(await rows(schema, ledger)).toHaveLength(2);
    });
  });

  describe('runs', () => {
    it('two hosts starting the same run at once: one runs it, the other is told who', async () => {
      const [one, two] = await hosts(2);
      const results = await Promise.all([
        one.beginRun('output:/y', 'd', 1),
        two.beginRun('output:/y', 'd', 1),
      ]);
      expect(results.filter((r) => 'busy' in r)).toEqual([{ busy: me }]);
    });
  });

  describe('export', () => {
    it('exports a store larger than one page, in order', async () => {
      const schema = `t${++schemas}`;
      const [store] = await hosts(1, schema);
      const a = await store.scopeId(scope);
      const b = await store.scopeId({ ...scope, keyId: 'k2' });
      // 1,234 domains in two scopes, inserted in one statement (the store's save is tested above).
      await rows(
        schema,
        `INSERT INTO $S.answers (scope, domain, found, record, credits, bought_at)
        SELECT s, 'n' || lpad(i::text, 5, '0') || '.com', true, json_build_object('f' || (i % 3), i), 1, 1
        FROM generate_series(0, 1233) i, (VALUES (${a}), (${b})) AS v(s)`,
      );
      const seen: string[] = [];
      for await (const row of store.exportAnswers()) seen.push(`${row.domain} ${row.key}`);
      expect(seen).toEqual(
        Array.from({ length: 1_234 }, (_, i) => `n${String(i).padStart(5, '0')}.com`).flatMap((domain) => [
          `${domain} k`,
          `${domain} k2`,
        ]),
      );
      expect(await store.recordFields()).toEqual(['f0', 'f1', 'f2']);
    });
  });

  // Last: the server stops and starts again under the stores of this block.
  describe('a server that goes away', () => {
    it('a store in use when the server stops fails with store_lost (exit 5), its password unshown', async () => {
      const [store] = await hosts(1);
      const a = await store.scopeId(scope);
      expect(await store.claim(a, 'lost.com', fresh)).toEqual({ kind: 'claimed' });
      await server.halt();
      try {
        const problem = await rejection(store.find(a, 'lost.com', fresh));
        expect(problem.code).toBe('store_lost');
        expect(exitCodeFor(problem)).toBe(5);
        expect(problem.message).toMatch(
          new RegExp(
            `^Lost the connection to the result store: postgres://company@127\\.0\\.0\\.1:${server.port}/company: `,
          ),
        );
        expect(problem.message).not.toContain(server.password);
        const saving = await rejection(store.save(a, 'lost.com', answer(1)));
        expect(saving.code).toBe('store_lost');
        // Closing a store whose server is gone neither hangs nor throws.
        await store.close();
      } finally {
        await server.restart();
      }
      // After the restart the same store opens again and nothing committed was lost.
      const [again] = await hosts(1, `t${schemas}`);
      expect(await again.claim(a, 'lost.com', fresh)).toEqual({ kind: 'claimed' });
    });
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('the URL of a PostgreSQL store', () => {
  it('is told apart from a file name, and shown without its password', () => {
    expect(isPostgresUrl('postgres://h/db')).toBe(true);
    expect(isPostgresUrl('postgresql://h/db')).toBe(true);
    expect(isPostgresUrl('mysql://h/db')).toBe(false);
    expect(isPostgresUrl('./postgres:/store.db')).toBe(false);
    expect(withoutPassword('postgres://ann:p%40ss@db.example.com:5433/shop?sslmode=require')).toBe(
      'postgres://ann@db.example.com:5433/shop?sslmode=require',
    );
    expect(withoutPassword('postgresql://db.example.com/shop?user=ann&password=secret')).toBe(
      'postgresql://db.example.com/shop?user=ann',
    );
    expect(withoutPassword('postgres://ann:se cret@[bad')).toBe('postgres://ann@[bad');
  });
});
