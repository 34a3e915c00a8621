// Shared by the sandbox engine's tests (engine-lookup.test.ts, engine-search.test.ts): one
// generated dataset, callers on each plan, and helpers that unwrap an engine outcome.
import { expect } from 'vitest';
import { catalogEntry } from '../../src/error-catalog.js';
import { generateDataset } from '../../src/sandbox/dataset.js';
import { type Caller, type EngineOutcome, runSearch, type SearchInput } from '../../src/sandbox/engine.js';

export const ds = generateDataset();
export const pro: Caller = { plan: 'pro', balance: 1_000_000 };
export const free: Caller = { plan: 'free', balance: 1000 };
export const broke: Caller = { plan: 'pro', balance: 0 };

export type Body = Record<string, unknown> & { rows: Array<Record<string, unknown>>; total: number };

export function ok(outcome: EngineOutcome): { body: Body; charged: number } {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.code}: ${outcome.detail}`);
  return { body: outcome.body as Body, charged: outcome.charged };
}

/** The problem code of a failure; the code must be one of the catalog. */
export function code(outcome: EngineOutcome): string {
  if (outcome.ok) throw new Error(`expected a problem, got ${JSON.stringify(outcome.body).slice(0, 200)}`);
  expect(catalogEntry(outcome.code)).toBeDefined();
  expect(outcome.detail).not.toBe('');
  return outcome.code;
}

export const search = (input: SearchInput, caller: Caller = pro, via: 'GET' | 'POST' = 'GET') =>
  runSearch(ds, input, via, caller);
export const domains = (rows: Array<Record<string, unknown>>) => rows.map((r) => r.domain);
