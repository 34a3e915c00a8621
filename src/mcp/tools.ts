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
import { plural } from '../text.js';
import {
  answer,
  asProblem,
  fitRows,
  invalidArguments,
  type Json,
  problemResult,
  type ToolResult,
  truncation,
} from './answers.js';
import { estimateTool, OFF, paidDescription } from './estimate.js';
import { type Asking, gate, type InputRequired, isQuestion } from './gate.js';
import { type ServedCall, serving } from './kept.js';
import { breakdownTool, enrichTool, lookalikeTool, searchTool } from './paid-tools.js';
import {
  type ArgsOf,
  INPUTS,
  inputSchemaOf,
  type JsonSchema,
  outputSchemaOf,
  type PaidTool,
  type ToolName,
} from './schemas.js';
import { type Session, spendingOff } from './session.js';

/** free; estimate: free, prices the paid tools; paid: charges credits. All are listed. */
type Kind = 'free' | 'estimate' | 'paid';

/**
 * A call's stop (a client's cancel, a closed stdin, SIGTERM), its progress notifications, and
 * what its client can ask the person (src/mcp/gate.ts).
 */
export interface ToolCall extends OpControl {
  asking?: Asking;
}

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
      "Given a paid tool's name and arguments: the most credits the call can cost, what this session's cap (--allow-spend), the month's cap and the balance leave, what would fit when it does not, and whether the call needs the user's confirmation (with the token to carry once they agreed, for a client without elicitation). Free; sends nothing that charges.",
    kind: 'estimate',
    run: estimateTool,
  },
  enrich: {
    title: 'Enrich domains',
    description:
      'Company facts for 1-100 domains, from the data products asked for (default: the default products), projected to `include`.',
    kind: 'paid',
    run: enrichTool,
  },
  search: {
    title: 'Search companies',
    description:
      'Companies matching a business-language query and exact catalog filters, minus exclude_domains; rows carry the `include` fields. Use breakdown first to size a segment.',
    kind: 'paid',
    run: searchTool,
  },
  breakdown: {
    title: 'Break a segment down',
    description:
      'How a segment (query + filters) splits over one facet (country, site_category, ...): buckets with counts and shares, coverage, missing values.',
    kind: 'paid',
    run: breakdownTool,
  },
  lookalike: {
    title: 'Find lookalikes',
    description:
      'Companies similar to one or more seed domains, ranked; several seeds are fused into one ranking.',
    kind: 'paid',
    run: lookalikeTool,
  },
};

/** The tools whose world is closed and local: spend reads the ledger, estimate prices a call. */
const LOCAL_TOOLS: ReadonlySet<ToolName> = new Set(['spend', 'estimate']);

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

export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: Record<string, unknown>;
}

/** Every tool, the paid ones too in read-only mode: their description says how to turn them on. */
export async function listTools(session: Session): Promise<ListedTool[]> {
  return Promise.all(
    (Object.keys(TOOLS) as ToolName[]).map(async (name) => {
      const tool = TOOLS[name];
      const outputSchema = outputSchemaOf(name);
      const description =
        tool.kind === 'paid'
          ? await paidDescription(session, name as PaidTool, tool.description)
          : tool.description;
      return {
        name,
        title: tool.title,
        description: tool.kind === 'estimate' && !session.spending ? `${OFF} ${description}` : description,
        inputSchema: inputSchemaOf(name),
        ...(outputSchema ? { outputSchema } : {}),
        annotations: {
          title: tool.title,
          readOnlyHint: tool.kind !== 'paid',
          destructiveHint: false,
          idempotentHint: tool.kind !== 'paid',
          openWorldHint: !LOCAL_TOOLS.has(name),
        },
      };
    }),
  );
}

/** The cost of a paid call in its result's `_meta`, under this key, as in its content. */
export const COST_META_KEY = 'company-data/credits';

/** A paid tool's result, its cost in `_meta` too: what its content says, or 0 when nothing was sent. */
function withCost(result: ToolResult, charged: Json | undefined): ToolResult {
  const credits = (result.structuredContent?.credits as Json | undefined) ?? charged;
  return credits
    ? { ...result, _meta: { ...(result._meta as Json | undefined), [COST_META_KEY]: credits } }
    : result;
}

/**
 * Runs a tool as the call being served: an answer it cuts at the cap is kept whole for the
 * session, and the result links to it (a resource_link block after the text).
 */
async function runLinked(
  session: Session,
  name: string,
  run: () => Promise<ToolResult>,
): Promise<ToolResult> {
  const call: ServedCall = { keep: (whole) => session.kept.keep(name, whole, session.ctx.now()) };
  const result = await serving(call, run);
  const kept = call.kept && session.kept.read(call.kept);
  if (!kept) return result;
  const link = {
    type: 'resource_link' as const,
    uri: kept.uri,
    name: kept.name,
    mimeType: 'application/json',
    description: kept.description,
  };
  return { ...result, content: [...result.content, link] };
}

/** One tools/call: never throws; every failure is a tool error. */
export async function callTool(
  session: Session,
  name: string,
  args: unknown,
  call: ToolCall = {},
): Promise<ToolResult | InputRequired> {
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
  const asking = call.asking ?? { canElicit: false };
  try {
    if (tool.kind !== 'paid')
      return await runLinked(session, name, () => tool.run(session, parsed.data as never, call));
    const checked = parsed.data as Json;
    const gated = await gate(session, name as PaidTool, checked, asking);
    if (!gated.go) {
      return isQuestion(gated.result) ? gated.result : withCost(gated.result, NOTHING_SENT);
    }
    const { confirmation: _, ...toolArgs } = checked;
    return withCost(
      await runLinked(session, name, () => tool.run(session, toolArgs as never, call)),
      undefined,
    );
  } catch (error) {
    const problem = asProblem(error);
    if (problem.code === 'internal_bug' && error instanceof Error && error.stack) {
      session.ctx.io.error(error.stack);
    }
    const failed = await session.failure(problem);
    return tool.kind === 'paid' ? withCost(failed, undefined) : failed;
  }
}

/** The cost of a paid call refused before anything was sent. */
const NOTHING_SENT: Json = { charged: 0 };
