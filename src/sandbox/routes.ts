// Where a request goes and who sent it: the route table of docs/contract.md and the two ways of
// presenting a key. No I/O here, so the rules are easy to read in one place.
import type { IncomingMessage } from 'node:http';
import { SANDBOX_KEYS } from './catalogs.js';
import type { KeyName } from './endpoints.js';

export type RouteName = 'products' | 'fields' | 'errors' | 'me' | 'domains' | 'search' | 'lookalike';

export interface Route {
  name: RouteName;
  /** The raw (still percent-encoded) path parameter of domains and lookalike. */
  param: string;
  allow: string[];
  isPublic: boolean;
}

// Route objects are shared between requests, never mutated: a lookup allocates only its own.
const EXACT = new Map<string, Route>([
  ['/api/products', { name: 'products', param: '', allow: ['GET'], isPublic: true }],
  ['/api/fields', { name: 'fields', param: '', allow: ['GET'], isPublic: true }],
  ['/api/errors', { name: 'errors', param: '', allow: ['GET'], isPublic: true }],
  ['/api/me', { name: 'me', param: '', allow: ['GET'], isPublic: false }],
  ['/api/search', { name: 'search', param: '', allow: ['GET', 'POST'], isPublic: false }],
]);
const PARAM_ALLOW = ['GET'];

export function matchRoute(path: string): Route | undefined {
  const exact = EXACT.get(path);
  if (exact) return exact;
  if (path.startsWith('/api/domains/'))
    return { name: 'domains', param: path.slice(13), allow: PARAM_ALLOW, isPublic: false };
  if (path.startsWith('/api/lookalike/'))
    return { name: 'lookalike', param: path.slice(15), allow: PARAM_ALLOW, isPublic: false };
  return undefined;
}

/**
 * Which capability of SANDBOX_KEYS a request needs beyond a valid key. A POST body is not read
 * yet at this point, so a POST breakdown is checked as a search (no sandbox key tells them apart).
 */
export function neededCapability(route: Route, params: URLSearchParams): string | undefined {
  if (route.name === 'lookalike') return 'lookalike';
  if (route.name === 'search') return params.has('breakdown') ? 'breakdown' : 'search';
  return undefined;
}

export interface Presented {
  scheme: 'bearer' | 'x-api-key';
  token: string;
}

/** Authorization: Bearer wins over x-api-key (docs/contract.md). */
export function presentedKey(req: IncomingMessage): Presented | undefined {
  const authorization = req.headers.authorization;
  if (typeof authorization === 'string') {
    // Not a regular expression: this runs on every request.
    const value = authorization.trim();
    if (value.length > 7 && value.slice(0, 7).toLowerCase() === 'bearer ')
      return { scheme: 'bearer', token: value.slice(7).trim() };
  }
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.trim() !== '')
    return { scheme: 'x-api-key', token: header.trim() };
  return undefined;
}

export const KEY_NAMES = new Map(Object.entries(SANDBOX_KEYS).map(([name, k]) => [k.key, name as KeyName]));
export const ALL_KEYS = Object.values(SANDBOX_KEYS).map((k) => k.key);
