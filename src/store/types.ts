// The result store's interface: what a batch, a single lookup, the spend ledger and the store
// commands need of it. src/store/sqlite.ts implements it on one SQLite file, src/store/postgres.ts
// on a PostgreSQL database that several hosts share; the rules above them are written once.

import type { SharedRate } from '../pace/shared.js';

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

/**
 * A claim on a domain: ours to buy, someone else's (wait), or already answered meanwhile. A claim
 * asked for with a month hold carries it: the hold, or null when the month's cap has no room now
 * (the claim is ours all the same, to release).
 */
export type Claim =
  | { kind: 'claimed'; reservation?: MonthReservation | null }
  | { kind: 'busy' }
  | { kind: 'answered'; answer: StoredAnswer };

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
  /**
   * The cap of the calendar month (UTC) of `at`; undefined holds without a cap (the hold still
   * outlives the process, and counts against the month all the same).
   */
  cap: number | undefined;
  command: string;
  /** When the request is sent (epoch ms): the month its possible charge falls in (rules.ts, counterMonth). */
  at: number;
}

export interface MonthReservation {
  readonly id: number;
  readonly amount: number;
  /** When its request was sent: the month whose counter holds it. */
  readonly at: number;
}

/** What settles one request in the ledger: its month hold dropped, and its charge recorded. */
export interface Settlement {
  /** The month hold taken for the request (none without a month cap). */
  reservation?: MonthReservation;
  /** The ledger entry (recorded when it has credits). */
  entry?: LedgerEntry;
}

// ---------------------------------------------------------------------------------------------
// What `spend` and `store info|prune|clear|export` read and remove (src/store/admin.ts shapes them).

export const SPEND_GROUPS = ['month', 'day', 'command', 'key'] as const;
export type SpendBy = (typeof SPEND_GROUPS)[number];

export interface SpendTotal {
  /** Credits the service reported as charged. */
  charged: number;
  /** Credits of attempts whose answer never came: maybe charged, maybe not. */
  possibly_charged: number;
  /** Ledger entries: charged answers and unanswered attempts. */
  calls: number;
}

/**
 * One group of `spend --by <by>`: its columns (month 'YYYY-MM' / day 'YYYY-MM-DD' in UTC /
 * command / base_url and key), then the sums.
 */
export type SpendRow = SpendTotal & Record<string, string | number>;

export interface AnswerAges {
  /** Found answers older than this are expired (ms). */
  maxAgeMs: number;
  /** Not-found answers older than this are expired (ms). */
  notFoundMaxAgeMs: number;
}

/** The counts of `store info`. */
export type StoreCounts = {
  /** Bytes the store takes: the file and its write-ahead log, or the database's tables. */
  size_bytes: number;
  schema_version: number | null;
  answers: number;
  found: number;
  not_found: number;
  age_under_1_day: number;
  age_1_to_7_days: number;
  age_7_to_30_days: number;
  age_over_30_days: number;
  /** What `store prune` removes under `ages`. */
  expired: number;
  ledger_entries: number;
};

export interface Removed {
  found: number;
  not_found: number;
}

export interface Cleared {
  answers: number;
  ledger_entries: number;
}

/** One stored answer as `store export` writes it: the purchase, its scope, and the record. */
export interface ExportedAnswer {
  domain: string;
  found: boolean;
  /** ISO 8601. */
  bought_at: string;
  credits: number;
  base_url: string;
  key: string;
  products: string[] | null;
  include: string[] | null;
  max_credits: number | null;
  record: Record<string, unknown> | null;
}

/**
 * The result store, on either back end (src/store/sqlite.ts, src/store/postgres.ts). Every method
 * is asynchronous; each one that writes is one transaction, committed before its promise resolves,
 * so a kill -9 loses only what was in flight. A failure of the back end rejects with a Problem
 * naming the store: `store_unavailable` (exit 2) when it cannot be used at all, exit 8 for a write
 * the disk refused, and `store_lost` (exit 5) when a connection was lost in the middle of a run.
 */
export interface AnswerStore {
  /** Where the store is, as messages name it: the file, or the URL without its password. */
  readonly path: string;
  readonly backend: 'sqlite' | 'postgres';
  scopeId(scope: Scope): Promise<number>;
  /**
   * The fresh answer stored for `domain`. A back end that can answer at once does (SQLite): a
   * batch asks for every domain it meets, and a promise each is garbage to collect.
   */
  find(
    scope: number,
    domain: string,
    fresh: Freshness,
  ): StoredAnswer | undefined | Promise<StoredAnswer | undefined>;
  /**
   * Atomically: a fresh answer, or another live owner's claim, or a new claim of ours. With
   * `hold`, a claim of ours also takes the month hold in the same transaction (see reserve).
   */
  claim(scope: number, domain: string, fresh: Freshness, hold?: HoldRequest): Promise<Claim>;
  /**
   * Throws `store_lost` once what this store claimed may be taken over by others (PostgreSQL: the
   * session that shows this process alive is gone), so a claim taken earlier is not bought on
   * (its answer could not be kept). A store in this process (SQLite) never loses its claims.
   */
  assertOwned(): void;
  /** Stores the answer, drops our claim and settles `settlement`, in one transaction. */
  save(scope: number, domain: string, answer: StoredAnswer, settlement?: Settlement): Promise<void>;
  /** Drops our claim (the request failed: nothing is stored). */
  release(scope: number, domain: string): Promise<void>;
  /**
   * Opens a run on `fingerprint` (what it writes): continues the interrupted one when its `detail`
   * (what it reads and asks for) is the same, else starts anew; `busy` while a live process has it.
   */
  beginRun(fingerprint: string, detail: string, now: number): Promise<RunHandle | { busy: string }>;
  endRun(run: RunHandle, complete: boolean): Promise<void>;
  /**
   * This key's ledger in [from, to) (charged and possibly charged), and its live reservations,
   * through every base URL: the account is the key, however its service's address was spelt.
   */
  monthUsage(keyId: string, from: number, to: number): Promise<{ spent: number; held: number }>;
  /**
   * The counter of the calendar month (UTC) of `at` for this key (rules.ts, counterMonth): what the
   * ledger holds for it and its live holds, read from one row however long the ledger is. The holds
   * of owners that are gone become possibly-charged entries first (which moves nothing between the
   * counter's sum).
   */
  monthCount(keyId: string, at: number): Promise<{ spent: number; held: number }>;
  /**
   * Holds `amount` for a request about to be sent, in the store, so that it outlives this process:
   * with a `cap`, only when the month's ledger, the live holds and `amount` stay within it (null
   * otherwise), atomically across every process and host sharing the store. A hold whose owner is
   * gone becomes a possibly-charged ledger entry; never dropped.
   */
  reserve(hold: HoldRequest): Promise<MonthReservation | null>;
  /**
   * Drops the hold (if any, and only if still ours) and records the entry (when it has credits) in
   * one transaction. A hold already turned into a possibly-charged entry keeps that entry only.
   */
  settle(settlement: Settlement): Promise<void>;
  /** Turns the holds of owners that are gone into possibly-charged ledger entries. */
  sweep(): Promise<void>;
  /**
   * The holds of owners that are gone, read without writing (as the ledger entries sweep() would
   * make): `spend` counts them when the store cannot be written.
   */
  lostHolds(): Promise<LedgerEntry[]>;
  /**
   * When the store was found emptied (its file without tables: the ledger lost), until
   * `store clear --ledger`; undefined otherwise. A month cap is refused on such a store.
   */
  ledgerLost(): Promise<number | undefined>;
  /** The owners of runs in progress, as a message names them ("process 123 on host-b"). */
  liveRuns(): Promise<string[]>;
  /** `spend`: the ledger since `since` (epoch ms, inclusive; all when undefined), by group, in group order. */
  spend(by: SpendBy, since: number | undefined): Promise<SpendRow[]>;
  /** `store info` at `now`. */
  counts(now: number, ages: AnswerAges): Promise<StoreCounts>;
  /** `store prune`: answers older than their age, and lapsed claims and holds' rows, in one transaction. */
  prune(now: number, ages: AnswerAges): Promise<Removed>;
  /** `store clear`: every answer (and with `ledger`, the ledger too). */
  clear(ledger: boolean): Promise<Cleared>;
  /** `store export`: every stored answer by domain then scope, read in pages (a store may hold millions). */
  exportAnswers(): AsyncIterable<ExportedAnswer>;
  /** The record fields of every stored answer, in the order first met (domain, then scope). */
  recordFields(): Promise<string[]>;
  /** Gives up what this process owns (claims dropped, holds turned possibly charged, runs left open), and closes. */
  close(): Promise<void>;
  /**
   * The rate every host sharing this store shares on the key `keyId` at `baseUrl` (docs/store.md,
   * "The fleet's shared rate"); absent on a store of one host (SQLite), whose pacer paces alone.
   */
  sharedRate?(baseUrl: string, keyId: string): SharedRate;
}
