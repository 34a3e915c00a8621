// What stands between a paid call and its first credit: the call is refused when its worst case
// does not fit what the caps and the balance leave (saying what would fit), and a call that can
// cost more than --confirm-above waits for a person's yes. A client that declares form
// elicitation asks the person itself (an input_required result under 2026-07-28; the SDK sends
// elicitation/create to a 2025 client); one that does not gets a confirmation token to carry back
// in the call's `confirmation` argument once the person agreed. Nothing is bought until then.
import { Problem } from '../problem.js';
import { credits } from '../spend/purse.js';
import { type Json, problemResult, type ToolResult } from './answers.js';
import { type Confirmable, type Issued, rejectionText } from './confirmation.js';
import type { PaidTool } from './schemas.js';
import { inputRequired, inputResponse } from './sdk.js';
import type { Room, Session } from './session.js';
import { describeCall, type WorstCase, whatFits, worstCaseOf } from './worst-case.js';

/** What the client of one call can do, and what it sent back, for a confirmation. */
export interface Asking {
  /** It declared form elicitation (for this request under 2026-07-28; at initialize before). */
  canElicit: boolean;
  /** The answers it brought back to this call's questions (the retry of an input_required). */
  responses?: Record<string, unknown>;
  /** The requestState it echoed back with them. */
  state?: string;
}

/** The question a call asks through elicitation, as the SDK returns it from a tool handler. */
export type InputRequired = ReturnType<typeof inputRequired>;

export function isQuestion(result: ToolResult | InputRequired): result is InputRequired {
  return (result as InputRequired).resultType === 'input_required';
}

export type Gate = { go: true; worst: WorstCase } | { go: false; result: ToolResult | InputRequired };

/** The key of the one question a paid call asks, in inputRequests and inputResponses. */
const QUESTION = 'confirm';

/** The arguments a token is bound to: the items normalised, the token itself left out. */
export function confirmable(tool: PaidTool, args: Json, worst: WorstCase): Confirmable {
  const { confirmation: _, ...rest } = args;
  const bound = worst.items ? { ...rest, [worst.items.name]: worst.items.values } : rest;
  return { tool, args: bound, worstCase: worst.credits };
}

/** "50 of --allow-spend 50 left this session; the balance is 1,000 credits". */
export function describeRoom(room: Room, session: Session): string {
  const parts: string[] = [];
  if (room.caps.session)
    parts.push(`${room.caps.session.left} of --allow-spend ${room.caps.session.cap} left this session`);
  if (room.caps.month) parts.push(`${room.caps.month.left} of the month's cap ${room.caps.month.cap} left`);
  if (room.balance !== null) parts.push(`the balance is ${credits(room.balance)}`);
  if (session.purse?.reserved) parts.push(`${credits(session.purse.reserved)} held by calls in flight`);
  return parts.join('; ');
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The room as the structured content of an answer carries it. */
export function roomOf(room: Room): Json {
  return {
    credits: Number.isFinite(room.credits) ? room.credits : null,
    limited_by: room.by,
    balance: room.balance,
  };
}

/** The refusal of a call whose worst case is above what is left: nothing is sent. */
async function overRoom(session: Session, tool: PaidTool, args: Json, worst: WorstCase, room: Room) {
  const fit = whatFits(args, worst, room.credits);
  const { session: sessionCap, month } = room.caps;
  const by =
    room.by === 'balance'
      ? "the account's balance"
      : room.by === 'month'
        ? `the month's cap (--budget-month ${month?.cap})`
        : `this session's cap (--allow-spend ${sessionCap?.cap})`;
  const problem = new Problem({
    code: room.by === 'balance' ? 'insufficient_credits' : 'budget_exhausted',
    title: 'Call does not fit what is left',
    detail: `${describeCall(tool, args, worst)}, more than the ${credits(room.credits)} ${by} leaves; nothing was sent`,
    source: 'client',
  });
  const who =
    room.by === 'balance'
      ? 'only they can top up the account'
      : "only they can raise the cap (or wait for the next month, for the month's cap)";
  const advice =
    fit.count > 0
      ? `${capitalised(fit.text)}: call ${tool} with those, or tell the user; do not retry as is, ${who}. ${describeRoom(room, session)}.`
      : `${capitalised(fit.text)}: do not retry. Tell the user; ${who}. The free tools still work. ${describeRoom(room, session)}.`;
  return problemResult(
    problem,
    {
      caps: room.caps,
      room: roomOf(room),
      would_fit: { count: fit.count, arguments: fit.args ?? null },
    },
    advice,
  );
}

/** The answer of a call that needs a token it did not carry (or carried one that is refused). */
function tokenRequired(
  tool: PaidTool,
  args: Json,
  worst: WorstCase,
  room: Room,
  session: Session,
  issued: Issued,
  refused?: string,
): ToolResult {
  const what = describeCall(tool, args, worst);
  const problem = new Problem({
    code: 'confirmation_required',
    title: 'Confirmation required',
    detail: `${what}, above --confirm-above ${session.confirmAbove}; ${refused ? `${refused}; ` : ''}nothing was sent`,
    source: 'client',
  });
  return problemResult(
    problem,
    { confirmation: confirmationOf(tool, worst, issued), caps: room.caps, room: roomOf(room) },
    `Ask the user whether to ${what} (${describeRoom(room, session)}). Only if they agree, call ${tool} again with the same arguments and "confirmation": "${issued.token}" (good once, for ${Math.round((issued.expiresAt - session.ctx.now()) / 60_000)} minutes). Never confirm on the user's behalf.`,
  );
}

/** A token as answers carry it. */
export function confirmationOf(tool: PaidTool, worst: WorstCase, issued: Issued): Json {
  return {
    tool,
    worst_case_credits: worst.credits,
    token: issued.token,
    expires_at: new Date(issued.expiresAt).toISOString(),
  };
}

function declined(tool: PaidTool, args: Json, worst: WorstCase, why: string): ToolResult {
  return problemResult(
    new Problem({
      code: 'confirmation_declined',
      title: 'Not confirmed',
      detail: `${why}: ${describeCall(tool, args, worst)} was not sent; nothing was charged`,
      source: 'client',
    }),
    {},
    'Do not call again unless the user asks for it.',
  );
}

/** The question put to the person through the client's elicitation. */
function question(
  tool: PaidTool,
  args: Json,
  worst: WorstCase,
  room: Room,
  session: Session,
  token: string,
): InputRequired {
  return inputRequired({
    inputRequests: {
      [QUESTION]: inputRequired.elicit({
        mode: 'form',
        message: `An AI agent asks company-data to ${describeCall(tool, args, worst)}. ${describeRoom(room, session)}. Spend up to ${credits(worst.credits)}?`,
        requestedSchema: {
          type: 'object',
          properties: {
            confirm: {
              type: 'boolean',
              title: `Spend up to ${credits(worst.credits)}`,
              description: 'Tick to let this one call buy; leave it or decline to buy nothing.',
              default: false,
            },
          },
          required: ['confirm'],
        },
      }),
    },
    requestState: token,
  });
}

/** Elicitation: ask, or read the person's answer on the call's retry. */
function throughElicitation(
  session: Session,
  tool: PaidTool,
  args: Json,
  worst: WorstCase,
  room: Room,
  asking: Asking,
): Gate {
  const bound = confirmable(tool, args, worst);
  const answer = inputResponse(asking.responses, QUESTION);
  if (asking.state === undefined || answer.kind !== 'elicit') {
    return {
      go: false,
      result: question(tool, args, worst, room, session, session.confirmations.issue(bound).token),
    };
  }
  // The state is this session's token for the call: checked (and spent) whatever the answer.
  const redeemed = session.confirmations.redeem(asking.state, bound);
  if (answer.action !== 'accept' || answer.content?.confirm !== true) {
    return {
      go: false,
      result: declined(
        tool,
        args,
        worst,
        answer.action === 'cancel' ? 'The user dismissed the question' : 'The user declined',
      ),
    };
  }
  if (!redeemed.ok)
    return {
      go: false,
      result: declined(tool, args, worst, `The answer cannot be used: ${rejectionText(redeemed.why)}`),
    };
  return { go: true, worst };
}

/**
 * Decides whether `tool` may buy now with these (checked) arguments: it fits what is left, and it
 * is cheap enough or confirmed.
 */
export async function gate(session: Session, tool: PaidTool, args: Json, asking: Asking): Promise<Gate> {
  const worst = await worstCaseOf(session, tool, args);
  const room = await session.room();
  if (worst.credits > room.credits)
    return { go: false, result: await overRoom(session, tool, args, worst, room) };
  if (worst.credits <= session.confirmAbove) return { go: true, worst };
  if (asking.canElicit) return throughElicitation(session, tool, args, worst, room, asking);
  const bound = confirmable(tool, args, worst);
  const token = typeof args.confirmation === 'string' ? args.confirmation : undefined;
  if (token !== undefined) {
    const redeemed = session.confirmations.redeem(token, bound);
    if (redeemed.ok) return { go: true, worst };
    return {
      go: false,
      result: tokenRequired(
        tool,
        args,
        worst,
        room,
        session,
        session.confirmations.issue(bound),
        rejectionText(redeemed.why),
      ),
    };
  }
  return {
    go: false,
    result: tokenRequired(tool, args, worst, room, session, session.confirmations.issue(bound)),
  };
}
