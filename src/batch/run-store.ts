// The store as one batch run uses it: its scope, its freshness rule and its run id bound once, so
// a lookup asks only about a domain. Also the row a stored answer becomes in the output.
import type {
  AnswerStore,
  Claim,
  Freshness,
  HoldRequest,
  RunHandle,
  Settlement,
  StoredAnswer,
} from '../store/types.js';
import type { RowResult } from './output.js';

export interface RunStore {
  readonly runId: number;
  /**
   * A claim is a round trip to a database server (PostgreSQL): a lookup takes it before its slot,
   * so that it overlaps the requests in flight (src/batch/lookup.ts, docs/store.md).
   */
  readonly claimsAhead: boolean;
  /** At once where the back end can answer at once (AnswerStore.find). */
  find(domain: string): StoredAnswer | undefined | Promise<StoredAnswer | undefined>;
  /** The claim on `domain`, and with `hold` the month's hold, in one transaction. */
  claim(domain: string, hold?: HoldRequest): Promise<Claim>;
  /** Throws once what the store claimed may be taken over (AnswerStore.assertOwned). */
  assertOwned(): void;
  /** The answer, the claim dropped and the purchase settled, in one transaction. */
  save(
    domain: string,
    answer: Pick<StoredAnswer, 'found' | 'record' | 'credits'>,
    settlement?: Settlement,
  ): Promise<void>;
  release(domain: string): Promise<void>;
  /** The purchase settled without an answer kept (one that could not be read): the ledger only. */
  settle(settlement: Settlement | undefined): Promise<void>;
}

export function runStoreOf(
  store: AnswerStore,
  scope: number,
  fresh: Freshness,
  run: RunHandle,
  now: () => number,
): RunStore {
  return {
    runId: run.id,
    claimsAhead: store.backend === 'postgres',
    find: (domain) => store.find(scope, domain, fresh),
    claim: (domain, hold) => store.claim(scope, domain, fresh, hold),
    assertOwned: () => store.assertOwned(),
    save: (domain, answer, settlement) =>
      store.save(scope, domain, { ...answer, boughtAt: now(), run: run.id }, settlement),
    release: (domain) => store.release(scope, domain),
    settle: async (settlement) => {
      if (settlement) await store.settle(settlement);
    },
  };
}

/** An instant as the output shows it: ISO 8601 in UTC, to the second. */
export function isoSecond(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * A stored answer as a row of run `runId`: what this run bought (before an interruption, too)
 * reads as bought now, with its cost; anything else is reused at no cost, with its purchase time.
 */
export function rowOfStored(answer: StoredAnswer, runId: number | undefined): RowResult {
  const own = runId !== undefined && answer.run === runId;
  return {
    found: answer.found,
    record: answer.record,
    credits_charged: own ? answer.credits : 0,
    bought_at: own ? null : isoSecond(answer.boughtAt),
    error_code: null,
    error_detail: null,
  };
}
