// GET /api/domains/{domain}: the typed call and the adapter that reads its answer.
//
// docs/contract.md puts the record's fields at the top level next to `found`; the adapter also
// accepts a record nested under `record`, `data` or `company`, and charges under `credits`, a
// flat `credits_charged`, or only in the headers. A body it cannot read is an
// `unexpected_response` problem, never a crash.

import { readBodyCredits } from '../http/credits.js';
import { oneLine } from '../output/sanitize.js';
import { Problem } from '../problem.js';
import type { Client, Credits, RequestOptions } from '../types.js';
import type { DomainResult } from './types.js';

export interface EnrichQuery {
  products?: readonly string[];
  include?: readonly string[];
  maxCredits?: number;
}

export interface EnrichCallOptions {
  onRetry?: RequestOptions['onRetry'];
  /** A batch pacing its own refusals (RequestOptions.pacesRefusals). */
  pacesRefusals?: RequestOptions['pacesRefusals'];
  /** false in batches, which draw their own progress. */
  spinner?: false;
  signal?: AbortSignal;
}

export interface EnrichResponse {
  result: DomainResult;
  /** Charged and remaining from the headers of this response. */
  credits: Credits;
  attempts: number;
}

/** Envelope members that are about the lookup, not fields of the record. */
const META = new Set(['found', 'domain', 'code', 'credits', 'credits_charged', 'record', 'data', 'company']);
const NESTED = ['record', 'data', 'company'] as const;

export async function enrichDomain(
  ctx: { client: Client },
  domain: string,
  query: EnrichQuery = {},
  options: EnrichCallOptions & { maxCredits?: number } = {},
): Promise<EnrichResponse> {
  return domainLookup(ctx, query, options)(domain, options.onRetry, options.maxCredits);
}

export interface DomainLookupOptions extends EnrichCallOptions {
  /**
   * Read only these fields into the record (`domain` is the requested one), as a batch writes
   * them: no copy of the whole record per lookup.
   */
  fields?: readonly string[];
}

/**
 * Lookups of many domains with the same query and options (a batch): the query is built once
 * rather than per call.
 */
export function domainLookup(
  ctx: { client: Client },
  query: EnrichQuery = {},
  options: DomainLookupOptions = {},
): (domain: string, onRetry?: RequestOptions['onRetry'], maxCredits?: number) => Promise<EnrichResponse> {
  const search: RequestOptions['query'] = {};
  if (query.products?.length) search.products = query.products.join(',');
  if (query.include?.length) search.include = query.include.join(',');
  if (query.maxCredits !== undefined) search.max_credits = query.maxCredits;
  const { fields } = options;
  // A purchase passes its own onRetry and max_credits per call: what it holds for that call
  // (src/spend/purchase.ts), never more than --max-credits.
  return async (domain, onRetry = options.onRetry, maxCredits) => {
    const request: RequestOptions = {
      method: 'GET',
      path: `/api/domains/${encodeURIComponent(domain)}`,
      query:
        maxCredits === undefined
          ? search
          : { ...search, max_credits: Math.min(maxCredits, query.maxCredits ?? maxCredits) },
      auth: true,
      onRetry,
      signal: options.signal,
      pacesRefusals: options.pacesRefusals,
    };
    if (options.spinner === false) request.spinner = false;
    const response = await ctx.client.request<unknown>(request);
    return {
      result: adaptDomainResult(response.data, domain, response.credits, fields),
      credits: response.credits,
      attempts: response.attempts,
    };
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function finiteNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

function unreadable(detail: string): Problem {
  return new Problem({
    code: 'unexpected_response',
    title: 'Unexpected response',
    detail: `GET /api/domains: ${detail}`,
    source: 'server',
    retryable: false,
  });
}

/**
 * Reads a domain lookup body into a DomainResult; `requested` fills in a missing `domain`. With
 * `fields`, the record holds exactly those fields (null when absent) and `domain` is `requested`.
 */
export function adaptDomainResult(
  body: unknown,
  requested: string,
  _headerCredits: Credits = {},
  fields?: readonly string[],
): DomainResult {
  if (!isObject(body)) throw unreadable('the body is not a JSON object');
  const nestedKey = NESTED.find((key) => isObject(body[key]));
  const nested = nestedKey ? (body[nestedKey] as Record<string, unknown>) : undefined;

  let found: boolean;
  if (typeof body.found === 'boolean') found = body.found;
  else if (body.code === 'domain_not_found') found = false;
  else if (nested) found = true;
  else throw unreadable('the body says neither `found` nor `code`');

  // Field names come from the user and the service: own members only, on an object without a
  // prototype (a field named `constructor` or `__proto__` is a field like any other).
  const record: Record<string, unknown> = Object.create(null);
  const own = (source: Record<string, unknown>, field: string) =>
    Object.hasOwn(source, field) ? (source[field] ?? null) : null;
  if (found && fields) {
    for (const field of fields) {
      if (field === 'domain') record.domain = requested;
      else if (nested) record[field] = field === 'found' ? null : own(nested, field);
      else record[field] = META.has(field) ? null : own(body, field);
    }
  } else if (found) {
    const source = nested ?? body;
    for (const [key, value] of Object.entries(source)) {
      if (source === body ? META.has(key) : key === 'found' || key === 'domain') continue;
      record[key] = value;
    }
  }

  const domainValue = body.domain ?? nested?.domain;
  const domain = typeof domainValue === 'string' && domainValue !== '' ? oneLine(domainValue) : requested;

  const credits = isObject(body.credits) ? body.credits : undefined;
  let productCharges: Record<string, number> | undefined;
  if (isObject(credits?.products)) {
    productCharges = {};
    for (const [product, value] of Object.entries(credits.products)) {
      const n = finiteNumber(value);
      if (n !== undefined) productCharges[product] = n;
    }
  }

  // The figures as sent: src/spend/charges.ts decides what they are worth.
  const result: DomainResult = { found, domain, record, reported: readBodyCredits(body) };
  if (productCharges) result.productCharges = productCharges;
  return result;
}
