// What every back end of the result store must do, decided once. src/store/sqlite.ts and
// src/store/postgres/ only map these rules to their storage: they call these functions, or (where
// a rule must run inside the database to be atomic across hosts, as PostgreSQL's liveness test
// and its month lock) say in SQL what the function here says, naming it. The contract suite
// (test/store/contract.test.ts) runs the same cases against both.
import { hostname } from 'node:os';
import { processIsGone } from '../processes.js';
import type { AnswerAges, Freshness, LedgerEntry, Settlement, SpendBy, StoredAnswer } from './types.js';

export const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------------------------
// Owners and leases

/** How long a claim, run or hold outlives its last renewal. */
export const LEASE_MS = 20_000;
/** How often an open store renews the leases of what it owns (well inside LEASE_MS). */
export const RENEW_MS = 5_000;

/**
 * The owner of what a store claims, holds and runs: `host<TAB>pid<TAB>token`, the token random per
 * opening of the store, so that a reused pid is another owner. PostgreSQL's token also keys the
 * store's advisory lock.
 */
export function ownerText(token: string): string {
  return `${hostname()}\t${process.pid}\t${token}`;
}

/** Who owns something, as a message names it: "process 123", or "process 123 on host-b". */
export function describeOwner(owner: string): string {
  const [host, pid] = owner.split('\t');
  return host === hostname() ? `process ${pid}` : `process ${pid} on ${host}`;
}

/**
 * Whether an owner still holds what it owns: not ours, its lease runs, and it is not known to be
 * gone. How a back end knows an owner gone before its lease runs out is its own: SQLite asks this
 * host for the pid (`ownerProcessIsGone`); PostgreSQL looks for the owner's advisory lock in
 * pg_locks (`aliveSql` in src/store/postgres/sql.ts, the same rule in SQL, judged by the
 * database's clock). Every decision about another owner goes through this one test: a claim
 * taken over, a run resumed, a hold turned possibly charged, a claim dropped by prune or clear.
 */
export function ownerAlive(
  owned: { owner: string | null; expiresAt: number | null } | undefined,
  me: string,
  now: number,
  gone: (owner: string) => boolean,
): boolean {
  if (!owned || owned.owner === null || owned.owner === me) return false;
  if (owned.expiresAt === null || owned.expiresAt <= now) return false;
  return !gone(owned.owner);
}

/** An owner on this host whose process no longer exists (one of another user counts as alive). */
export function ownerProcessIsGone(owner: string): boolean {
  const [host, pid] = owner.split('\t');
  return host === hostname() && processIsGone(Number(pid));
}

// ---------------------------------------------------------------------------------------------
// Answers

/**
 * Whether a stored answer may be reused: bought by this run (a resumed run reuses all it bought,
 * whatever their age), or bought at or after the instant of its outcome.
 */
export function isFresh(answer: Pick<StoredAnswer, 'found' | 'boughtAt' | 'run'>, fresh: Freshness): boolean {
  if (fresh.run !== undefined && answer.run === fresh.run) return true;
  return answer.boughtAt >= (answer.found ? fresh.foundSince : fresh.notFoundSince);
}

/** The instants before which answers are expired (bought strictly earlier): what prune removes. */
export function expiry(now: number, ages: AnswerAges): { found: number; notFound: number } {
  return { found: now - ages.maxAgeMs, notFound: now - ages.notFoundMaxAgeMs };
}

/**
 * The bounds of `store info`'s age buckets: under a day (bought after `day`), one to seven days,
 * seven to thirty, older; each bound belongs to the older bucket.
 */
export function ageBounds(now: number): { day: number; week: number; month: number } {
  return { day: now - DAY_MS, week: now - 7 * DAY_MS, month: now - 30 * DAY_MS };
}

// ---------------------------------------------------------------------------------------------
// Runs

/**
 * What opening a run on a fingerprint does with the open run there (if any): `busy` while another
 * live owner has it, `resume` when it was interrupted with the same detail (what it reads and asks
 * for), else `abandon` it and start a new one (its answers stay, reused like any other).
 */
export function runDecision(
  open: { detail: string; alive: boolean } | undefined,
  detail: string,
): 'start' | 'busy' | 'resume' | 'abandon' {
  if (!open) return 'start';
  if (open.alive) return 'busy';
  return open.detail === detail ? 'resume' : 'abandon';
}

// ---------------------------------------------------------------------------------------------
// Month holds and the ledger

/**
 * The month-cap check: a hold of `amount` fits when the month's ledger (charged and possibly
 * charged), the live holds and the amount stay within the cap; reaching it exactly is allowed.
 */
export function holdFits(usage: { spent: number; held: number }, amount: number, cap: number): boolean {
  return usage.spent + usage.held + amount <= cap;
}

/**
 * The month a hold or a ledger entry counts in, as the key of the month's counter: the first
 * instant (epoch ms) of the calendar month (UTC) of `at`, when it was sent. The cap of a hold is
 * checked against the counter of its own month: what the key's ledger holds for that month plus its
 * live holds sent in it, kept in one row per key and month (`month_usage`) that every hold, settle
 * and possibly-charged entry updates in its own transaction, so a hold reads one row however long
 * the ledger is. The counter moves so (each back end's `count`):
 *
 * - a hold taken: `held` + its amount;
 * - a hold settled that was still ours: `held` - its amount; its entry, when recorded: `spent` + the credits;
 * - a hold nobody will settle (lostEntry): `held` - its amount, `spent` + the entry's credits;
 * - the ledger cleared on purpose (`store clear --ledger`): `spent` 0.
 *
 * A store of an older schema has its counters built from its ledger and holds when it is opened,
 * in the transaction that upgrades it.
 */
export function counterMonth(at: number): number {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/**
 * Whether a live hold counts against the month [from, to): one sent in it, or one written before
 * holds said when (`at` 0, a store of schema version 1), which counts against every month.
 */
export function holdInMonth(at: number, from: number, to: number): boolean {
  return at === 0 || (at >= from && at < to);
}

/** A hold as both back ends keep it. */
export interface HeldRow {
  at: number;
  baseUrl: string;
  keyId: string;
  command: string;
  amount: number;
}

/**
 * The ledger entry of a hold that nobody will settle (its owner is gone, or closed without an
 * answer): possibly charged, never dropped, in the month it was sent, under its command.
 */
export function lostEntry(hold: HeldRow, now: number): LedgerEntry {
  return {
    at: hold.at || now,
    baseUrl: hold.baseUrl,
    keyId: hold.keyId,
    command: hold.command || 'unknown',
    credits: hold.amount,
    outcome: 'unknown',
  };
}

/**
 * Settle once: what a settlement records, given whether its hold was still ours to drop (by id and
 * owner). A hold already turned into a possibly-charged entry (its owner was judged gone while it
 * was only stalled) keeps that entry, which is at least the charge: nothing more is recorded. An
 * entry of no credits is never recorded.
 */
export function entryToRecord(settlement: Settlement, holdWasOurs: boolean): LedgerEntry | undefined {
  if (settlement.reservation && !holdWasOurs) return undefined;
  return recordable(settlement.entry);
}

/** An entry worth a ledger row: one with credits (zero entries are skipped). */
export function recordable(entry: LedgerEntry | undefined): LedgerEntry | undefined {
  return entry && entry.credits > 0 ? entry : undefined;
}

// ---------------------------------------------------------------------------------------------
// spend

/**
 * The columns naming a group of `spend --by`, in order (each back end says how to compute each in
 * UTC): month 'YYYY-MM', day 'YYYY-MM-DD', the command, the base URL and the key. Rows come in
 * the order of these columns, compared byte by byte; `charged` sums the outcome 'charged',
 * `possibly_charged` every other outcome, `calls` counts entries.
 */
export const SPEND_GROUP_COLUMNS: Record<SpendBy, readonly string[]> = {
  month: ['month'],
  day: ['day'],
  command: ['command'],
  key: ['base_url', 'key'],
};

/** The `since` of `spend` as a bound: everything when undefined. */
export function spendSince(since: number | undefined): number {
  return since ?? Number.MIN_SAFE_INTEGER;
}
