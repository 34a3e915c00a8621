// One server session: the context every tool runs in, and, with --allow-spend, the ONE purse of the
// session. Every paid call buys through it (src/spend/purchase.ts), so the session's cap, the
// month's cap (--budget-month or COMPANY_DATA_BUDGET_MONTH) and the ledger hold across all calls,
// whichever tool makes them and however many run at once.
import { getAccount } from '../api/account.js';
import type { Pacer } from '../pace.js';
import { Problem, usageError } from '../problem.js';
import { pacerFor } from '../rate-option.js';
import { type Purse, purseOf } from '../spend/purse.js';
import type { Context, IO } from '../types.js';
import { type Json, problemResult, type ToolResult } from './answers.js';
import { Confirmations } from './confirmation.js';
import { KeptAnswers } from './kept.js';

/** --confirm-above when not given: a call that can cost more asks the person first. */
export const DEFAULT_CONFIRM_ABOVE = 5;

export interface McpFlags {
  /** --allow-spend: the session's cap; without it the paid tools are off. */
  allowSpend?: number;
  budgetMonth?: number;
  /** --confirm-above: a paid call whose worst case is above this many credits asks first. */
  confirmAbove?: number;
}

/** What a cap allows and what it leaves now. */
export interface CapLeft {
  cap: number;
  left: number;
}

export interface CapsLeft {
  session: CapLeft | null;
  month: CapLeft | null;
}

/** The most a call may cost now, and what sets it: the session's cap, the month's, or the balance. */
export interface Room {
  credits: number;
  by: 'session' | 'month' | 'balance' | null;
  caps: CapsLeft;
  /** The account's balance less the credits held by calls in flight; null when unknown. */
  balance: number | null;
}

export class Session {
  private sharedPacer: Pacer | undefined;
  /** The balance the last answer reported (or the account said); undefined until one did. */
  private knownBalance: number | undefined;
  /** The tokens of this session's confirmations (src/mcp/confirmation.ts). */
  readonly confirmations: Confirmations;
  /** Whole answers cut at the cap, kept as resources (src/mcp/kept.ts). */
  readonly kept = new KeptAnswers();

  constructor(
    readonly ctx: Context,
    /** The session's purse: undefined in read-only mode. */
    readonly purse: Purse | undefined,
    /** A paid call whose worst case is above this asks the person first (--confirm-above). */
    readonly confirmAbove = DEFAULT_CONFIRM_ABOVE,
  ) {
    this.confirmations = new Confirmations(ctx.now);
  }

  /** Keeps the balance an answer reported, for the next call's room. */
  noteBalance(remaining: number | null | undefined): void {
    if (typeof remaining === 'number' && Number.isFinite(remaining)) this.knownBalance = remaining;
  }

  /**
   * The balance less what calls in flight hold: the last one reported, or the account's (a free
   * GET /api/me) before any was. Unknown (null) when the account cannot be read: the service's
   * own refusal (insufficient_credits) then stands.
   */
  private async balance(): Promise<number | null> {
    if (this.knownBalance === undefined) {
      try {
        this.noteBalance((await getAccount(this.ctx, { spinner: false })).account.balance);
      } catch {
        return null;
      }
    }
    if (this.knownBalance === undefined) return null;
    return Math.max(0, this.knownBalance - (this.purse?.reserved ?? 0));
  }

  /** The most a call may cost now: the least of what the caps and the balance leave. */
  async room(): Promise<Room> {
    const caps = await this.caps();
    const balance = await this.balance();
    let room: Room = { credits: Number.POSITIVE_INFINITY, by: null, caps, balance };
    const limits: Array<[Room['by'], number | undefined]> = [
      ['session', caps.session?.left],
      ['month', caps.month?.left],
      ['balance', balance ?? undefined],
    ];
    for (const [by, left] of limits) {
      if (left !== undefined && left < room.credits) room = { ...room, credits: left, by };
    }
    return room;
  }

  /**
   * The pacer of lookalikes of several seeds, as `company-data lookalike` paces them (the key's
   * rate limit, and the RateLimit headers seen): one for the session, made on first use.
   */
  pacer(): Pacer {
    this.sharedPacer ??= pacerFor(this.ctx, undefined);
    return this.sharedPacer;
  }

  get spending(): boolean {
    return this.purse !== undefined;
  }

  /** What each cap in force leaves now. */
  async caps(): Promise<CapsLeft> {
    const purse = this.purse;
    if (!purse) return { session: null, month: null };
    const left = await purse.left();
    return {
      session: purse.runCap !== undefined ? { cap: purse.runCap, left: left.run ?? 0 } : null,
      month: purse.monthCap !== undefined ? { cap: purse.monthCap, left: left.month ?? 0 } : null,
    };
  }

  /** The `credits` member of every paid answer: charged now, the balance, what the caps leave. */
  async credits(charged: number | undefined, remaining: number | undefined): Promise<Json> {
    this.noteBalance(remaining);
    return {
      charged: charged ?? 0,
      remaining_balance: remaining ?? null,
      session_charged: this.purse?.spent ?? 0,
      session_possibly_charged: this.purse?.possiblyCharged ?? 0,
      caps: await this.caps(),
    };
  }

  /** One sentence on what the caps leave, for a summary line. */
  async describeCaps(): Promise<string> {
    const { session, month } = await await this.caps();
    const parts: string[] = [];
    if (session) parts.push(`${session.left} of --allow-spend ${session.cap} left this session`);
    if (month) parts.push(`${month.left} of the month's cap ${month.cap} left`);
    return parts.join('; ');
  }

  /** The tool error of a failed call; a refusal for credits says which cap and what to do. */
  async failure(problem: Problem): Promise<ToolResult> {
    if (problem.code === 'budget_exhausted') {
      const monthly = this.purse?.refusedBy === 'month';
      const advice = monthly
        ? "The month's cap (--budget-month or COMPANY_DATA_BUDGET_MONTH) is reached: do not retry. Tell the user; only they can raise the cap or wait for the next calendar month (UTC). The free tools (products, fields, account, spend, estimate) still work."
        : 'This session may spend no more: do not retry. Tell the user; only they can restart `company-data mcp` with a larger --allow-spend. The free tools (products, fields, account, spend, estimate) still work; answers bought already are reused from the store at no cost.';
      return problemResult(
        problem,
        { caps: await this.caps() },
        `${advice} Caps: ${await this.describeCaps()}.`,
      );
    }
    if (problem.code === 'insufficient_credits') {
      return problemResult(
        problem,
        { caps: await this.caps() },
        `The account's balance is too low for this call: do not retry. ${problem.hint} (the account tool shows the balance).`,
      );
    }
    return problemResult(problem, this.spending ? { caps: await this.caps() } : {});
  }
}

/** The refusal of a paid tool in read-only mode: a tool error that says how to allow it. */
export function spendingOff(tool: string): ToolResult {
  const what =
    tool === 'estimate' ? 'estimate prices the paid tools, which are off' : `${tool} can charge credits`;
  return problemResult(
    new Problem({
      code: 'spending_not_allowed',
      title: 'Paid tools are off',
      detail: `${what}: this server was started read-only (without --allow-spend)`,
      source: 'client',
    }),
    {},
    'Ask the user to restart the server with a session cap, e.g. `company-data mcp --allow-spend 50` (in the client\'s mcpServers "args"); until then use the free tools: products, fields, account, spend.',
  );
}

/** The IO of a serving session: stdout carries protocol messages only, so data "out" goes to stderr. */
export function servingIO(io: IO): IO {
  return Object.create(io, {
    out: { value: (text: string) => io.stderr.write(text) },
  }) as IO;
}

/** The session of `company-data mcp`: the purse is made once, here, for the whole session. */
export async function openSession(ctx: Context, flags: McpFlags): Promise<Session> {
  if (flags.allowSpend === undefined) {
    if (flags.budgetMonth !== undefined) {
      throw usageError(
        '--budget-month caps the paid tools, which are off without --allow-spend',
        'Add --allow-spend <n> to let the server spend, or drop --budget-month.',
      );
    }
    if (flags.confirmAbove !== undefined) {
      throw usageError(
        '--confirm-above asks before a paid call, and the paid tools are off without --allow-spend',
        'Add --allow-spend <n> to let the server spend, or drop --confirm-above.',
      );
    }
    return new Session(ctx, undefined);
  }
  const purse = await purseOf(ctx, {
    budget: flags.allowSpend,
    budgetFlag: '--allow-spend',
    budgetMonth: flags.budgetMonth,
  });
  return new Session(ctx, purse, flags.confirmAbove);
}
