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
// What the store decides (freshness, leases, runs, the month cap, settling, lost holds) is
// src/store/rules.ts; this file maps it to SQLite.
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { selectionOf } from './location.js';
import {
  describeOwner,
  isFresh as freshAnswer,
  LEASE_MS,
  ownerText,
  RENEW_MS,
  runDecision,
} from './rules.js';
import * as sqliteAdmin from './sqlite-admin.js';
import { alive, SqliteLedger } from './sqlite-ledger.js';
import { openStoreFile, storeProblem } from './sqlite-schema.js';
import { type AnswerRow, type Owned, prepareStatements, type Statements } from './sqlite-statements.js';
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

export { SCHEMA_VERSION, storeProblem } from './sqlite-schema.js';

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
  return freshAnswer({ found: row.found === 1, boughtAt: row.bought_at, run: row.run }, fresh);
}

/** Opens (creating it, 0600, in a 0700 directory) the store at `path`. */
export async function openSqliteStore(path: string): Promise<SqliteStore> {
  const db = await openStoreFile(path);
  try {
    // Its statements are prepared here: a file with this version's number but not its tables fails.
    return new SqliteStore(path, db);
  } catch (error) {
    db.close();
    throw storeProblem(path, error);
  }
}

export class SqliteStore implements AnswerStore {
  readonly backend = 'sqlite' as const;
  /** The owner of what this store claims, holds and runs (rules.ts, ownerText). */
  readonly owner = ownerText(randomBytes(6).toString('hex'));
  private readonly me = this.owner;
  private readonly statements: Statements;
  private readonly beginRunTx;
  /** Month holds and the ledger, inside this store's transactions. */
  private readonly ledger: SqliteLedger;
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
    const s = prepareStatements(db);
    this.statements = s;
    this.ledger = new SqliteLedger(s, this.me);
    this.queueTx = db.transaction((queued: Queued[]) => queued.map((q) => q.op()));
    this.beginRunTx = db.transaction(
      (fingerprint: string, detail: string, now: number): RunHandle | { busy: string } => {
        const open = s.runGet.get(fingerprint);
        const expires = Date.now() + LEASE_MS;
        const decision = runDecision(
          open && { detail: open.detail, alive: alive(open, this.me, Date.now()) },
          detail,
        );
        if (open && decision === 'busy') return { busy: describeOwner(open.owner) };
        if (open && decision === 'resume') {
          s.runTake.run(this.me, expires, open.id);
          return { id: open.id, startedAt: open.started_at, resumed: true };
        }
        if (open && decision === 'abandon') s.runAbandon.run(open.id);
        const id = Number(s.runPut.run(fingerprint, detail, this.me, expires, now).lastInsertRowid);
        return { id, startedAt: now, resumed: false };
      },
    );
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

  /** Claims of this process are kept by its own file locks: never lost while it runs. */
  assertOwned(): void {}

  /** Queued: answered once the transaction of this turn has committed, before any request is sent. */
  async claim(scope: number, domain: string, fresh: Freshness, hold?: HoldRequest): Promise<Claim> {
    const s = this.statements;
    const claim = await this.queued((): Claim => {
      const row = s.answerGet.get(scope, domain);
      if (row && isFresh(row, fresh)) return { kind: 'answered', answer: answerOf(row) };
      const now = Date.now();
      if (alive(s.claimGet.get(scope, domain), this.me, now)) return { kind: 'busy' };
      s.claimPut.run(scope, domain, this.me, now + LEASE_MS);
      return hold ? { kind: 'claimed', reservation: this.ledger.reserve(hold) } : { kind: 'claimed' };
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
      if (settlement) this.ledger.settle(settlement);
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
    return this.write(() => this.db.transaction(() => this.ledger.usage(keyId, from, to)).immediate());
  }

  async monthCount(keyId: string, at: number): Promise<{ spent: number; held: number }> {
    return this.write(() => this.db.transaction(() => this.ledger.monthCount(keyId, at)).immediate());
  }

  async reserve(hold: HoldRequest): Promise<MonthReservation | null> {
    const reservation = this.write(() =>
      this.db.transaction((h: HoldRequest) => this.ledger.reserve(h)).immediate(hold),
    );
    if (reservation) this.owned++;
    return reservation;
  }

  /** Queued, like a save. */
  async settle(settlement: Settlement): Promise<void> {
    await this.queued(() => this.ledger.settle(settlement));
  }

  /** Turns every reservation whose owner is gone into a possibly-charged entry of the ledger. */
  async sweep(): Promise<void> {
    this.write(() => this.db.transaction(() => this.ledger.sweep()).immediate());
  }

  async lostHolds(): Promise<LedgerEntry[]> {
    return this.guard(() => this.ledger.lostHolds());
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

  /**
   * One transaction, as on PostgreSQL: the holds of owners that are gone become ledger entries (a
   * prune never drops one), the claims of owners that are gone are dropped, and the expired
   * answers are removed; a failure keeps all of it as it was.
   */
  async prune(now: number, ages: AnswerAges): Promise<Removed> {
    return this.write(() =>
      this.db
        .transaction(() => {
          this.ledger.dropLapsed();
          return sqliteAdmin.pruneAnswers(this.db, now, ages);
        })
        .immediate(),
    );
  }

  /** One transaction as prune: lost holds become entries first, so `ledger` clears them too. */
  async clear(ledger: boolean): Promise<Cleared> {
    const cleared = this.write(() =>
      this.db
        .transaction(() => {
          this.ledger.dropLapsed();
          return sqliteAdmin.clearRows(this.db, ledger);
        })
        .immediate(),
    );
    sqliteAdmin.vacuum(this.db);
    return cleared;
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
            this.ledger.orphanOwn();
            s.releaseRuns.run(this.me);
          })
          .immediate();
      }
    } catch {
      // A full disk, say: the leases run out on their own.
    }
    this.db.close();
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
