// The result store on a PostgreSQL database that several hosts share: src/store/rules.ts mapped to
// tables that a fleet writes at once. Every write is one statement, or one short transaction, at
// READ COMMITTED, made safe across hosts by row locks: a claim is an INSERT … ON CONFLICT DO UPDATE
// that only takes over a row whose owner is gone, and a month hold raises the month's counter (one
// row per key and month) only when it fits, so two hosts can never both take the last room under a
// cap. What a batch asks for at one moment (finds, claims, saves) shares a statement (batches.ts).
//
// The owner's token is also the key of a session-level advisory lock that the store holds on a
// connection of its own (`lock`) for as long as it is open: another host judges an owner gone at
// once when that lock is not held, and otherwise when its lease ran out. Leases are judged by the
// database's clock, never the hosts', whose clocks may differ.
import type pg from 'pg';
import type { SharedRate } from '../../pace/shared.js';
import { selectionOf } from '../location.js';
import { counterMonth, describeOwner, isFresh, ownerText, RENEW_MS, runDecision } from '../rules.js';
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
} from '../types.js';
import * as admin from './admin.js';
import { batched } from './batches.js';
import { type ClaimItem, type ClaimRow, claimGroup, claimOf, claimRows } from './claims.js';
import { inTransaction, refOf } from './connection.js';
import { failureProblem, lostProblem } from './errors.js';
import { answerOf, dropLapsed, entryOf, holdIn, orphan, type SaveRow, saveRow, saveRows } from './ledger.js';
import { sharedRateOf } from './rate.js';
import { Priority, Sessions } from './sessions.js';
import { type AnswerRow, type HeldRow, named } from './sql.js';

const fresh = (row: AnswerRow, f: Freshness) => isFresh(answerOf(row), f);

export class PostgresStore implements AnswerStore {
  readonly backend = 'postgres' as const;
  /** The owner of what this store claims, holds and runs: host, pid, token (the lock's key). */
  readonly owner: string;
  private readonly scopes = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  /** Claims, runs or holds taken: there is something to renew, and to give up on close. */
  private owned = 0;
  /** Why the connection holding this store's advisory lock went, once it went. */
  private lockLost: unknown;
  private closing: Promise<void> | undefined;
  private readonly sessions: Sessions;

  constructor(
    /** The URL without its password. */
    readonly path: string,
    readonly schema: string,
    private readonly pool: pg.Pool,
    private readonly lock: pg.Client,
    token: string,
    private readonly password: string | undefined,
    /** Connections this process opens at most (the lock's and the pool's), as a refusal names them. */
    private readonly connections: number,
  ) {
    this.owner = ownerText(token);
    this.sessions = new Sessions(pool, lock, () => this.lockLost === undefined && !this.closing, connections);
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

  /** The fleet's turns on this key, kept in this database (src/store/postgres/rate.ts). */
  sharedRate(baseUrl: string, keyId: string): SharedRate {
    return sharedRateOf(this.pool, this.path, baseUrl, keyId);
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

  /** Batched with the finds of the same moment (batches.ts): one statement for them all. */
  async find(scope: number, domain: string, f: Freshness): Promise<StoredAnswer | undefined> {
    const row = await this.guard(() => this.answers(String(scope), domain));
    return row && fresh(row, f) ? answerOf(row) : undefined;
  }

  private readonly answers = batched<string, AnswerRow | undefined>(async (scope, domains) => {
    const { rows } = await this.session((db) =>
      named<AnswerRow & { domain: string }>(db, 'answersGet', [Number(scope), domains]),
    );
    const byDomain = new Map(rows.map((row) => [row.domain, row]));
    return domains.map((domain) => byDomain.get(domain));
  });

  /**
   * Batched with the claims of the same moment on the same scope, freshness and purse
   * (batches.ts), in one round trip: the claim function decides each domain (claims.ts).
   */
  async claim(scope: number, domain: string, f: Freshness, hold?: HoldRequest): Promise<Claim> {
    this.mustOwn();
    const row = await this.guard(() => this.claims(claimGroup(scope, f, hold), { domain, hold }));
    const claim = claimOf(row);
    if (claim.kind !== 'claimed') return claim;
    this.owned++;
    if (!hold) return claim;
    if (row.o_hold === null) {
      // No room: the key's holds of owners that are gone are recorded (they keep counting, as spent).
      await this.guard(() =>
        inTransaction(this.pool, (db) => orphan(db, 'orphanKey', [this.owner, hold.keyId])),
      );
      return { kind: 'claimed', reservation: null };
    }
    this.owned++;
    return { kind: 'claimed', reservation: { id: row.o_hold, amount: hold.amount, at: hold.at } };
  }

  assertOwned(): void {
    this.mustOwn();
  }

  private readonly claims = batched<ClaimItem, ClaimRow>((group, items) =>
    this.session((db) => claimRows(db, this.owner, group, items), Priority.Claim),
  );

  /** Where a statement runs: the lock's connection when idle, else the pool's (sessions.ts). */
  private session<T>(work: (db: pg.ClientBase) => Promise<T>, priority?: Priority): Promise<T> {
    return this.sessions.run(work, priority);
  }

  /** Batched with the saves and settlements of the same moment (batches.ts): one statement for them all. */
  async save(scope: number, domain: string, a: StoredAnswer, settlement?: Settlement): Promise<void> {
    await this.guard(() => this.tracked(this.saves('', saveRow(settlement, { scope, domain, answer: a }))));
  }

  private readonly saves = batched<SaveRow, void>(async (_group, rows) => {
    await this.session((db) => saveRows(db, this.owner, rows), Priority.Save);
    return rows.map(() => undefined);
  });

  async release(scope: number, domain: string): Promise<void> {
    await this.guard(() => this.session((db) => named(db, 'claimDrop', [scope, domain, this.owner])));
  }

  async beginRun(fingerprint: string, detail: string, now: number): Promise<RunHandle | { busy: string }> {
    this.mustOwn();
    type Open = { id: number; owner: string | null; started_at: number; detail: string; alive: boolean };
    const run = await this.transaction(async (db): Promise<RunHandle | { busy: string }> => {
      // Two hosts starting the same run at once: the second waits for the first's decision.
      await named(db, 'runLock', [fingerprint]);
      const open = (await named<Open>(db, 'runGet', [fingerprint, this.owner])).rows[0];
      const decision = runDecision(
        open && { detail: open.detail, alive: open.alive && open.owner !== null },
        detail,
      );
      if (open?.owner && decision === 'busy') return { busy: describeOwner(open.owner) };
      if (open && decision === 'resume') {
        await named(db, 'runTake', [open.id, this.owner]);
        return { id: open.id, startedAt: open.started_at, resumed: true };
      }
      if (open && decision === 'abandon') await named(db, 'runAbandon', [open.id]);
      const put = await named<{ id: number }>(db, 'runPut', [fingerprint, detail, this.owner, now]);
      return { id: put.rows[0].id, startedAt: now, resumed: false };
    });
    if (!('busy' in run)) this.owned++;
    return run;
  }

  async endRun(run: RunHandle, complete: boolean): Promise<void> {
    await this.guard(() => named(this.pool, 'runEnd', [complete ? 'done' : 'open', run.id, this.owner]));
  }

  async monthUsage(keyId: string, from: number, to: number): Promise<{ spent: number; held: number }> {
    return this.transaction(async (db) => {
      await orphan(db, 'orphanKey', [this.owner, keyId]);
      return (await named<{ spent: number; held: number }>(db, 'usage', [keyId, from, to])).rows[0];
    });
  }

  async monthCount(keyId: string, at: number): Promise<{ spent: number; held: number }> {
    return this.transaction(async (db) => {
      await orphan(db, 'orphanKey', [this.owner, keyId]);
      const row = (await named<{ spent: number; held: number }>(db, 'countGet', [keyId, counterMonth(at)]))
        .rows[0];
      return row ?? { spent: 0, held: 0 };
    });
  }

  async reserve(hold: HoldRequest): Promise<MonthReservation | null> {
    this.mustOwn();
    return this.guard(() => this.holdIn(hold));
  }

  async settle(settlement: Settlement): Promise<void> {
    await this.guard(() => this.tracked(this.saves('', saveRow(settlement))));
  }

  /** A database's tables are made on first use: an emptied one cannot be told from a new one. */
  async ledgerLost(): Promise<number | undefined> {
    return undefined;
  }

  async lostHolds(): Promise<LedgerEntry[]> {
    const { rows } = await this.guard(() => named<HeldRow>(this.pool, 'lostHolds', [this.owner]));
    return rows.map(entryOf);
  }

  async sweep(): Promise<void> {
    await this.transaction((db) => orphan(db, 'orphanAll', [this.owner]));
  }

  async liveRuns(): Promise<string[]> {
    const { rows } = await this.guard(() => named<{ owner: string }>(this.pool, 'liveRuns', [this.owner]));
    return rows.map((row) => describeOwner(row.owner));
  }

  async spend(by: SpendBy, since: number | undefined): Promise<SpendRow[]> {
    return this.guard(() => admin.spendRows(this.pool, by, since));
  }

  async counts(now: number, ages: AnswerAges): Promise<StoreCounts> {
    return this.guard(() => admin.counts(this.pool, this.schema, now, ages));
  }

  /** One transaction (rules as in SQLite): lost holds into the ledger, lapsed claims dropped, answers pruned. */
  async prune(now: number, ages: AnswerAges): Promise<Removed> {
    return this.transaction(async (db) => {
      await dropLapsed(db, this.owner);
      return admin.pruneAnswers(db, now, ages);
    });
  }

  /** One transaction as prune: lost holds become entries first, so `ledger` clears them too. */
  async clear(ledger: boolean): Promise<Cleared> {
    return this.transaction(async (db) => {
      await dropLapsed(db, this.owner);
      return admin.clearRows(db, ledger);
    });
  }

  exportAnswers(): AsyncIterable<ExportedAnswer> {
    return admin.exported(this.read);
  }

  recordFields(): Promise<string[]> {
    return admin.recordFields(this.read);
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private readonly read: admin.PageReader = (name, text, values) =>
    this.guard(async () => (await this.pool.query({ name, text, values })).rows);

  /** Writes asked for and not yet answered: closing waits for them (a batch gives its slot back before its save commits). */
  private readonly writing = new Set<Promise<unknown>>();

  private tracked<T>(write: Promise<T>): Promise<T> {
    this.writing.add(write);
    const done = () => this.writing.delete(write);
    write.then(done, done);
    return write;
  }

  private async shutDown(): Promise<void> {
    await Promise.allSettled([...this.writing]);
    clearInterval(this.timer);
    if (this.owned > 0) {
      try {
        await inTransaction(this.pool, async (db) => {
          await named(db, 'dropClaims', [this.owner]);
          // A hold never settled belongs to a request whose answer never came: maybe charged.
          await orphan(db, 'orphanMine', [this.owner]);
          await named(db, 'releaseRuns', [this.owner]);
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

  /**
   * A hold (rules.ts), counted among what this store owns. When there is no room, the key's holds
   * of owners that are gone are recorded as possibly charged (they keep counting, as spent).
   */
  private async holdIn(hold: HoldRequest): Promise<MonthReservation | null> {
    const id = await this.session((db) => holdIn(db, this.owner, hold));
    if (id === null) {
      await inTransaction(this.pool, (db) => orphan(db, 'orphanKey', [this.owner, hold.keyId]));
      return null;
    }
    this.owned++;
    return { id, amount: hold.amount, at: hold.at };
  }

  private transaction<T>(work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.guard(() => inTransaction(this.pool, work));
  }

  private async renew(): Promise<void> {
    if (this.owned === 0 || this.closing || this.lockLost !== undefined) return;
    try {
      await named(this.pool, 'renew', [this.owner]);
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
    if (this.lockLost !== undefined) throw lostProblem(this.path, this.lockLost, this.password);
  }

  /** Runs `work`; a failure of the server becomes a problem naming the store (never its password). */
  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw failureProblem(this.path, error, this.password, this.connections);
    }
  }
}
