// `company-data api`: a raw request for endpoints and parameters the CLI does not model yet. It goes
// through the same client as every command, so auth, retries, problems, credits and redaction
// behave exactly as they do elsewhere; only the request is built from the command line.

import { readFile } from 'node:fs/promises';
import { Argument, type Command, InvalidArgumentError } from 'commander';
import { BUDGET_MONTH_OPTION, type CommandKit } from '../command-kit.js';
import { Problem, usageError } from '../problem.js';
import type { RawKind } from '../spend/buy.js';
import type { ApiResponse, Context, HttpMethod, RequestOptions } from '../types.js';

export const API_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The catalogs are public: the key is never sent to them (DESIGN.md, safe by default). */
export const PUBLIC_PATHS: readonly string[] = ['/api/products', '/api/fields', '/api/errors'];
/**
 * What `api` sends without buying: the catalogs and the account, matched after the normalisation a
 * server may apply (normalisedApiPath). Every other path, on every method, is bought.
 */
export const FREE_PATHS: readonly string[] = [...PUBLIC_PATHS, '/api/me'];

/**
 * A path as a lenient server may read it: percent-escapes decoded, case folded, backslashes as
 * slashes, runs of slashes collapsed, dot segments resolved, no trailing slash. Only used to
 * decide what is free: the path is sent as typed.
 */
export function normalisedApiPath(path: string): string {
  let text = path;
  try {
    text = decodeURIComponent(text);
  } catch {
    // A broken escape: the server reads it some other way; the path stays as typed.
  }
  const segments: string[] = [];
  for (const segment of text.toLowerCase().replace(/\\/g, '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

/** What a raw request to `path` buys: nothing (the catalogs, the account), a domain lookup, or another paid answer. */
export function apiPurchaseOf(path: string): 'free' | RawKind {
  const normal = normalisedApiPath(path);
  if (FREE_PATHS.includes(normal)) return 'free';
  if (normal.startsWith('/api/domains/')) return 'domain';
  if (normal.startsWith('/api/lookalike/')) return 'lookalike';
  return 'paid';
}

export interface ApiFlags {
  budgetMonth?: number;
  query?: string[];
  body?: string;
  auth?: boolean;
}

function parseMethod(raw: string): HttpMethod {
  const method = raw.toUpperCase();
  if (!(API_METHODS as readonly string[]).includes(method))
    throw new InvalidArgumentError(`method must be one of ${API_METHODS.join(', ')}, got "${raw}"`);
  return method as HttpMethod;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function register(program: Command, kit: CommandKit): void {
  program
    .command('api')
    .description('Send a raw request to an /api/ endpoint with your key; prints the response JSON')
    .addArgument(new Argument('<method>', `HTTP method: ${API_METHODS.join(', ')}`).argParser(parseMethod))
    .argument('<path>', 'endpoint path under /api/, e.g. /api/me or domains/acme-shoes.com')
    .option('--query <name=value>', 'query parameter; repeatable (a value may contain "=")', collect)
    .option('--body <json|@file>', 'JSON body: inline text, @file, or @- for stdin')
    .option('--no-auth', 'do not send the key (automatic for /api/products, /api/fields, /api/errors)')
    .option(...BUDGET_MONTH_OPTION)
    .addHelpText(
      'after',
      `
The request uses the configured base URL, key and auth header, retries retryable failures,
and fails like any command (exit 2 for a 400/413/415/422 problem, 3 for the key, 4 for
credits, 5 when unavailable). A path without a leading slash is relative to /api/. Credits
charged are reported on stderr in a terminal; the body is always the response JSON.

Endpoints (docs/contract.md): GET /api/me, GET /api/products, GET /api/fields, GET /api/errors,
GET /api/domains/<domain>, GET /api/lookalike/<domain>, GET or POST /api/search. A path or a
method the service does not have (404, 405) exits 2.

Examples:
  $ company-data --sandbox api GET /api/me
  $ company-data --sandbox api GET domains/acme-shoes.com --query products=profile,tech
  $ company-data --sandbox api POST /api/search --body '{"query":"shoes","limit":2}'
  $ company-data --sandbox api POST /api/search --body @search.json -o json`,
    )
    .action(kit.withContext(runApi));
}

/**
 * The request path under /api/, with any query string split off. Refuses absolute URLs and
 * dot segments: either could carry the key somewhere other than the service's API.
 */
export function apiPath(raw: string): { path: string; query: Array<[string, string]> } {
  const text = raw.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(text) || text.startsWith('//'))
    throw usageError(
      `"${text}" is a URL; give the path only (the base URL comes from --base-url).`,
      'Example: company-data api GET /api/me',
    );
  const [pathPart, search = ''] = text.split(/\?(.*)/s, 2);
  let path = pathPart.startsWith('/') ? pathPart : `/api/${pathPart.replace(/^api\//, '')}`;
  if (path === '/api') path = '/api/';
  if (!path.startsWith('/api/'))
    throw usageError(`the path must start with /api/ (or be relative to it), got "${text}".`);
  const segments = path.split('/').map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  if (segments.some((s) => s === '.' || s === '..'))
    throw usageError(`the path must not contain "." or ".." segments, got "${text}".`);
  return { path, query: [...new URLSearchParams(search)] };
}

/** --query name=value pairs, after those of the path; one value per name. */
export function queryFrom(pairs: Array<[string, string]>, flags: string[]): Record<string, string> {
  // A Map: a name such as `constructor` or `__proto__` is a parameter like any other.
  const query = new Map<string, string>();
  const add = (name: string, value: string) => {
    if (name === '') throw usageError('a query parameter needs a name: --query name=value.');
    if (query.has(name))
      throw usageError(
        `query parameter "${name}" is given twice; the service takes lists comma-separated (name=a,b).`,
      );
    query.set(name, value);
  };
  for (const [name, value] of pairs) add(name, value);
  for (const flag of flags) {
    const at = flag.indexOf('=');
    if (at < 0) throw usageError(`--query wants name=value, got "${flag}".`);
    add(flag.slice(0, at).trim(), flag.slice(at + 1));
  }
  return Object.fromEntries(query);
}

async function readBodyText(ctx: Context, spec: string): Promise<string> {
  if (!spec.startsWith('@')) return spec;
  const file = spec.slice(1);
  if (file === '-') {
    let text = '';
    for await (const chunk of ctx.io.stdin)
      text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    return text;
  }
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new Problem({
      code: 'invalid_input',
      title: 'Unreadable input',
      detail: `cannot read --body file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      source: 'client',
    });
  }
}

/** The JSON body, checked locally so a typo is a usage error rather than a paid round trip. */
export async function bodyFrom(ctx: Context, spec: string): Promise<unknown> {
  const text = await readBodyText(ctx, spec);
  try {
    return JSON.parse(text);
  } catch (error) {
    const where = spec.startsWith('@') ? `the --body file ${spec.slice(1)}` : '--body';
    throw usageError(`${where} is not valid JSON: ${(error as Error).message}`);
  }
}

export async function buildApiRequest(
  ctx: Context,
  method: HttpMethod,
  rawPath: string,
  flags: ApiFlags,
): Promise<RequestOptions> {
  const { path, query: pathQuery } = apiPath(rawPath);
  const query = queryFrom(pathQuery, flags.query ?? []);
  if (flags.body !== undefined && method === 'GET')
    throw usageError('a GET request cannot carry --body; use POST.');
  const body = flags.body === undefined ? undefined : await bodyFrom(ctx, flags.body);
  const isPublic = PUBLIC_PATHS.includes(normalisedApiPath(path));
  return { method, path, query, body, auth: flags.auth !== false && !isPublic };
}

/**
 * A 404 or 405 to a raw request: the path or the method is not the service's, a mistake of the
 * command line (exit 2) rather than a bug, with the endpoints to choose from.
 */
function unknownEndpoint(error: unknown, method: HttpMethod, path: string): Problem | undefined {
  if (!(error instanceof Problem) || (error.status !== 404 && error.status !== 405)) return undefined;
  const said = error.detail ? `: ${error.detail}` : '';
  return new Problem({
    code: 'unknown_endpoint',
    status: error.status,
    title: error.status === 404 ? 'No such endpoint' : 'Method not allowed',
    detail: `${method} ${path}: the service answered ${error.status} (${error.code})${said}`,
    source: error.source,
    cause: error,
  });
}

export async function runApi(
  ctx: Context,
  method: HttpMethod,
  path: string,
  flags: ApiFlags,
): Promise<number> {
  const request = await buildApiRequest(ctx, method, path, flags);
  const [{ catalogRetryHook }, { printCredits, printJson }] = await Promise.all([
    import('../api/catalogs.js'),
    import('../output/format.js'),
  ]);
  const bought = apiPurchaseOf(request.path);
  let response: Awaited<ReturnType<typeof ctx.client.request<unknown>>>;
  try {
    response =
      bought !== 'free'
        ? await buyApiRequest(ctx, request, bought, flags)
        : await ctx.client.request<unknown>({ ...request, onRetry: catalogRetryHook(ctx) });
  } catch (error) {
    throw unknownEndpoint(error, method, request.path) ?? error;
  }
  printJson(ctx, response.data);
  if (request.auth) printCredits(ctx, response.credits);
  return 0;
}

/** The value of a query parameter as a server reads it: trimmed, leading zeros and a `+` sign allowed. */
function serverInteger(value: unknown): number | undefined {
  const text = String(value).trim();
  return /^\+?\d+$/.test(text) ? Number(text) : undefined;
}

/**
 * A raw request to anything but the catalogs and the account goes through the purchase path:
 * held against the caps, written ahead in the store, recorded in the ledger. A domain lookup
 * always carries the client's own max_credits (whatever spelling of it the user gave is replaced):
 * the worst case of its products from the catalog, or the user's max_credits when lower; a
 * max_credits above what the caps leave is refused before sending.
 */
async function buyApiRequest(
  ctx: Context,
  request: RequestOptions,
  kind: RawKind,
  flags: ApiFlags,
): Promise<ApiResponse<unknown>> {
  const [{ purseOf }, { REQUEST_PRICE_ESTIMATE, lookupSelection }, { splitList }] = await Promise.all([
    import('../spend/purse.js'),
    import('../spend/pricing.js'),
    import('../spend/selection.js'),
  ]);
  const query: NonNullable<RequestOptions['query']> = {};
  let asked: { name: string; value: unknown } | undefined;
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (kind === 'domain' && name.trim().toLowerCase() === 'max_credits') asked = { name, value };
    else query[name] = value;
  }
  let worstCase = REQUEST_PRICE_ESTIMATE;
  if (kind === 'domain') {
    try {
      const selection = await lookupSelection(ctx, {
        products: splitList(query.products === undefined ? undefined : String(query.products)),
        include: splitList(query.include === undefined ? undefined : String(query.include)),
      });
      worstCase = selection.worstCase;
    } catch {
      // A selection the catalog refuses: the service's own answer says why (a 400 costs nothing).
    }
  }
  const purse = await purseOf(ctx, { budgetMonth: flags.budgetMonth });
  if (asked) {
    const max = serverInteger(asked.value);
    if (max === undefined)
      throw usageError(`${asked.name} must be a whole number of credits, got "${String(asked.value)}"`);
    const left = await purse.left();
    const room = Math.min(left.run ?? Number.POSITIVE_INFINITY, left.month ?? Number.POSITIVE_INFINITY);
    if (max > room)
      throw new Problem({
        code: 'budget_exhausted',
        detail: `${asked.name}=${max} is more than the caps leave (${room} credits): nothing was sent`,
        source: 'client',
      });
    worstCase = Math.min(worstCase, max);
  }
  const { buyRaw } = await import('../spend/buy.js');
  const { response } = await buyRaw(ctx, purse, { ...request, query }, kind, worstCase);
  return response;
}
