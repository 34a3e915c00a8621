// The SQLite store on its own: a newer schema or a file that is not a store is refused with a
// message naming the file and what to do; claims and runs of a process of this host that has
// exited are taken over at once (how SQLite knows an owner gone). The rules both back ends share
// are test/store/contract.test.ts's.
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
