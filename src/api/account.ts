// GET /api/me: the plan, balance and capabilities of the key. The spec does not name the
// members; docs/contract.md does, and the adapter also accepts a few plausible alternatives.
import { Problem } from '../problem.js';
import type { Context, Credits } from '../types.js';
import type { Account } from './types.js';

export interface AccountResult {
  account: Account;
  /** Credit headers of the response (me never charges; the balance is useful). */
  credits: Credits;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Capabilities as a list: from a list, from an object of booleans ({ search: true }), or from
 * text ("domains,search" or "domains search").
 */
function capabilityList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  if (typeof value === 'string')
    return value
      .split(/[\s,;]+/)
      .map((v) => v.trim())
      .filter(Boolean);
  if (isObject(value))
    return Object.entries(value)
      .filter(([, allowed]) => allowed === true || allowed === 'true' || allowed === 'yes')
      .map(([name]) => name);
  return [];
}

const PLAN = ['plan', 'plan_name', 'tier'];
const BALANCE = ['balance', 'credits', 'credit_balance'];
const CAPABILITIES = ['capabilities', 'permissions'];

/**
 * The account under the contract's names (plan, balance, capabilities), each in the place of the
 * member it was read from and the other members kept in their order: every layout of /api/me
 * prints the same record (docs/contract.md, "Catalog shapes the client reads").
 */
/** The object holding the account: the body, or `account`/`data` inside it (both, at most). */
export function accountSource(body: unknown): { source: unknown; path: string[] } {
  // Some services wrap the account: { account: {...} } or { data: {...} } (or both).
  let source: unknown = body;
  const path: string[] = [];
  for (let depth = 0; depth < 2 && isObject(source) && source.plan === undefined; depth++) {
    const name = isObject(source.account) ? 'account' : 'data';
    const inner: unknown = source[name];
    if (!isObject(inner)) break;
    source = inner;
    path.push(name);
  }
  return { source, path };
}

/** Which member each figure of the account was read from, and its kind: for `doctor`. */
export function describeAccountLayout(body: unknown): string {
  const { source, path } = accountSource(body);
  if (!isObject(source)) return 'not an account object';
  const kind = (value: unknown): string =>
    Array.isArray(value)
      ? 'a list'
      : isObject(value)
        ? 'an object'
        : typeof value === 'string'
          ? 'text'
          : typeof value;
  const said = (names: readonly string[], what: string): string => {
    const name = names.find((n) => Object.hasOwn(source, n));
    return name === undefined ? `${what} not said` : `${what} in \`${name}\` (${kind(source[name])})`;
  };
  const where = path.length > 0 ? `under ${path.map((p) => `\`${p}\``).join(' > ')}: ` : '';
  return `${where}${[said(PLAN, 'plan'), said(BALANCE, 'balance'), said(CAPABILITIES, 'capabilities')].join(', ')}`;
}

export function adaptAccount(body: unknown): Account {
  const { source } = accountSource(body);
  if (!isObject(source)) {
    throw new Problem({
      code: 'unexpected_response',
      title: 'Unexpected response',
      detail: 'GET /api/me did not return an account object',
      source: 'client',
    });
  }
  const account: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (PLAN.includes(key)) {
      if (account.plan !== undefined) continue;
      account.plan =
        typeof value === 'string' ? value : isObject(value) ? String(value.name ?? value.id ?? '') : '';
    } else if (BALANCE.includes(key)) {
      if (account.balance === undefined || Number.isNaN(account.balance)) account.balance = balanceOf(value);
    } else if (CAPABILITIES.includes(key)) {
      account.capabilities ??= capabilityList(value);
    } else account[key] = value;
  }
  account.plan ??= '';
  // Absent when the service lists none: an empty list would say the key may do nothing.
  return { ...account, balance: (account.balance as number | undefined) ?? Number.NaN } as Account;
}

/** A balance as a number, or nested ({ "credits": { "balance": 10 } }, { "balance": { "remaining": 10 } }). */
function balanceOf(value: unknown): number {
  if (isObject(value)) value = value.balance ?? value.remaining ?? value.available ?? value.credits;
  if (typeof value === 'string' && value.trim() !== '') return Number(value);
  return typeof value === 'number' ? value : Number.NaN;
}

/** `spinner: false` and a signal for a call made on the way (a batch asking for its rate limit). */
export async function getAccount(
  ctx: Context,
  options: { spinner?: false; signal?: AbortSignal } = {},
): Promise<AccountResult> {
  const response = await ctx.client.request<unknown>({
    method: 'GET',
    path: '/api/me',
    auth: true,
    ...options,
  });
  const account = adaptAccount(response.data);
  if (!Number.isFinite(account.balance) && typeof response.credits.remaining === 'number') {
    account.balance = response.credits.remaining;
  }
  return { account, credits: response.credits };
}
