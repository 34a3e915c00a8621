// The /api endpoints once the request is known to be authenticated and allowed: they turn the
// engine's outcome into a reply and say what to charge. HTTP plumbing lives in server.ts.
import type { IncomingMessage } from 'node:http';
import { mediaType, readBody } from './body.js';
import { ERRORS_RESPONSE, FIELDS, PRODUCTS, productsWithoutDefaults, SANDBOX_KEYS } from './catalogs.js';
import type { Dataset } from './dataset.js';
import {
  type Caller,
  type EngineOutcome,
  lookupDomain,
  runLookalike,
  runSearch,
  type SearchInput,
} from './engine.js';
import { jsonReply, problemReply, type Reply } from './respond.js';

export type KeyName = keyof typeof SANDBOX_KEYS;

export const MAX_BODY_BYTES = 5_000_000;

/** A computed answer plus the credits it costs; `json` is kept so the escape fault can edit it. */
export interface Outcome {
  reply: Reply;
  charged: number;
  json?: Record<string, unknown>;
  /** Request body bytes read (for the request log). */
  bodyBytes?: number;
}

// The catalogs never change during a run: serialise once, not per request.
let catalogCache: Record<'products' | 'fields' | 'errors', Reply> | undefined;
let productsWithoutDefaultsReply: Reply | undefined;

/** `withoutDefaults`: the products catalog marks no product as default (catalogWithoutDefaults). */
export function catalogReply(name: 'products' | 'fields' | 'errors', withoutDefaults = false): Reply {
  if (name === 'products' && withoutDefaults) {
    productsWithoutDefaultsReply ??= jsonReply(200, { products: productsWithoutDefaults() });
    return productsWithoutDefaultsReply;
  }
  catalogCache ??= {
    products: jsonReply(200, { products: PRODUCTS }),
    fields: jsonReply(200, { fields: FIELDS }),
    errors: jsonReply(200, ERRORS_RESPONSE),
  };
  return catalogCache[name];
}

export function meOutcome(keyName: KeyName, balance: number, rateLimit: number): Outcome {
  const key = SANDBOX_KEYS[keyName];
  return {
    reply: jsonReply(200, {
      plan: key.plan,
      balance,
      key_name: keyName,
      capabilities: key.capabilities,
      rate_limit_per_second: rateLimit > 0 ? rateLimit : null,
    }),
    charged: 0,
  };
}

function fromEngine(outcome: EngineOutcome): Outcome {
  if (!outcome.ok) return { reply: problemReply(outcome.code, outcome.detail), charged: 0 };
  const charged = outcome.charged;
  // The engine builds a fresh body per call and leaves "credits.charged" to the server; edited in
  // place because copying every record is a measurable share of a lookup (docs/performance.md).
  const json = outcome.body;
  const existing = json.credits;
  json.credits =
    existing && typeof existing === 'object' ? Object.assign({ charged }, existing) : { charged };
  return { reply: jsonReply(200, json), charged, json };
}

/** First value of each query parameter (a repeated parameter does not change the meaning). */
export function firstValues(params: URLSearchParams): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of params) if (!(name in out)) out[name] = value;
  return out;
}

function decodeParam(raw: string): string | undefined {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

export function domainOutcome(
  ds: Dataset,
  rawParam: string,
  params: URLSearchParams,
  caller: Caller,
): Outcome {
  const domain = decodeParam(rawParam);
  if (domain === undefined)
    return { reply: problemReply('invalid_request', 'domain is not valid percent-encoding'), charged: 0 };
  return fromEngine(lookupDomain(ds, domain, firstValues(params), caller));
}

export function lookalikeOutcome(
  ds: Dataset,
  rawParam: string,
  params: URLSearchParams,
  caller: Caller,
): Outcome {
  const seed = decodeParam(rawParam);
  if (seed === undefined)
    return {
      reply: problemReply('invalid_request', 'seed domain is not valid percent-encoding'),
      charged: 0,
    };
  return fromEngine(runLookalike(ds, seed, firstValues(params), caller));
}

const SEARCH_MEMBERS = [
  'query',
  'query_operator',
  'filters',
  'include',
  'limit',
  'breakdown',
  'population',
  'breakdown_limit',
  'exclude_domains',
] as const;

export function searchGetOutcome(ds: Dataset, params: URLSearchParams, caller: Caller): Outcome {
  const input: SearchInput = {};
  for (const name of SEARCH_MEMBERS) {
    const value = params.get(name);
    if (value !== null) input[name] = value;
  }
  return fromEngine(runSearch(ds, input, 'GET', caller));
}

/** Checks 415 before reading and 413 while reading, so an oversized body is never held whole. */
export async function searchPostOutcome(ds: Dataset, req: IncomingMessage, caller: Caller): Promise<Outcome> {
  const type = mediaType(req.headers['content-type']);
  if (type !== 'application/json') {
    const detail = type ? `Content-Type ${type} is not application/json` : 'Content-Type is missing';
    return { reply: problemReply('unsupported_media_type', detail), charged: 0 };
  }
  const body = await readBody(req, MAX_BODY_BYTES);
  if (!body.ok) {
    const detail =
      body.reason === 'too_large'
        ? `the body is larger than ${MAX_BODY_BYTES} bytes`
        : 'the body could not be read completely';
    const code = body.reason === 'too_large' ? 'request_too_large' : 'invalid_request';
    return { reply: problemReply(code, detail), charged: 0, bodyBytes: body.bytes };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.text);
  } catch {
    return {
      reply: problemReply('invalid_request', 'the body is not valid JSON'),
      charged: 0,
      bodyBytes: body.bytes,
    };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return {
      reply: problemReply('invalid_request', 'the body must be a JSON object'),
      charged: 0,
      bodyBytes: body.bytes,
    };
  }
  const source = parsed as Record<string, unknown>;
  const input: SearchInput = {};
  for (const name of SEARCH_MEMBERS) if (name in source) input[name] = source[name];
  return { ...fromEngine(runSearch(ds, input, 'POST', caller)), bodyBytes: body.bytes };
}

/** What the `escape` fault puts where a company name goes. */
export const ESCAPE_NAME = 'Escape \x1b]0;pwned\x07Fault \x1b[31mCorp\x1b[0m';

/**
 * The `escape` fault: a found record (or rows) whose company_name carries terminal escapes, so the
 * client's sanitising can be tested on any domain. Charges stay what the engine decided.
 */
export function withEscapes(outcome: Outcome): Outcome {
  const json = outcome.json;
  if (!json) return outcome;
  const edited: Record<string, unknown> = { ...json };
  const dirtyRows = (rows: unknown) =>
    Array.isArray(rows)
      ? rows.map((row) => (row && typeof row === 'object' ? { ...row, company_name: ESCAPE_NAME } : row))
      : rows;
  if ('rows' in edited) edited.rows = dirtyRows(edited.rows);
  else if ('results' in edited && Array.isArray(edited.results) && edited.results.length > 0)
    edited.results = dirtyRows(edited.results);
  else if ('found' in edited && 'domain' in edited) {
    edited.found = true;
    delete edited.code;
    edited.company_name = ESCAPE_NAME;
  } else return outcome;
  return { ...outcome, reply: jsonReply(outcome.reply.status, edited), json: edited };
}
