// The result store's interface: what a batch, a single lookup and the spend ledger need of it.
// src/store/sqlite.ts implements it on one SQLite file; docs/architecture.md describes how a
// shared PostgreSQL store would keep the same rules for several hosts.

/** What an answer was bought for: the same domain under another scope is another purchase. */
export interface Scope {
  /** The service's base URL ('sandbox' for the in-process sandbox, whose port changes). */
  baseUrl: string;
  /** A hash of the key (never the key): `keyIdOf` in src/store/location.ts. */
  keyId: string;
  products: readonly string[] | undefined;
  include: readonly string[] | undefined;
  maxCredits: number | undefined;
}

export interface StoredAnswer {
  found: boolean;
  /** The fields as the output shows them; null when not found. */
  record: Record<string, unknown> | null;
  /** What the purchase cost. */
  credits: number;
  /** Epoch ms of the purchase. */
  boughtAt: number;
  /** The batch run that bought it (resumes of a run are the same run); null for a single lookup. */
  run: number | null;
}

/** What counts as fresh: answers bought at or after these instants (epoch ms). */
export interface Freshness {
  foundSince: number;
  notFoundSince: number;
  /** Answers this run bought are fresh whatever their age (a resumed run reuses them all). */
  run?: number;
}

/** A claim on a domain: ours to buy, someone else's (wait), or already answered meanwhile. */
export type Claim = { kind: 'claimed' } | { kind: 'busy' } | { kind: 'answered'; answer: StoredAnswer };

export interface RunHandle {
  readonly id: number;
  /** When the run first started (a resumed run keeps its start). */
  readonly startedAt: number;
  /** True when this invocation continues a run that was interrupted. */
  readonly resumed: boolean;
}

export interface LedgerEntry {
  at: number;
  baseUrl: string;
  keyId: string;
  command: string;
  credits: number;
  /** 'charged': reported by the service; 'unknown': an attempt whose answer never came. */
  outcome: 'charged' | 'unknown';
}

export interface HoldRequest {
  baseUrl: string;
  keyId: string;
  amount: number;
  /** The month's cap; undefined holds without a cap (the hold still outlives the process). */
  cap: number | undefined;
  window: { from: number; to: number };
  command: string;
  /** When the request is sent (epoch ms): the month its possible charge falls in. */
  at: number;
}

export interface MonthReservation {
  readonly id: number;
  readonly amount: number;
}

export interface AnswerStore {
  readonly path: string;
  scopeId(scope: Scope): number;
  find(scope: number, domain: string, fresh: Freshness): StoredAnswer | undefined;
  /** Atomically: a fresh answer, or another live owner's claim, or a new claim of ours. */
  claim(scope: number, domain: string, fresh: Freshness): Claim;
  /** Stores the answer and drops our claim, in one transaction. */
  save(scope: number, domain: string, answer: StoredAnswer): void;
  /** Drops our claim (the request failed: nothing is stored). */
  release(scope: number, domain: string): void;
  /**
   * Opens a run on `fingerprint` (what it writes): continues the interrupted one when its `detail`
   * (what it reads and asks for) is the same, else starts anew; `busy` while a live process has it.
   */
  beginRun(fingerprint: string, detail: string, now: number): RunHandle | { busy: string };
  endRun(run: RunHandle, complete: boolean): void;
  record(entry: LedgerEntry): void;
  /** This key's ledger in [from, to) (charged and possibly charged), and its live reservations. */
  monthUsage(baseUrl: string, keyId: string, from: number, to: number): { spent: number; held: number };
  /**
   * Holds `amount` for a request about to be sent, in the store, so that it outlives this process:
   * with a `cap`, only when the month's ledger, the live holds and `amount` stay within it (null
   * otherwise). A hold whose owner is gone becomes a possibly-charged ledger entry; never dropped.
   */
  reserve(hold: HoldRequest): MonthReservation | null;
  /**
   * Settles a hold (if any) and records `entry` (when it has credits) in one transaction: the
   * ledger never shows a charge twice, nor loses one between the two.
   */
  settle(reservation: MonthReservation | undefined, entry?: LedgerEntry): void;
  /** Runs `work` in one write transaction (store calls inside it join it). */
  atomically<T>(work: () => T): T;
  /** Turns the holds of owners that are gone into possibly-charged ledger entries. */
  sweep(): void;
  /** The owners of runs in progress, as a message names them. */
  liveRuns(): string[];
  close(): void;
}
