// The caps in force for one command, and the ledger behind them: the run's --budget (in memory),
// the key's month (--budget-month or COMPANY_DATA_BUDGET_MONTH, a hold in the store that outlives
// the process), and the spend ledger that records every charge and every possibly-charged attempt.
// src/spend/purchase.ts is the one path that uses it; nothing else reserves, settles or records.
//
// The run's cap is held in memory before anything awaits: two workers can never both see room for
// one last request. A hold in the store is taken in one transaction that sums the ledger and every
// live hold, so two processes (or two hosts sharing a database) cannot either. A hold whose process is gone (kill -9, a reboot) is
// turned into a possibly-charged ledger entry by the next process that looks (src/store/sqlite.ts):
// it keeps counting against the month, and `spend` shows it.
import { isProblem, Problem, usageError } from '../problem.js';
import { baseOf, keyIdOf } from '../store/location.js';
import type {
  AnswerStore,
  Claim,
  HoldRequest,
  LedgerEntry,
  MonthReservation,
  Settlement,
} from '../store/types.js';
import { plural } from '../text.js';
import type { Context } from '../types.js';
import { type Budget, createBudget, type Reservation } from './budget.js';

/** Credits held for one request until its outcome is known. */
export interface Hold {
  readonly amount: number;
  settled: boolean;
  readonly run: Reservation;
  /** The hold in the store (under a month cap). */
  readonly stored?: MonthReservation;
  /** When it was taken: the month a possible charge falls in. */
  readonly at: number;
}

export type Cap = 'run' | 'month';

/** How long before a purse's first request another process's request may have been sent and still be charged after it. */
const OTHERS_IN_FLIGHT_MS = 5 * 60_000;

/** The batch's save of an answer, with the settlement of its purchase, in one transaction. */
export type Save = (settlement: Settlement | undefined) => Promise<void>;

export interface PurseOptions {
  /** --budget: this run's cap. */
  runCap?: number;
  /** The option that set the run's cap, as refusals name it (default --budget; mcp: --allow-spend). */
  runCapFlag?: string;
  /** --budget-month: the key's cap for the calendar month (UTC), across runs and commands. */
  monthCap?: number;
  /** The store holding the ledger; undefined with --no-store (nothing recorded). */
  ledger?: AnswerStore | (() => Promise<AnswerStore | undefined>);
  baseUrl: string;
  keyId: string;
  command: string;
  now: () => number;
  /** A ledger that cannot be written costs a warning (once), not the answer paid for. */
  warn?: (line: string) => void;
  /** -v: how a charge was read when the answer's figures disagree or cannot be right. */
  note?: (line: string) => void;
}

export class Purse {
  readonly runCap: number | undefined;
  readonly monthCap: number | undefined;
  /** The option that set the run's cap, as messages name it. */
  readonly runCapFlag: string;
  /** Which cap refused the last reservation that did not fit. */
  refusedBy: Cap | undefined;
  private readonly run: Budget;
  private store: AnswerStore | undefined;
  private waiters: Array<() => void> = [];
  /** Counts wake()s: a caller that looked for room while one happened looks again, never waits. */
  private wakes = 0;
  private warned = false;
  private opening: Promise<AnswerStore | undefined> | undefined;
  private balanceStart: number | undefined;
  private balanceLow: number | undefined;
  private firstHoldAt: number | undefined;

  constructor(private readonly options: PurseOptions) {
    this.runCap = options.runCap;
    this.monthCap = options.monthCap;
    this.runCapFlag = options.runCapFlag ?? '--budget';
    this.run = createBudget(options.runCap);
    if (typeof options.ledger === 'object') this.store = options.ledger;
    if (options.monthCap !== undefined && !this.store) {
      throw new Error('a month cap needs the store opened first');
    }
  }

  /** Credits charged so far through this purse (as the answers reported them). */
  get spent(): number {
    return this.run.spent;
  }

  /** Credits of attempts whose answer never came: the service may have charged them. */
  get possiblyCharged(): number {
    return this.run.possiblyCharged;
  }

  /** Credits held by requests in flight. */
  get reserved(): number {
    return this.run.reserved;
  }

  /**
   * Holds `amount` against every cap when there is room now; null otherwise (`refusedBy` says
   * which cap). The run's cap is checked and held before anything awaits, so two workers never
   * both see room for one last request; the month's hold is one transaction of the store, so two
   * processes (or hosts) cannot either. A failure of the store under a month cap throws its
   * problem: without the hold nothing may be sent.
   */
  async tryReserve(amount: number): Promise<Hold | null> {
    const { hold } = await this.claimWith(amount, async (request) => {
      if (!request) return { kind: 'claimed' };
      try {
        return { kind: 'claimed', reservation: await this.store!.reserve(request) };
      } catch (error) {
        // Without a month cap no cap depends on the store: a store that cannot be written costs
        // a warning (its charge cannot be recorded either), not the request.
        if (request.cap !== undefined) throw error;
        this.warnOnce(error, undefined);
        return { kind: 'claimed' };
      }
    });
    return hold;
  }

  /**
   * The store that holds the ledger, opened on first need: a hold is written there before its
   * request is sent, in every mode. Undefined with --no-store, or when the store cannot be opened
   * without a month cap (a warning says the ledger is not kept).
   */
  private async ledgerStore(): Promise<AnswerStore | undefined> {
    if (this.store || typeof this.options.ledger !== 'function') return this.store;
    this.opening ??= this.options.ledger().then(
      (store) => {
        this.store = store;
        return store;
      },
      (error: unknown) => {
        this.warnOnce(error, undefined);
        return undefined;
      },
    );
    return this.opening;
  }

  /**
   * A batch's claim on a domain and the hold of `amount` for it, in one transaction of the store
   * (`claim` is given the month's hold to take with it, when a month cap is in force). The hold is
   * null when the claim is not ours, or a cap has no room this moment (`refusedBy` says which).
   */
  async claimWith(
    amount: number,
    claim: (hold: HoldRequest | undefined) => Promise<Claim>,
  ): Promise<{ claim: Claim; hold: Hold | null }> {
    const run = this.run.tryReserve(amount);
    if (!run) {
      this.refusedBy = 'run';
      return { claim: await claim(undefined), hold: null };
    }
    const at = this.options.now();
    this.firstHoldAt ??= at;
    let got: Claim;
    let request: HoldRequest | undefined;
    try {
      // Write-ahead: the hold goes into the store with (or before) the request, capped or not, so
      // a process killed with the request in flight leaves it there as possibly charged.
      // No await when the store is known (a batch's): its claim joins the store's transaction of this turn.
      const store =
        this.store ?? (typeof this.options.ledger === 'function' ? await this.ledgerStore() : undefined);
      request = store && {
        baseUrl: this.options.baseUrl,
        keyId: this.options.keyId,
        amount,
        cap: this.monthCap,
        command: this.options.command,
        at,
      };
      got = await claim(request);
    } catch (error) {
      this.release(run);
      throw error;
    }
    if (got.kind !== 'claimed') {
      this.release(run);
      return { claim: got, hold: null };
    }
    if (request?.cap !== undefined && !got.reservation) {
      // Given back without waking the callers waiting for room: each would fail the same way and
      // wake the others again, forever. A settle or a stop wakes them when room may have come.
      this.run.settle(run, 0);
      this.refusedBy = 'month';
      return { claim: got, hold: null };
    }
    return { claim: got, hold: { amount, settled: false, run, stored: got.reservation ?? undefined, at } };
  }

  /** Gives back a run's hold that was never used, and lets waiting callers look again. */
  private release(run: Reservation): void {
    this.run.settle(run, 0);
    this.wake();
  }

  /**
   * A hold, waiting for requests in flight to settle when that may free room; null when no
   * request of `amount` can fit (or `stopped` says the caller gave up).
   */
  async reserve(amount: number, stopped?: () => boolean): Promise<Hold | null> {
    for (;;) {
      if (stopped?.()) return null;
      // A settle may come in while this caller awaits the store (its hold, then the month's
      // usage): it wakes the waiters registered then, not this caller, whose waiter is not yet
      // registered. So the wakes are counted, and one seen since the look means look again.
      const seen = this.wakes;
      const hold = await this.tryReserve(amount);
      if (hold) return hold;
      if (this.wakes !== seen) continue;
      if (this.reserved === 0 || (await this.isExhaustedFor(amount))) return null;
      if (this.wakes !== seen) continue;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** True when no request of `amount` can fit again, even with nothing in flight. */
  async isExhaustedFor(amount: number): Promise<boolean> {
    if (this.run.isExhaustedFor(amount)) {
      this.refusedBy = 'run';
      return true;
    }
    if (this.monthCap === undefined) return false;
    const usage = await this.store!.monthCount(this.options.keyId, this.options.now());
    if (usage.spent + amount > this.monthCap) {
      this.refusedBy = 'month';
      return true;
    }
    return false;
  }

  /**
   * Replaces the hold by the charge the service reported, and records it in the ledger. `save`
   * (the batch's save of the answer) is given the settlement to write with the answer, in one
   * transaction of the store; when it is given, a failure of the store is thrown, else it costs a
   * warning.
   */
  async settle(hold: Hold, charged: number, save?: Save): Promise<void> {
    if (hold.settled) {
      await save?.(undefined);
      return;
    }
    hold.settled = true;
    this.run.settle(hold.run, charged);
    this.wake();
    await this.write(hold, charged > 0 ? this.entry(hold.at, charged, 'charged') : undefined, save);
  }

  /**
   * Keeps the hold as possibly charged: the attempt was sent and its answer never came, or its
   * charge cannot be read (then `amount` may be above the hold: the larger counts).
   */
  async settleUnknown(hold: Hold, amount = hold.amount, save?: Save): Promise<void> {
    if (hold.settled) {
      await save?.(undefined);
      return;
    }
    hold.settled = true;
    this.run.settleUnknown(hold.run, amount);
    this.wake();
    await this.write(hold, this.entry(hold.at, amount, 'unknown'), save);
  }

  /**
   * A balance an answer reported, after its charge `charged`: a balance that falls by more than
   * this purse recorded is told at the end of a run (unaccounted()).
   */
  observeBalance(remaining: number | undefined, charged: number): void {
    if (remaining === undefined || !Number.isFinite(remaining)) return;
    this.balanceStart ??= remaining + charged;
    this.balanceLow = Math.min(this.balanceLow ?? remaining, remaining);
  }

  /**
   * Credits the service's balance fell by beyond what this purse recorded (charged and possibly
   * charged), between the first answer that reported a balance and the lowest one reported. An
   * answer sent before that first balance was read can only make the figure smaller: never an
   * alarm for nothing.
   */
  async unaccounted(): Promise<number> {
    if (this.balanceStart === undefined || this.balanceLow === undefined || this.firstHoldAt === undefined)
      return 0;
    const fell = this.balanceStart - this.balanceLow;
    let recorded = this.spent + this.possiblyCharged;
    // Other processes on the same key and store (a fleet's hosts) spend meanwhile too: what the
    // ledger holds for the key since this purse's first request counts, theirs included, and
    // theirs sent a little before it (a request sent then may be charged after the first balance
    // this purse read). A heuristic: it errs towards saying nothing.
    if (fell > recorded && this.store) {
      try {
        const from = this.firstHoldAt - OTHERS_IN_FLIGHT_MS;
        const usage = await this.store.monthUsage(this.options.keyId, from, Number.MAX_SAFE_INTEGER);
        recorded = Math.max(recorded, usage.spent + usage.held);
      } catch {
        // The store cannot be read now: this purse's own record is what there is.
      }
    }
    return Math.max(0, fell - recorded);
  }

  /** The warning of credits not accounted for (unaccounted()), when there are any. */
  async unaccountedWarning(): Promise<string | undefined> {
    const lost = await this.unaccounted();
    if (lost <= 0) return undefined;
    return `warning: the balance the service reported fell by ${credits(lost)} more than this run recorded as charged or possibly charged: credits not accounted for (compare \`company-data spend\` with the account)`;
  }

  /** A line for -v (a charge read the safe way). */
  note(line: string): void {
    this.options.note?.(line);
  }

  /** Wakes every caller waiting in reserve(), to look again (a stop, a settle). */
  wake(): void {
    this.wakes++;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** The problem of a reservation that did not fit, naming the cap that refused it. */
  refusal(amount: number, why = ''): Problem {
    const detail =
      this.refusedBy === 'month'
        ? `--budget-month ${this.monthCap} (this key's spend in this calendar month, UTC, across runs and commands) leaves no room for a request of up to ${credits(amount)}`
        : `${this.runCapFlag} ${this.runCap} leaves no room for a request of up to ${credits(amount)}; this run charged ${this.describeSpent()}`;
    return new Problem({ code: 'budget_exhausted', detail: `${detail}${why}`, source: 'client' });
  }

  /**
   * What each cap in force leaves now, in credits (never below 0): the run's cap less what this
   * purse charged, may have been charged and holds; the month's cap less the month's ledger and
   * every live hold of the key. A cap not in force is absent.
   */
  async left(): Promise<{ run?: number; month?: number }> {
    const room: { run?: number; month?: number } = {};
    if (this.runCap !== undefined) {
      room.run = Math.max(0, this.runCap - this.spent - this.possiblyCharged - this.reserved);
    }
    if (this.monthCap !== undefined) {
      const usage = await this.store!.monthCount(this.options.keyId, this.options.now());
      room.month = Math.max(0, this.monthCap - usage.spent - usage.held);
    }
    return room;
  }

  /** What this purse spent, for messages: "5 credits", or with what may have been charged. */
  describeSpent(): string {
    return this.possiblyCharged
      ? `${credits(this.spent)} and up to ${credits(this.possiblyCharged)} more possibly charged`
      : credits(this.spent);
  }

  private entry(at: number, amount: number, outcome: LedgerEntry['outcome']): LedgerEntry {
    const { baseUrl, keyId, command } = this.options;
    return { at, baseUrl, keyId, command, credits: amount, outcome };
  }

  private async write(hold: Hold, entry: LedgerEntry | undefined, save?: Save): Promise<void> {
    const store = entry || save ? await this.ledgerStore() : this.store;
    const settlement = store && (entry || hold.stored) ? { reservation: hold.stored, entry } : undefined;
    if (save) {
      await save(settlement);
      return;
    }
    if (!store || !settlement) return;
    try {
      await store.settle(settlement);
    } catch (error) {
      // Under a month cap the hold stays in the store and becomes possibly charged: the cap holds.
      this.warnOnce(error, entry);
    }
  }

  private warnOnce(error: unknown, entry: LedgerEntry | undefined): void {
    if (this.warned || !this.options.warn) return;
    this.warned = true;
    const why = isProblem(error) ? error.detail : error instanceof Error ? error.message : String(error);
    const what = entry ? `a charge of ${credits(entry.credits)}` : 'a charge';
    this.options.warn(`warning: the spend ledger could not record ${what} (${why})`);
  }
}

/** "1 credit", "2 credits", "20,000 credits": the one plural rule (src/text.ts). */
export function credits(n: number): string {
  return plural(n, 'credit');
}

/**
 * --budget-month, else COMPANY_DATA_BUDGET_MONTH; refused with --no-store, which keeps no ledger.
 * `runCap`: the command has a --budget of its own, which the message offers instead.
 */
export function monthCapOf(ctx: Context, flag: number | undefined, runCap = false): number | undefined {
  let cap = flag;
  if (cap === undefined) {
    const raw = ctx.env.COMPANY_DATA_BUDGET_MONTH;
    if (raw === undefined || raw === '') return undefined;
    cap = Number(raw);
    if (!Number.isSafeInteger(cap) || cap < 0)
      throw usageError(`COMPANY_DATA_BUDGET_MONTH must be a whole number of credits, got "${raw}"`);
  }
  if (ctx.store.path === false) {
    throw usageError(
      '--budget-month counts the spend recorded in the store, and --no-store keeps none',
      runCap
        ? 'Leave out --no-store, or cap this run alone with --budget.'
        : flag === undefined
          ? 'Leave out --no-store, or unset COMPANY_DATA_BUDGET_MONTH.'
          : 'Leave out --no-store, or leave out --budget-month.',
    );
  }
  return cap;
}

export interface PurseFlags {
  /** --budget of this run. */
  budget?: number;
  /** The option that set `budget`, when it is not --budget. */
  budgetFlag?: string;
  /** --budget-month as given (COMPANY_DATA_BUDGET_MONTH when absent). */
  budgetMonth?: number;
  /** The store to use instead of ctx.store (a batch's, opened already). */
  store?: AnswerStore;
}

/**
 * The purse of a command: its caps, and the ledger in ctx.store. Under a month cap the store is
 * opened now (a store that cannot be used stops the command before anything is sent); otherwise
 * on the first charge, and a store that cannot be used then costs a warning.
 */
export async function purseOf(ctx: Context, flags: PurseFlags = {}): Promise<Purse> {
  const monthCap = monthCapOf(ctx, flags.budgetMonth);
  const common = {
    runCap: flags.budget,
    runCapFlag: flags.budgetFlag,
    monthCap,
    baseUrl: baseOf(ctx.config),
    keyId: keyIdOf(ctx.config.apiKey?.value),
    command: ctx.command,
    now: ctx.now,
    warn: (line: string) => ctx.io.warn(line),
    note: (line: string) => ctx.io.debug(line),
  };
  if (flags.store) {
    if (monthCap !== undefined) await mustHoldLedger(flags.store, ctx.store.path);
    return new Purse({ ...common, ledger: flags.store });
  }
  if (ctx.store.path === false) return new Purse({ ...common, ledger: undefined });
  if (monthCap !== undefined) {
    const store = await ctx.store.open();
    await mustHoldLedger(store, ctx.store.path);
    return new Purse({ ...common, ledger: store });
  }
  return new Purse({ ...common, ledger: () => ctx.store.open() });
}

/**
 * A month cap counts the ledger: on a store found emptied (a file cut to 0 bytes, overwritten)
 * it would start the month again, so it is refused until the ledger is emptied on purpose.
 */
async function mustHoldLedger(store: AnswerStore, path: string | false): Promise<void> {
  const lost = await store.ledgerLost();
  if (lost === undefined) return;
  throw usageError(
    `the store ${path || ''} was found empty on ${new Date(lost).toISOString().slice(0, 19)}Z, its spend ledger lost: a month cap cannot count what this key spent`,
    'Restore the store from a backup, or start the ledger afresh on purpose with `company-data store clear --ledger` (this month is then counted from zero).',
  );
}

/** Whether a problem is one of the store's own (it cannot be read or written). */
export function isStoreProblem(error: unknown): boolean {
  return isProblem(error) && (error.code === 'store_unavailable' || error.exitCode === 8);
}
