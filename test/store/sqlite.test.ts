// The SQLite store on its own: a newer schema or a file that is not a store is refused with a
// message naming the file and what to do; claims and runs of a process that is gone are taken
// over at once; a claim of a live owner makes another wait; answers of a run stay fresh for it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor, type Problem } from '../../src/problem.js';
import { openSqliteStore, SCHEMA_VERSION } from '../../src/store/sqlite.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cd-sqlite-store-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const scope = { baseUrl: 'b', keyId: 'k', products: undefined, include: undefined, maxCredits: undefined };
const fresh = { foundSince: 0, notFoundSince: 0 };

async function refusal(path: string): Promise<Problem> {
  return openSqliteStore(path).then(
    () => {
      throw new Error('opened');
    },
    (error: Problem) => error,
  );
}

/** A pid that no process has: a child that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(child.stdout);
}

describe('opening a store', () => {
  it('refuses a store of a newer schema, naming both versions (exit 2)', async () => {
    const path = join(dir, 'newer.db');
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const problem = await refusal(path);
    expect(problem.message).toBe(
      `The result store is newer than this company-data: ${path} has schema version ${SCHEMA_VERSION + 1}; this release understands version ${SCHEMA_VERSION} at most`,
    );
    expect(exitCodeFor(problem)).toBe(2);
  });

  it('refuses a file that is not a store, and says how to go on (exit 2)', async () => {
    const path = join(dir, 'notes.txt');
    writeFileSync(path, 'these are my notes, not a database\n'.repeat(200));
    const problem = await refusal(path);
    expect(problem.message).toBe(
      `Cannot use the result store: ${path} is not a company-data store (or is damaged)`,
    );
    expect(problem.extraHint).toBe(
      `Move it aside with \`company-data store clear\` (it keeps the old file as ${path}.damaged-<time>), or give another file with --store <path>.`,
    );
    expect(exitCodeFor(problem)).toBe(2);
  });
});

describe('claims and runs between processes', () => {
  it('a live owner’s claim makes another process wait; an answer ends the wait', async () => {
    const path = join(dir, 'claims.db');
    const mine = await openSqliteStore(path);
    const theirs = await openSqliteStore(path);
    const a = await mine.scopeId(scope);
    expect(await mine.claim(a, 'x.com', fresh)).toEqual({ kind: 'claimed' });
    // Another owner (another store object stands for another process of this one).
    expect(await theirs.claim(a, 'x.com', fresh)).toEqual({ kind: 'busy' });
    await mine.save(a, 'x.com', {
      found: true,
      record: { domain: 'x.com' },
      credits: 1,
      boughtAt: 5,
      run: null,
    });
    expect(await theirs.claim(a, 'x.com', fresh)).toEqual({
      kind: 'answered',
      answer: { found: true, record: { domain: 'x.com' }, credits: 1, boughtAt: 5, run: null },
    });
    // A failure drops the claim: the other asks itself.
    expect(await mine.claim(a, 'y.com', fresh)).toEqual({ kind: 'claimed' });
    await mine.release(a, 'y.com');
    expect(await theirs.claim(a, 'y.com', fresh)).toEqual({ kind: 'claimed' });
    await mine.close();
    await theirs.close();
  });

  it('takes over at once the claims and the run of a process that is gone', async () => {
    const path = join(dir, 'dead.db');
    const store = await openSqliteStore(path);
    const a = await store.scopeId(scope);
    const gone = deadPid();
    const db = new Database(path);
    const owner = `${hostname()}\t${gone}\tdeadbeef0000`;
    const far = Date.now() + 3_600_000;
    db.prepare('INSERT INTO claims (scope, domain, owner, expires_at) VALUES (?, ?, ?, ?)').run(
      a,
      'z.com',
      owner,
      far,
    );
    db.prepare(
      "INSERT INTO runs (fingerprint, detail, state, owner, expires_at, started_at) VALUES ('output:/x', 'd', 'open', ?, ?, 7)",
    ).run(owner, far);
    db.close();
    expect(await store.claim(a, 'z.com', fresh)).toEqual({ kind: 'claimed' });
    // The same fingerprint and detail: the killed run is continued, with its start.
    expect(await store.beginRun('output:/x', 'd', 100)).toMatchObject({ startedAt: 7, resumed: true });
    await store.close();
  });

  it('an answer bought by the run itself stays fresh for it whatever its age', async () => {
    const store = await openSqliteStore(join(dir, 'own.db'));
    const a = await store.scopeId(scope);
    await store.save(a, 'old.com', { found: true, record: null, credits: 1, boughtAt: 1, run: 42 });
    expect(await store.find(a, 'old.com', { foundSince: 10, notFoundSince: 10 })).toBeUndefined();
    expect(await store.find(a, 'old.com', { foundSince: 10, notFoundSince: 10, run: 42 })?.boughtAt).toBe(1);
    await store.close();
  });
});

describe('a file with the schema version but not the tables', () => {
  it('is refused as not a store, not reported as a bug (exit 2)', async () => {
    const path = join(dir, 'half.db');
    const db = new Database(path);
    db.exec('CREATE TABLE notes (text TEXT)');
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
    db.close();
    const problem = await refusal(path);
    expect(problem.message).toBe(
      `Cannot use the result store: ${path} is not a company-data store (or is damaged)`,
    );
    expect(exitCodeFor(problem)).toBe(2);
  });
});

describe('month holds', () => {
  const hold = {
    baseUrl: 'https://api.example.com',
    keyId: 'k1',
    amount: 3,
    cap: 10,
    window: { from: 0, to: 10_000 },
    command: 'enrich',
    at: 1_000,
  };
  const ledgerRows = (store: Awaited<ReturnType<typeof openSqliteStore>>) =>
    store.db.prepare('SELECT credits, outcome, command, at FROM ledger ORDER BY id').all();

  it('a hold whose owner is gone is never dropped: it becomes a possibly-charged ledger entry', async () => {
    const path = join(dir, 'holds.db');
    const gone = await openSqliteStore(path);
    const next = await openSqliteStore(path);
    const held = await gone.reserve(hold);
    expect(held).toEqual({ id: 1, amount: 3 });
    // Its lease ran out (a process killed with kill -9 renews nothing).
    gone.db.prepare('UPDATE reservations SET expires_at = 0').run();
    // 3 still count against the month: 3 + 8 > 10.
    expect(await next.reserve({ ...hold, amount: 8 })).toBeNull();
    expect(ledgerRows(next)).toEqual([{ credits: 3, outcome: 'unknown', command: 'enrich', at: 1_000 }]);
    // The row id is free again, and may be the next hold's.
    expect(await next.reserve({ ...hold, amount: 7 })).toEqual({ id: 1, amount: 7 });
    // The owner was only stalled: its settle adds nothing to the entry that stands for it, and
    // leaves the other owner's hold of the same id alone.
    await gone.settle({ reservation: held!, entry: { ...hold, credits: 2, outcome: 'charged' } as never });
    expect(ledgerRows(next)).toHaveLength(1);
    expect(await next.monthUsage(hold.keyId, 0, 10_000)).toEqual({ spent: 3, held: 7 });
    await gone.close();
    await next.close();
  });

  it('a hold still held when its process closes the store is recorded as possibly charged', async () => {
    const path = join(dir, 'closing.db');
    const store = await openSqliteStore(path);
    await store.reserve({ ...hold, cap: undefined });
    await store.close();
    const after = await openSqliteStore(path);
    expect(ledgerRows(after)).toEqual([{ credits: 3, outcome: 'unknown', command: 'enrich', at: 1_000 }]);
    expect(after.db.prepare('SELECT COUNT(*) AS n FROM reservations').get()).toEqual({ n: 0 });
    await after.close();
  });

  it('a charge settles its hold and reaches the ledger in one transaction', async () => {
    const path = join(dir, 'settle.db');
    const store = await openSqliteStore(path);
    const held = (await store.reserve(hold))!;
    await store.settle({
      reservation: held,
      entry: {
        at: 1_000,
        baseUrl: hold.baseUrl,
        keyId: hold.keyId,
        command: 'search',
        credits: 1,
        outcome: 'charged',
      },
    });
    expect(ledgerRows(store)).toEqual([{ credits: 1, outcome: 'charged', command: 'search', at: 1_000 }]);
    expect(await store.monthUsage(hold.keyId, 0, 10_000)).toEqual({ spent: 1, held: 0 });
    await store.close();
  });
});
