// The tools' arguments and answers as zod schemas, and the JSON Schemas (draft 2020-12, without a
// `$schema` member: clients compile them with their own validator) that tools/list publishes.
import { MAX_K } from '../api/lookalike.js';
import { MAX_BREAKDOWN_LIMIT, MAX_SEARCH_LIMIT } from '../api/search.js';
import { MAX_EXCLUSIONS } from '../exclusions.js';
import { SPEND_GROUPS } from '../store/admin.js';
import { z } from './sdk.js';

export type JsonSchema = Record<string, unknown> & { type: 'object' };

export const PAID_TOOLS = ['enrich', 'search', 'breakdown', 'lookalike'] as const;
export type PaidTool = (typeof PAID_TOOLS)[number];
/** The most domains one enrich call takes, and the most seeds of one lookalike call. */
export const MAX_DOMAINS = 100;

const domain = z.string().min(1).max(2048).describe('a domain such as example.com, or a URL');
const fieldNames = z
  .array(z.string().min(1))
  .min(1)
  .max(100)
  .describe('field names to return (see the fields tool); the answer carries only these, plus domain');
const filters = z
  .record(z.string().min(1), z.array(z.string()).min(1))
  .describe(
    'exact catalog filters: filter name -> accepted values, e.g. {"country":["US","GB"]}; names and values from the fields tool',
  );
const query = z.string().max(1000).describe('business-language description, e.g. "shopify shoes"');
const confirmation = z
  .string()
  .min(1)
  .max(1000)
  .optional()
  .describe(
    'the token of a confirmation_required answer (or of estimate), given only after the user agreed to this exact call',
  );

export const INPUTS = {
  products: z.strictObject({}),
  fields: z.strictObject({
    facets: z.boolean().optional().describe('only the fields the breakdown tool accepts'),
    filters: z.boolean().optional().describe('only the fields usable as search filters'),
    product: z.string().min(1).optional().describe('only the fields of this product'),
  }),
  account: z.strictObject({}),
  spend: z.strictObject({
    since: z
      .string()
      .regex(/^\d{4}-\d{2}(-\d{2})?$/)
      .optional()
      .describe('count from this day or month on, UTC: YYYY-MM-DD or YYYY-MM'),
    by: z.enum(SPEND_GROUPS).optional().describe('one row per month (default), day, command or key'),
  }),
  estimate: z.strictObject({
    tool: z.enum(PAID_TOOLS).describe('the paid tool to estimate'),
    arguments: z.record(z.string(), z.unknown()).optional().describe('the arguments you would call it with'),
  }),
  enrich: z.strictObject({
    domains: z.array(domain).min(1).max(MAX_DOMAINS).describe(`1-${MAX_DOMAINS} company domains`),
    products: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe('data products to buy (see the products tool); default: the default products'),
    include: fieldNames.optional(),
    confirmation,
  }),
  search: z.strictObject({
    query: query.optional(),
    filters: filters.optional(),
    include: fieldNames.optional(),
    limit: z.int().min(1).max(MAX_SEARCH_LIMIT).optional().describe('number of rows (service default 25)'),
    exclude_domains: z
      .array(domain)
      .max(MAX_EXCLUSIONS)
      .optional()
      .describe('companies to leave out (domains or URLs)'),
    confirmation,
  }),
  breakdown: z.strictObject({
    field: z.string().min(1).describe('a breakdown facet (the fields tool with facets: true)'),
    query: query.optional(),
    filters: filters.optional(),
    limit: z
      .int()
      .min(1)
      .max(MAX_BREAKDOWN_LIMIT)
      .optional()
      .describe('number of buckets (service default 10); the rest is "other"'),
    confirmation,
  }),
  lookalike: z.strictObject({
    seeds: z
      .array(domain)
      .min(1)
      .max(MAX_DOMAINS)
      .describe('one or more seed domains; several are fused into one ranking'),
    k: z.int().min(1).max(MAX_K).optional().describe('number of candidates (default 10)'),
    filters: filters.optional(),
    include: fieldNames.optional(),
    evidence: z.boolean().optional().describe('say why each candidate matched'),
    confirmation,
  }),
} as const;

export type ToolName = keyof typeof INPUTS;
export type ArgsOf<N extends ToolName> = z.infer<(typeof INPUTS)[N]>;

const row = z.looseObject({});
const capLeft = z.object({ cap: z.number(), left: z.number() }).nullable();
const caps = z.object({ session: capLeft, month: capLeft });
const room = z.object({
  credits: z.number().nullable(),
  limited_by: z.enum(['session', 'month', 'balance']).nullable(),
  balance: z.number().nullable(),
});
const credits = z.object({
  charged: z.number(),
  remaining_balance: z.number().nullable(),
  session_charged: z.number(),
  session_possibly_charged: z.number(),
  caps,
});
const truncated = z
  .object({
    rows_shown: z.number(),
    rows_omitted: z.number(),
    how_to_get_more: z.string(),
    resource_uri: z.string().optional(),
  })
  .optional();

/** What an answer stopped before its end says (src/mcp/answers.ts incompleteOf). */
const incomplete = z
  .object({ reason: z.string(), detail: z.string(), not_done: z.array(z.string()) })
  .optional();

const OUTPUTS: Partial<Record<ToolName, z.ZodObject>> = {
  products: z.object({ products: z.array(row), truncated }),
  fields: z.object({ fields: z.array(row), truncated }),
  account: z.object({ account: row }),
  spend: z.object({ since: z.string().nullable(), by: z.string(), rows: z.array(row), total: row }),
  estimate: z.object({
    tool: z.string(),
    requests: z.number(),
    worst_case_credits: z.number(),
    caps,
    room,
    fits: z.boolean(),
    would_fit: z.object({ count: z.number(), arguments: z.looseObject({}).nullable() }).optional(),
    confirmation: z.object({
      needed: z.boolean(),
      how: z.enum(['none', 'elicitation', 'token']),
      token: z.string().optional(),
      expires_at: z.string().optional(),
    }),
  }),
  enrich: z.object({ results: z.array(row), credits, truncated, incomplete }),
  search: z.object({ total: z.number(), rows: z.array(row), credits, truncated }),
  breakdown: z.looseObject({ field: z.string(), buckets: z.array(row), credits }),
  lookalike: z.object({ results: z.array(row), seeds: z.array(row), credits, truncated, incomplete }),
};

/** The structured content of a tool error (src/mcp/answers.ts problemResult). */
const ERROR_OUTPUT = z.looseObject({
  error: z.object({
    code: z.string(),
    title: z.string(),
    detail: z.string(),
    remedy: z.string(),
    status: z.number(),
    retryable: z.boolean(),
  }),
});

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { target: 'draft-2020-12', io });
  return json;
}

export function inputSchemaOf(name: ToolName): JsonSchema {
  return jsonSchemaOf(INPUTS[name], 'input') as JsonSchema;
}

/** The answer's shape: the tool's own, or a tool error's. */
export function outputSchemaOf(name: ToolName): JsonSchema | undefined {
  const output = OUTPUTS[name];
  if (!output) return undefined;
  return { type: 'object', anyOf: [jsonSchemaOf(output, 'output'), jsonSchemaOf(ERROR_OUTPUT, 'output')] };
}
