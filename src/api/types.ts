// One type per JSON shape of docs/contract.md. Adapters (src/api/*.ts) turn whatever the server
// sends into these, tolerating other plausible envelopes.

import type { BodyCredits } from '../http/credits.js';

export interface Product {
  id: string;
  description: string;
  fields: string[];
  bundles: string[];
  credit_units: number;
  /** Selected when no products are named; absent when the catalog does not say (never guessed). */
  default?: boolean;
  /** A paid extra; absent when the catalog does not say. */
  add_on?: boolean;
}

export interface FieldFilter {
  name: string;
  value_source: 'enum' | 'free' | string;
  values?: string[];
}

export interface FieldEntry {
  name: string;
  product: string;
  type: string;
  description: string;
  /**
   * How the field filters a search: null when the catalog says it cannot, undefined when the
   * catalog does not say (then the service decides).
   */
  filter: FieldFilter | null | undefined;
  /** Accepted by `breakdown`; undefined when the catalog does not say. */
  facet: boolean | undefined;
  billing: { product: string; credit_units: number; charged?: string };
  /** Where the field can be requested (domains, search, lookalike); undefined when not said. */
  capabilities: string[] | undefined;
  plans: string[];
}

export interface ErrorsCatalog {
  contract_version: string;
  content_type: string;
  errors: import('../error-catalog.js').ErrorCatalogEntry[];
}

export interface Account {
  plan: string;
  balance: number;
  key_name?: string;
  /** What the key may do; absent when the service does not say. */
  capabilities?: string[];
  [member: string]: unknown;
}

/** A domain lookup: `found` plus the record's fields at the top level. */
export interface DomainResult {
  found: boolean;
  domain: string;
  /** The record's fields (everything except found/domain/code/credits). */
  record: Record<string, unknown>;
  /** The credit figures the body reported, as sent (src/spend/charges.ts reads them). */
  reported?: BodyCredits;
  /** Per-product charges when the server says. */
  productCharges?: Record<string, number>;
}
