// The tools of `company-data mcp`: their names, descriptions, schemas and annotations as tools/list
// gives them, and the one dispatch of tools/call: arguments checked against the tool's schema,
// the read-only rule, then the tool; whatever fails comes back as a tool error.
import { getAccount } from '../api/account.js';
import { fieldDocument, productDocument } from '../api/catalog-views.js';
import { loadFields, loadProducts } from '../api/catalogs.js';
import { selectFields } from '../ops/catalogs.js';
import type { OpControl } from '../ops/control.js';
import { parseSince, readSpend } from '../ops/spend.js';
import { Problem } from '../problem.js';
import { credits } from '../spend/purse.js';
import { plural } from '../text.js';
import {
  answer,
  asProblem,
  fitRows,
  type Json,
  problemResult,
  type ToolResult,
  truncation,
} from './answers.js';
import { breakdownTool, enrichTool, lookalikeTool, searchTool, worstCaseOf } from './paid-tools.js';
import {
  type ArgsOf,
  INPUTS,
  inputSchemaOf,
  type JsonSchema,
  outputSchemaOf,
  type ToolName,
} from './schemas.js';
import { type Session, spendingOff } from './session.js';

/** free: always listed; estimate: free, listed with the paid tools; paid: charges credits. */
type Kind = 'free' | 'estimate' | 'paid';

/** A call's stop (a client's cancel, a closed stdin, SIGTERM) and its progress notifications. */
export type ToolCall = OpControl;

interface ToolSpec {
  title: string;
  description: string;
  kind: Kind;
  run(session: Session, args: never, call: ToolCall): Promise<ToolResult>;
}

const TOOLS: Record<ToolName, ToolSpec> = {
  products: {
    title: 'Data products',
    description:
      'The data products of the Company Data Service: id, description, credit units per lookup, fields. Free.',
    kind: 'free',
    run: async (session: Session) => {
      const products: Json[] = (await loadProducts(session.ctx)).map(productDocument);
      return listAnswer(
        'products',
        products,
        `${products.length} data products.`,
        'company-data products -o json',
      );
    },
  },
  fields: {
    title: 'Fields, filters and facets',
    description:
      'Every field: its product, whether and how it filters a search (the exact values), whether breakdown accepts it, its credit units. Free.',
    kind: 'free',
    run: async (session: Session, args: ArgsOf<'fields'>) => {
      const fields: Json[] = selectFields(await loadFields(session.ctx), args).map(fieldDocument);
      return listAnswer('fields', fields, `${fields.length} fields.`, 'company-data fields -o json');
    },
  },
  account: {
    title: 'Account',
    description: "The key's plan, balance and capabilities (GET /api/me). Free.",
    kind: 'free',
    run: async (session: Session) => {
      const { account } = await getAccount(session.ctx, { spinner: false });
      return answer(`Plan ${account.plan}, balance ${account.balance} credits.`, { account });
    },
  },
  spend: {
    title: 'Credits spent',
    description:
      'The spend ledger, as `company-data spend` reads it: credits charged and possibly charged (attempts whose answer never came), per month, day, command or key. Free.',
    kind: 'free',
    run: async (session: Session, args: ArgsOf<'spend'>) => {
      const report = await readSpend(session.ctx, {
        by: args.by ?? 'month',
        since: args.since === undefined ? undefined : parseSince(args.since),
      });
      const { since, by, rows, total } = report;
      const summary =
        rows.length === 0
          ? report.emptyMessage
          : `${plural(total.charged, 'credit')} charged, ${total.possibly_charged} possibly charged (${plural(total.calls, 'call')}).`;
      return answer(summary, { since, by, rows, total });
    },
  },
  estimate: {
    title: 'Estimate a paid call',
    description:
      "Given a paid tool's name and arguments: the most credits the call can cost, and what this session's cap (--allow-spend) and the month's cap leave. Free; sends nothing that charges.",
    kind: 'estimate',
    run: async (session: Session, args: ArgsOf<'estimate'>) => {
      const parsed = INPUTS[args.tool].safeParse(args.arguments ?? {});
      if (!parsed.success) return problemResult(invalidArguments(args.tool, parsed.error));
      const worst = await worstCaseOf(session, args.tool, parsed.data as Json);
      const caps = await session.caps();
      const fits = [caps.session, caps.month].every((cap) => !cap || cap.left >= worst.credits);
      return answer(
        `${args.tool} would cost at most ${credits(worst.credits)} (${worst.requests === 1 ? '1 request' : `${worst.requests} requests`}); ${fits ? 'the caps leave room for it' : 'the caps do NOT leave room for it'}. ${await session.describeCaps()}.`,
        { tool: args.tool, requests: worst.requests, worst_case_credits: worst.credits, caps, fits },
      );
    },
  },
  enrich: {
    title: 'Enrich domains',
    description:
      'Company facts for 1-100 domains, from the data products asked for (default: the default products), projected to `include`. Paid: a found record costs the credit units of each product that returns data; a missing domain costs nothing; answers already bought are reused at no cost.',
    kind: 'paid',
    run: enrichTool,
  },
  search: {
    title: 'Search companies',
    description:
      'Companies matching a business-language query and exact catalog filters, minus exclude_domains; rows carry the `include` fields. Paid: 1 credit per search that returns rows. Use breakdown first to size a segment.',
    kind: 'paid',
    run: searchTool,
  },
  breakdown: {
    title: 'Break a segment down',
    description:
      'How a segment (query + filters) splits over one facet (country, site_category, ...): buckets with counts and shares, coverage, missing values. Paid: 1 credit.',
    kind: 'paid',
    run: breakdownTool,
  },
  lookalike: {
    title: 'Find lookalikes',
    description:
      'Companies similar to one or more seed domains, ranked; several seeds are fused into one ranking. Paid: 1 credit per seed that has lookalikes.',
    kind: 'paid',
    run: lookalikeTool,
  },
};

function listAnswer(key: string, rows: Json[], summary: string, cli: string): ToolResult {
  const build = (kept: Json[], omitted: number): Json => ({
    [key]: kept,
    truncated: truncation(
      kept.length,
      omitted,
      `${omitted} more were left out; run \`${cli}\` for all of them.`,
    ),
  });
  const fitted = fitRows(rows, build);
  return answer(summary, build(fitted.rows, fitted.omitted));
}

function invalidArguments(
  tool: string,
  error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> },
): Problem {
  const issues = error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.map(String).join('.') : 'arguments';
    return `${where}: ${issue.message}`;
  });
  return new Problem({
    code: 'usage_error',
    title: 'Invalid arguments',
    detail: `${tool}: ${issues.join('; ')}`,
    source: 'client',
    hint: `Fix the arguments to match the input schema of ${tool} (tools/list) and call again.`,
  });
}

export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: Record<string, unknown>;
}

/** The tools a session lists: the free ones always; estimate and the paid ones with --allow-spend. */
export function listTools(session: Session): ListedTool[] {
  return (Object.keys(TOOLS) as ToolName[])
    .filter((name) => TOOLS[name].kind === 'free' || session.spending)
    .map((name) => {
      const tool = TOOLS[name];
      const outputSchema = outputSchemaOf(name);
      return {
        name,
        title: tool.title,
        description: tool.description,
        inputSchema: inputSchemaOf(name),
        ...(outputSchema ? { outputSchema } : {}),
        annotations: {
          title: tool.title,
          readOnlyHint: tool.kind !== 'paid',
          destructiveHint: false,
          idempotentHint: tool.kind !== 'paid',
          openWorldHint: true,
        },
      };
    });
}

/** One tools/call: never throws; every failure is a tool error. */
export async function callTool(
  session: Session,
  name: string,
  args: unknown,
  call: ToolCall = {},
): Promise<ToolResult> {
  if (!Object.hasOwn(TOOLS, name)) {
    return problemResult(
      new Problem({
        code: 'usage_error',
        title: 'Unknown tool',
        detail: `there is no tool "${name}"`,
        source: 'client',
        hint: `The tools are ${Object.keys(TOOLS).join(', ')}.`,
      }),
    );
  }
  const tool = TOOLS[name as ToolName];
  if (tool.kind !== 'free' && !session.spending) return spendingOff(name);
  const parsed = INPUTS[name as ToolName].safeParse(args ?? {});
  if (!parsed.success) return problemResult(invalidArguments(name, parsed.error));
  try {
    return await tool.run(session, parsed.data as never, call);
  } catch (error) {
    const problem = asProblem(error);
    if (problem.code === 'internal_bug' && error instanceof Error && error.stack) {
      session.ctx.io.error(error.stack);
    }
    return session.failure(problem);
  }
}
