// The result store on one SQLite file (better-sqlite3, WAL): stored answers, claims on domains in
// flight, batch runs, and the spend ledger with month reservations. Every write is committed
// before its promise resolves: a kill -9 loses only what was in flight. The writes of a batch's
// rows (claim, save, settle, release) asked for in one turn of the event loop are committed
// together, in one transaction at the end of the turn (setImmediate), each caller answered after
// that commit; a failure rejects every caller of that transaction. Other writes commit at once,
// after what is queued. Several processes share the file; SQLite's write lock orders them, and
// the busy timeout makes a writer wait for another's transaction instead of failing.
//
// Claims, runs and month reservations carry an owner (host, pid, a random token) and a lease the
// owner renews while it lives. Another process takes them over when the lease ran out, or at once
// when the owner is a process of this host that no longer exists (a run killed with SIGKILL).
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, linkSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { Problem } from '../problem.js';
import { processIsGone } from '../processes.js';
import { isWriteFailure, writeProblem } from '../write-failures.js';
import { selectionOf } from './location.js';
import * as sqliteAdmin from './sqlite-admin.js';
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

/** The schema this release reads and writes (PRAGMA user_version). */
export const SCHEMA_VERSION = 2;
/** How long a claim, run or reservation outlives its last renewal. */
export const LEASE_MS = 20_000;
const RENEW_MS = 5_000;
const BUSY_TIMEOUT_MS = 10_000;

const SCHEMA = `
CREATE TABLE scopes (
  id INTEGER PRIMARY KEY,
  base_url TEXT NOT NULL,
  key_id TEXT NOT NULL,
  selection TEXT NOT NULL,
  UNIQUE (base_url, key_id, selection)
);
CREATE TABLE answers (
  scope INTEGER NOT NULL,
  domain TEXT NOT NULL,
  found INTEGER NOT NULL,
  record TEXT,
  credits INTEGER NOT NULL,
  bought_at INTEGER NOT NULL,
  run INTEGER,
  PRIMARY KEY (scope, domain)
) WITHOUT ROWID;
CREATE TABLE claims (
  scope INTEGER NOT NULL,
  domain TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (scope, domain)
) WITHOUT ROWID;
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  fingerprint TEXT NOT NULL,
  detail TEXT NOT NULL,
  state TEXT NOT NULL,
  owner TEXT,
  expires_at INTEGER,
  started_at INTEGER NOT NULL
);
CREATE INDEX runs_open ON runs (fingerprint) WHERE state = 'open';
CREATE TABLE ledger (
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  base_url TEXT NOT NULL,
  key_id TEXT NOT NULL,
  command TEXT NOT NULL,
  credits INTEGER NOT NULL,
  outcome TEXT NOT NULL
);
CREATE INDEX ledger_key_at ON ledger (key_id, at);
CREATE TABLE reservations (
  id INTEGER PRIMARY KEY,
  base_url TEXT NOT NULL,
  key_id TEXT NOT NULL,
  owner TEXT NOT NULL,
  amount INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  command TEXT NOT NULL DEFAULT '',
  at INTEGER NOT NULL DEFAULT 0
);
`;

/**
 * From version 1: a reservation says which command took it and when, so that one whose process
 * is gone becomes a possibly-charged entry of the ledger, in its month, under its command.
 */
const MIGRATIONS: Record<number, string> = {
  1: `ALTER TABLE reservations ADD COLUMN command TEXT NOT NULL DEFAULT '';
ALTER TABLE reservations ADD COLUMN at INTEGER NOT NULL DEFAULT 0;`,
};

interface AnswerRow {
  found: number;
  record: string | null;
  credits: number;
  bought_at: number;
  run: number | null;
}

interface Owned {
  owner: string;
  expires_at: number;
}

interface HeldRow extends Owned {
  id: number;
  amount: number;
  command: string;
  at: number;
}

/** A failure of SQLite as a problem naming the store's file: exit 8 for a refused write, else exit 2. */
export function storeProblem(path: string, error: unknown): Problem {
  if (error instanceof Problem) return error;
  if (isWriteFailure(error)) return writeProblem(error, path);
  const code = (error as { code?: string }).code;
  // SQLITE_ERROR at open: the tables are not the ones this schema version has (a damaged file,
  // or one some other program wrote).
  const notAStore = code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' || code === 'SQLITE_ERROR';
  return new Problem({
    code: 'store_unavailable',
    title: 'Cannot use the result store',
    detail: notAStore
      ? `${path} is not a company-data store (or is damaged)`
      : `${path}: ${(error as Error).message ?? String(error)}`,
    source: 'client',
    hint: notAStore
      ? `Move it aside with \`company-data store clear\` (it keeps the old file as ${path}.damaged-<time>), or give another file with --store <path>.`
      : 'Give another file with --store <path> (or COMPANY_DATA_STORE), or run with --no-store.',
    cause: error,
  });
}

/** The owner text of this process: host, pid and a token (a reused pid is another owner). */
function ownerOf(): string {
  return `${hostname()}\t${process.pid}\t${randomBytes(6).toString('hex')}`;
}

/** Whether the owner still holds what it owns: its lease runs, and its process exists. */
function alive(owned: Owned | undefined, me: string, now: number): boolean {
  if (!owned || owned.owner === me) return false;
  if (owned.expires_at <= now) return false;
  const [host, pid] = owned.owner.split('\t');
  return !(host === hostname() && processIsGone(Number(pid)));
}

/** The possibly-charged ledger entry of a hold nobody will settle. */
function lostEntry(r: HeldRow, baseUrl: string, keyId: string): LedgerEntry {
  return {
    at: r.at || Date.now(),
    baseUrl,
    keyId,
    command: r.command || 'unknown',
    credits: r.amount,
    outcome: 'unknown',
  };
}

/** Who holds a run, for the message of a second run on the same output. */
export function describeOwner(owner: string): string {
  const [host, pid] = owner.split('\t');
  return host === hostname() ? `process ${pid}` : `process ${pid} on ${host}`;
}

/** A write waiting for the transaction of this turn of the event loop. */
interface Queued {
  op: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

function answerOf(row: AnswerRow): StoredAnswer {
  return {
    found: row.found === 1,
    record: row.record === null ? null : (JSON.parse(row.record) as Record<string, unknown>),
    credits: row.credits,
    boughtAt: row.bought_at,
    run: row.run,
  };
}

function isFresh(row: AnswerRow, fresh: Freshness): boolean {
  if (fresh.run !== undefined && row.run === fresh.run) return true;
  return row.bought_at >= (row.found === 1 ? fresh.foundSince : fresh.notFoundSince);
}

/** The mark of a store found without its tables: its month caps cannot be trusted (ledgerLost). */
const LOST_TABLE = 'CREATE TABLE IF NOT EXISTS store_marks (name TEXT PRIMARY KEY, at INTEGER NOT NULL)';
const MARK_LOST = "INSERT OR REPLACE INTO store_marks (name, at) VALUES ('ledger_lost', ?)";

/**
 * A new store is made whole under another name and linked into place, so a store file without
 * tables is never one of ours being created: it was emptied. Paid data: 0600 from the start
 * (SQLite gives its -wal and -shm files the permissions of the database).
 */
function createIfMissing(path: string, Sqlite: typeof Database): void {
  if (existsSync(path)) return;
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  try {
    closeSync(openSync(draft, 'wx', 0o600));
    const db = new Sqlite(draft);
    try {
      // A rollback journal, not WAL, while it is a draft: every page is in the file itself when
      // it is linked into place (a WAL draft closed on a full disk keeps pages in its -wal file).
      // Opening it as the store turns WAL on.
      db.transaction(() => {
        db.exec(SCHEMA);
        db.pragma(`user_version = ${SCHEMA_VERSION}`);
      })();
    } finally {
      db.close();
    }
    try {
      linkSync(draft, path);
    } catch (error) {
      // Another process made it meanwhile (EEXIST): theirs is as good. A file system without
      // hard links: the file is made in place, as SQLite would.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') closeSync(openSync(path, 'a', 0o600));
    }
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${draft}${suffix}`, { force: true });
  }
}

/** Opens (creating it, 0600, in a 0700 directory) the store at `path`. */
export async function openSqliteStore(path: string): Promise<SqliteStore> {
  const { default: Sqlite } = await import('better-sqlite3');
  let db: Database.Database;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    createIfMissing(path, Sqlite);
    db = new Sqlite(path, { timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    throw storeProblem(path, error);
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new Problem({
        code: 'store_too_new',
        title: 'The result store is newer than this company-data',
        detail: `${path} has schema version ${version}; this release understands version ${SCHEMA_VERSION} at most`,
        source: 'client',
        hint: 'Upgrade company-data, or give another file with --store <path> (or run with --no-store).',
      });
    }
    if (version < SCHEMA_VERSION) {
      db.transaction(() => {
        // A second process may have created or upgraded it between the check and the lock.
        let current = db.pragma('user_version', { simple: true }) as number;
        if (current === 0) {
          // A store this release creates has its tables before it takes the store's name
          // (createIfMissing): a file without them was emptied (cut to 0 bytes, overwritten), and
          // its ledger is lost. The mark stays until `store clear --ledger` (ledgerLost()).
          const tables = db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'").get() as {
            n: number;
          };
          db.exec(SCHEMA);
          if (tables.n === 0) {
            db.exec(LOST_TABLE);
            db.prepare(MARK_LOST).run(Date.now());
          }
          current = SCHEMA_VERSION;
        }
        for (; current < SCHEMA_VERSION; current++) db.exec(MIGRATIONS[current]);
        db.pragma(`user_version = ${SCHEMA_VERSION}`);
      }).immediate();
    }
    chmodSync(path, 0o600);
    return new SqliteStore(path, db);
  } catch (error) {
    db.close();
    throw storeProblem(path, error);
  }
}

export class SqliteStore implements AnswerStore {
  readonly backend = 'sqlite' as const;
  private readonly me = ownerOf();
  private readonly statements;
  private readonly beginRunTx;
  private readonly reserveTx;
  private readonly settleTx;
  /** The writes queued in this turn, and the one transaction that commits them (flush). */
  private queue: Queued[] = [];
  private flushing: NodeJS.Immediate | undefined;
  private readonly queueTx;
  private readonly scopes = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  /** Things this process owns and renews: claims, open runs, reservations. */
  private owned = 0;
  private closed = false;

  constructor(
    readonly path: string,
    /** For `store info|prune|clear|export` (src/store/admin.ts). */
    readonly db: Database.Database,
  ) {
    const s = {
      scopeGet: db.prepare<[string, string, string], { id: number }>(
        'SELECT id FROM scopes WHERE base_url = ? AND key_id = ? AND selection = ?',
      ),
      scopePut: db.prepare('INSERT OR IGNORE INTO scopes (base_url, key_id, selection) VALUES (?, ?, ?)'),
      answerGet: db.prepare<[number, string], AnswerRow>(
        'SELECT found, record, credits, bought_at, run FROM answers WHERE scope = ? AND domain = ?',
      ),
      answerPut: db.prepare(
        'INSERT OR REPLACE INTO answers (scope, domain, found, record, credits, bought_at, run) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      claimGet: db.prepare<[number, string], Owned>(
        'SELECT owner, expires_at FROM claims WHERE scope = ? AND domain = ?',
      ),
      claimPut: db.prepare(
        'INSERT OR REPLACE INTO claims (scope, domain, owner, expires_at) VALUES (?, ?, ?, ?)',
      ),
      claimDrop: db.prepare('DELETE FROM claims WHERE scope = ? AND domain = ? AND owner = ?'),
      runGet: db.prepare<[string], Owned & { id: number; started_at: number; detail: string }>(
        "SELECT id, owner, expires_at, started_at, detail FROM runs WHERE fingerprint = ? AND state = 'open' ORDER BY id DESC LIMIT 1",
      ),
      runTake: db.prepare('UPDATE runs SET owner = ?, expires_at = ? WHERE id = ?'),
      runPut: db.prepare(
        "INSERT INTO runs (fingerprint, detail, state, owner, expires_at, started_at) VALUES (?, ?, 'open', ?, ?, ?)",
      ),
      runAbandon: db.prepare(
        "UPDATE runs SET state = 'abandoned', owner = NULL, expires_at = NULL WHERE id = ?",
      ),
      runEnd: db.prepare(
        'UPDATE runs SET state = ?, owner = NULL, expires_at = NULL WHERE id = ? AND owner = ?',
      ),
      ledgerPut: db.prepare(
        'INSERT INTO ledger (at, base_url, key_id, command, credits, outcome) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      // The account is the key: a month is summed over every base URL the key was used through.
      ledgerSum: db.prepare<[string, number, number], { total: number | null }>(
        'SELECT SUM(credits) AS total FROM ledger WHERE key_id = ? AND at >= ? AND at < ?',
      ),
      reservations: db.prepare<[string], HeldRow & { base_url: string }>(
        'SELECT id, owner, expires_at, amount, command, at, base_url FROM reservations WHERE key_id = ?',
      ),
      allReservations: db.prepare<[], HeldRow & { base_url: string; key_id: string }>(
        'SELECT id, owner, expires_at, amount, command, at, base_url, key_id FROM reservations',
      ),
      ownReservations: db.prepare<[string], HeldRow & { base_url: string; key_id: string }>(
        'SELECT id, owner, expires_at, amount, command, at, base_url, key_id FROM reservations WHERE owner = ?',
      ),
      reservationPut: db.prepare(
        'INSERT INTO reservations (base_url, key_id, owner, amount, expires_at, command, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      reservationDrop: db.prepare('DELETE FROM reservations WHERE id = ?'),
      // By id and owner: a row id freed by an orphaned hold may already be another owner's.
      reservationSettle: db.prepare('DELETE FROM reservations WHERE id = ? AND owner = ?'),
      renewClaims: db.prepare('UPDATE claims SET expires_at = ? WHERE owner = ?'),
      renewRuns: db.prepare('UPDATE runs SET expires_at = ? WHERE owner = ?'),
      renewReservations: db.prepare('UPDATE reservations SET expires_at = ? WHERE owner = ?'),
      dropClaims: db.prepare('DELETE FROM claims WHERE owner = ?'),
      releaseRuns: db.prepare('UPDATE runs SET owner = NULL, expires_at = NULL WHERE owner = ?'),
    };
    this.statements = s;
    this.queueTx = db.transaction((queued: Queued[]) => queued.map((q) => q.op()));
    this.beginRunTx = db.transaction(
      (fingerprint: string, detail: string, now: number): RunHandle | { busy: string } => {
        const open = s.runGet.get(fingerprint);
        const expires = Date.now() + LEASE_MS;
        if (open) {
          if (alive(open, this.me, Date.now())) return { busy: describeOwner(open.owner) };
          if (open.detail === detail) {
            s.runTake.run(this.me, expires, open.id);
            return { id: open.id, startedAt: open.started_at, resumed: true };
          }
          // The same output with another input or other options: a new run (the answers the old
          // one bought stay in the store, reused like any other).
          s.runAbandon.run(open.id);
        }
        const id = Number(s.runPut.run(fingerprint, detail, this.me, expires, now).lastInsertRowid);
        return { id, startedAt: now, resumed: false };
      },
    );
    this.reserveTx = (hold: HoldRequest): MonthReservation | null => {
      if (hold.cap !== undefined) {
        const { spent, held } = this.usage(hold.keyId, hold.window.from, hold.window.to);
        if (spent + held + hold.amount > hold.cap) return null;
      }
      const id = Number(
        s.reservationPut.run(
          hold.baseUrl,
          hold.keyId,
          this.me,
          hold.amount,
          Date.now() + LEASE_MS,
          hold.command,
          hold.at,
        ).lastInsertRowid,
      );
      return { id, amount: hold.amount };
    };
    this.settleTx = ({ reservation, entry }: Settlement): void => {
      // A reservation already turned into a possibly-charged entry (its lease ran out while this
      // process was stalled) keeps that entry, which is at least the charge: no second entry.
      if (reservation && s.reservationSettle.run(reservation.id, this.me).changes === 0) return;
      if (entry) this.putLedger(entry);
    };
    this.timer = setInterval(() => this.renew(), RENEW_MS);
    this.timer.unref();
  }

  async scopeId(scope: Scope): Promise<number> {
    const selection = selectionOf(scope);
    const key = `${scope.baseUrl}\n${scope.keyId}\n${selection}`;
    const known = this.scopes.get(key);
    if (known !== undefined) return known;
    const s = this.statements;
    const row = this.write(() => {
      const got = s.scopeGet.get(scope.baseUrl, scope.keyId, selection);
      if (got) return got;
      s.scopePut.run(scope.baseUrl, scope.keyId, selection);
      return s.scopeGet.get(scope.baseUrl, scope.keyId, selection)!;
    });
    this.scopes.set(key, row.id);
    return row.id;
  }

  /** Answered at once: SQLite reads are synchronous. */
  find(scope: number, domain: string, fresh: Freshness): StoredAnswer | undefined {
    const row = this.guard(() => this.statements.answerGet.get(scope, domain));
    return row && isFresh(row, fresh) ? answerOf(row) : undefined;
  }

  /** Queued: answered once the transaction of this turn has committed, before any request is sent. */
  async claim(scope: number, domain: string, fresh: Freshness, hold?: HoldRequest): Promise<Claim> {
    const s = this.statements;
    const claim = await this.queued((): Claim => {
      const row = s.answerGet.get(scope, domain);
      if (row && isFresh(row, fresh)) return { kind: 'answered', answer: answerOf(row) };
      const now = Date.now();
      if (alive(s.claimGet.get(scope, domain), this.me, now)) return { kind: 'busy' };
      s.claimPut.run(scope, domain, this.me, now + LEASE_MS);
      return hold ? { kind: 'claimed', reservation: this.reserveTx(hold) } : { kind: 'claimed' };
    });
    if (claim.kind === 'claimed') this.owned++;
    return claim;
  }

  /** Queued: the answer, the claim dropped and the settlement, all in the transaction of this turn. */
  async save(scope: number, domain: string, a: StoredAnswer, settlement?: Settlement): Promise<void> {
    const s = this.statements;
    await this.queued(() => {
      s.answerPut.run(
        scope,
        domain,
        a.found ? 1 : 0,
        a.record === null ? null : JSON.stringify(a.record),
        a.credits,
        a.boughtAt,
        a.run,
      );
      s.claimDrop.run(scope, domain, this.me);
      if (settlement) this.settleTx(settlement);
    });
  }

  async release(scope: number, domain: string): Promise<void> {
    await this.queued(() => this.statements.claimDrop.run(scope, domain, this.me));
  }

  async beginRun(fingerprint: string, detail: string, now: number): Promise<RunHandle | { busy: string }> {
    const run = this.write(() => this.beginRunTx.immediate(fingerprint, detail, now));
    if (!('busy' in run)) this.owned++;
    return run;
  }

  async endRun(run: RunHandle, complete: boolean): Promise<void> {
    this.write(() => this.statements.runEnd.run(complete ? 'done' : 'open', run.id, this.me));
  }

  async monthUsage(keyId: string, from: number, to: number): Promise<{ spent: number; held: number }> {
    // A write transaction: the holds of owners that are gone become ledger entries on the way.
    return this.write(() => this.db.transaction(() => this.usage(keyId, from, to)).immediate());
  }

  async reserve(hold: HoldRequest): Promise<MonthReservation | null> {
    const reservation = this.write(() => this.db.transaction(this.reserveTx).immediate(hold));
    if (reservation) this.owned++;
    return reservation;
  }

  /** Queued, like a save. */
  async settle(settlement: Settlement): Promise<void> {
    await this.queued(() => this.settleTx(settlement));
  }

  /** Turns every reservation whose owner is gone into a possibly-charged entry of the ledger. */
  async sweep(): Promise<void> {
    this.write(() =>
      this.db
        .transaction(() => {
          const now = Date.now();
          for (const r of this.statements.allReservations.all()) {
            if (r.owner !== this.me && !alive(r, this.me, now)) this.orphan(r, r.base_url, r.key_id);
          }
        })
        .immediate(),
    );
  }

  async lostHolds(): Promise<LedgerEntry[]> {
    const now = Date.now();
    return this.guard(() =>
      this.statements.allReservations
        .all()
        .filter((r) => r.owner !== this.me && !alive(r, this.me, now))
        .map((r) => lostEntry(r, r.base_url, r.key_id)),
    );
  }

  async ledgerLost(): Promise<number | undefined> {
    return this.guard(() => {
      const table = this.db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store_marks'")
        .get();
      if (!table) return undefined;
      const row = this.db.prepare("SELECT at FROM store_marks WHERE name = 'ledger_lost'").get() as
        | { at: number }
        | undefined;
      return row?.at;
    });
  }

  /** Runs of a live process: `store clear` and `prune` must not pull answers from under them. */
  async liveRuns(): Promise<string[]> {
    const now = Date.now();
    return this.write(() =>
      this.db
        .prepare<[], Owned>("SELECT owner, expires_at FROM runs WHERE state = 'open' AND owner IS NOT NULL")
        .all()
        .filter((run) => alive(run, this.me, now))
        .map((run) => describeOwner(run.owner)),
    );
  }

  async spend(by: SpendBy, since: number | undefined): Promise<SpendRow[]> {
    return this.write(() => sqliteAdmin.spendRows(this.db, by, since));
  }

  async counts(now: number, ages: AnswerAges): Promise<StoreCounts> {
    return this.write(() => sqliteAdmin.counts(this.path, this.db, now, ages));
  }

  /** The holds of owners that are gone become ledger entries first: a prune never drops one. */
  async prune(now: number, ages: AnswerAges): Promise<Removed> {
    await this.sweep();
    return this.write(() => sqliteAdmin.prune(this.db, now, ages));
  }

  async clear(ledger: boolean): Promise<Cleared> {
    await this.sweep();
    return this.write(() => sqliteAdmin.clear(this.db, ledger));
  }

  async *exportAnswers(): AsyncIterable<ExportedAnswer> {
    this.flush();
    yield* sqliteAdmin.exported(this.db);
  }

  async recordFields(): Promise<string[]> {
    return this.write(() => sqliteAdmin.recordFields(this.db));
  }

  /** Gives up everything this process owns (claims, reservations, runs), and closes the file. */
  async close(): Promise<void> {
    this.closeNow();
  }

  /** close(), at once (an exit handler cannot wait). */
  closeNow(): void {
    if (this.closed) return;
    // What is queued is committed first: its callers learn of it as ever.
    this.flush();
    this.closed = true;
    clearInterval(this.timer);
    const s = this.statements;
    try {
      if (this.owned > 0) {
        this.db
          .transaction(() => {
            s.dropClaims.run(this.me);
            // A reservation never settled belongs to a request whose answer never came: the
            // service may have charged it.
            for (const r of s.ownReservations.all(this.me)) this.orphan(r, r.base_url, r.key_id);
            s.releaseRuns.run(this.me);
          })
          .immediate();
      }
    } catch {
      // A full disk, say: the leases run out on their own.
    }
    this.db.close();
  }

  /**
   * This key's month: the ledger, and the reservations of live owners. A reservation whose owner is
   * gone (killed, or its lease ran out) becomes a possibly-charged entry first: never dropped.
   */
  private usage(keyId: string, from: number, to: number): { spent: number; held: number } {
    const s = this.statements;
    const now = Date.now();
    let held = 0;
    for (const r of s.reservations.all(keyId)) {
      if (r.owner === this.me || alive(r, this.me, now)) {
        if (r.at === 0 || (r.at >= from && r.at < to)) held += r.amount;
      } else this.orphan(r, r.base_url, keyId);
    }
    const spent = s.ledgerSum.get(keyId, from, to)?.total ?? 0;
    return { spent, held };
  }

  /** A reservation nobody will settle: the ledger keeps it as possibly charged. */
  private orphan(r: HeldRow, baseUrl: string, keyId: string): void {
    this.statements.reservationDrop.run(r.id);
    this.putLedger(lostEntry(r, baseUrl, keyId));
  }

  private putLedger(e: LedgerEntry): void {
    if (e.credits <= 0) return;
    this.statements.ledgerPut.run(e.at, e.baseUrl, e.keyId, e.command, e.credits, e.outcome);
  }

  private renew(): void {
    if (this.owned === 0 || this.closed) return;
    const s = this.statements;
    const expires = Date.now() + LEASE_MS;
    try {
      this.db
        .transaction(() => {
          s.renewClaims.run(expires, this.me);
          s.renewRuns.run(expires, this.me);
          s.renewReservations.run(expires, this.me);
        })
        .immediate();
    } catch {
      // Busy for longer than the timeout, or a full disk: the next renewal tries again.
    }
  }

  /**
   * A write for the transaction of this turn: resolves with what `op` returned once that
   * transaction has committed; rejects, with every other write of it, when it fails.
   */
  private queued<T>(op: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (value: unknown) => void, reject });
      this.flushing ??= setImmediate(this.flush);
    });
  }

  /** Commits the queued writes in one transaction, then answers their callers. */
  private readonly flush = (): void => {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    const queued = this.queue;
    if (queued.length === 0) return;
    this.queue = [];
    let results: unknown[];
    try {
      results = this.queueTx.immediate(queued);
    } catch (error) {
      const problem = storeProblem(this.path, error);
      for (const q of queued) q.reject(problem);
      return;
    }
    for (let i = 0; i < queued.length; i++) queued[i].resolve(results[i]);
  };

  /** A write (or a read of what was written) at once, after what is queued: calls keep their order. */
  private write<T>(run: () => T): T {
    this.flush();
    return this.guard(run);
  }

  /** Runs a statement; a failure of SQLite becomes a problem naming the store. */
  private guard<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      throw storeProblem(this.path, error);
    }
  }
}
