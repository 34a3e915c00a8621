// What the paid tools say about their price before a call: the `estimate` tool (the worst case of
// a call, what is left, what would fit, and whether and how the call must be confirmed), and the
// part of each paid tool's description that gives its price per unit, points to estimate and
// names the caps of this session.
import { loadProducts } from '../api/catalogs.js';
import { learntPrice } from '../spend/prices.js';
import { lookupSelection } from '../spend/pricing.js';
import { credits } from '../spend/purse.js';
import { answer, invalidArguments, type Json, problemResult, type ToolResult } from './answers.js';
import { confirmable, confirmationOf, describeRoom, roomOf } from './gate.js';
import { type ArgsOf, INPUTS, type PaidTool } from './schemas.js';
import type { Session } from './session.js';
import type { ToolCall } from './tools.js';
import { whatFits, worstCaseOf } from './worst-case.js';

/** The first words of a paid tool's description (and estimate's) on a read-only server. */
export const OFF =
  'OFF on this server, which was started read-only: to use it, the user restarts it with a session cap, e.g. `company-data mcp --allow-spend 50` ("args": ["mcp", "--allow-spend", "50"] in the client\'s configuration).';

async function unitPrice(session: Session, tool: PaidTool): Promise<string> {
  switch (tool) {
    case 'enrich': {
      let each = "; the products tool lists each product's units";
      try {
        const [products, selection] = await Promise.all([
          loadProducts(session.ctx),
          lookupSelection(session.ctx, {}),
        ]);
        const units = products.map(
          (p) => `${p.id} ${credits(p.credit_units)}${p.default ? ' (default)' : ''}`,
        );
        each = ` (${units.join(', ')}); with the default products at most ${credits(selection.worstCase)} per domain`;
      } catch {
        // The catalogs cannot be read now: the products tool gives the units when they can.
      }
      return `Price: per domain found, the credit units of each product asked for that returns data${each}. A domain not found costs nothing, and one bought before and still fresh in the store is reused at no cost.`;
    }
    case 'search':
      return `Price: ${credits(learntPrice(session.ctx, 'search', undefined))} per search that returns rows; one that finds nothing costs nothing.`;
    case 'breakdown':
      return `Price: ${credits(learntPrice(session.ctx, 'breakdown', undefined))} per breakdown.`;
    default:
      return `Price: ${credits(learntPrice(session.ctx, 'lookalike', undefined))} per seed that has lookalikes.`;
  }
}

/** A paid tool's description: what it does, its price per unit, and the caps of this session. */
export async function paidDescription(session: Session, tool: PaidTool, what: string): Promise<string> {
  const price = await unitPrice(session, tool);
  const purse = session.purse;
  if (!purse) return `${OFF} ${what} ${price}`;
  const month = purse.monthCap !== undefined ? ` and the month's cap of ${credits(purse.monthCap)}` : '';
  return `${what} ${price} Call estimate first: it gives a call's worst case and what is left. This session may spend ${credits(purse.runCap ?? 0)} in all (--allow-spend)${month}; a call whose worst case is above ${credits(session.confirmAbove)} asks the user first (--confirm-above), and one that does not fit what is left is refused before anything is bought.`;
}

/** The estimate tool: prices a call of a paid tool without sending anything that charges. */
export async function estimateTool(
  session: Session,
  args: ArgsOf<'estimate'>,
  call: ToolCall,
): Promise<ToolResult> {
  const asking = call.asking ?? { canElicit: false };
  const parsed = INPUTS[args.tool].safeParse(args.arguments ?? {});
  if (!parsed.success) return problemResult(invalidArguments(args.tool, parsed.error));
  const priced = parsed.data as Json;
  const worst = await worstCaseOf(session, args.tool, priced);
  const room = await session.room();
  const fits = worst.credits <= room.credits;
  const needed = fits && worst.credits > session.confirmAbove;
  let confirmation: Json = { needed, how: needed ? (asking.canElicit ? 'elicitation' : 'token') : 'none' };
  let how = '';
  if (needed && asking.canElicit) {
    how = ' The call will ask the user to confirm it.';
  } else if (needed) {
    const issued = session.confirmations.issue(confirmable(args.tool, priced, worst));
    const { token, expires_at } = confirmationOf(args.tool, worst, issued);
    confirmation = { ...confirmation, token, expires_at };
    how = ` It needs the user's yes: ask them, and only if they agree call ${args.tool} with the same arguments and "confirmation": "${token}".`;
  }
  const fit = fits ? undefined : whatFits(priced, worst, room.credits);
  const requests = worst.requests === 1 ? '1 request' : `${worst.requests} requests`;
  const verdict = fits ? 'it fits what is left' : `it does NOT fit what is left: ${fit?.text}`;
  return answer(
    `${args.tool} would cost at most ${credits(worst.credits)} (${requests}); ${verdict}. ${describeRoom(room, session)}.${how}`,
    {
      tool: args.tool,
      requests: worst.requests,
      worst_case_credits: worst.credits,
      caps: room.caps,
      room: roomOf(room),
      fits,
      ...(fit ? { would_fit: { count: fit.count, arguments: fit.args ?? null } } : {}),
      confirmation,
    },
  );
}
