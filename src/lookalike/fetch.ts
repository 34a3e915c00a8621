// One lookalike request per seed: a small pool of requests in flight, the client's retries, and
// a --budget that holds under that concurrency (docs/lookalike.md, "Credits"). The worst case of
// a request is reserved right before it is sent and settled with the charge its answer reports.
//
// The spec publishes no price for a lookalike, so the reservation is the largest charge seen so
// far (1 before any): while no answer has shown a charge, and a budget is set, requests go one at
// a time, so that a price above 1 is learnt from one request instead of being paid by several.
import { catalogRetryHook } from '../api/catalogs.js';
import {
  adaptLookalikeResponse,
  fetchLookalikes,
  type LookalikeRequest,
  type LookalikeResult,
} from '../api/lookalike.js';
import { type Budget, createBudget, type Reservation } from '../batch/budget.js';
import { mayHaveBeenCharged } from '../http/outcome.js';
import type { Pacer } from '../pace.js';
import { Problem } from '../problem.js';
import type { ApiResponse, Context, Credits } from '../types.js';

export type SeedOutcome =
  | {
      seed: string;
      status: 'found';
      result: LookalikeResult;
      response: ApiResponse<unknown>;
      charged: number;
    }
  | {
      seed: string;
      status: 'not_available';
      result: LookalikeResult;
      response: ApiResponse<unknown>;
      charged: number;
    }
  /** The answer had no recognisable list of candidates: printed as received by the single form. */
  | { seed: string; status: 'unrecognised'; response: ApiResponse<unknown>; charged: number }
  | { seed: string; status: 'failed'; problem: Problem }
  /** Not requested: the run stopped (for credits, or aborted) before this seed. */
  | { seed: string; status: 'not_requested'; problem: Problem };

export interface SeedRun {
  outcomes: SeedOutcome[];
  /** What stopped the run for credits (--budget or insufficient_credits), if anything. */
  stopped?: Problem;
  /** A problem every seed would meet (a key, a filter, a set-up mistake): the run is aborted. */
  fatal?: Problem;
  credits: Credits;
}

export interface SeedRunOptions {
  concurrency: number;
  budget?: number;
  /** Spaces the requests under --rate, across the workers (src/pace.ts). */
  pacer?: Pacer;
  /** false: no spinner per request (the caller draws its own progress). */
  spinner?: false;
  /** Called as each seed settles, with how many have. */
  onSettled?: (settled: number) => void;
}

function budgetStop(budget: Budget): Problem {
  return new Problem({
    code: 'budget_exhausted',
    detail: `--budget ${budget.limit} reached`,
    source: 'client',
  });
}

/** Exit 2 or 3: the request as built is refused (key, filter, field, set-up); every seed would be. */
function isFatal(problem: Problem): boolean {
  return problem.exitCode === 2 || problem.exitCode === 3;
}

export async function fetchSeeds(
  ctx: Context,
  requests: readonly LookalikeRequest[],
  options: SeedRunOptions,
): Promise<SeedRun> {
  const budget = createBudget(options.budget);
  const outcomes: Array<SeedOutcome | undefined> = requests.map(() => undefined);
  let price = 1;
  let priced = false;
  let inFlight = 0;
  let next = 0;
  let settledCount = 0;
  let stopped: Problem | undefined;
  let fatal: Problem | undefined;
  let charged: number | undefined;
  let remaining: number | undefined;
  let waiters: Array<() => void> = [];
  const wake = () => {
    const woken = waiters;
    waiters = [];
    for (const resolve of woken) resolve();
  };
  const settled = () => new Promise<void>((resolve) => waiters.push(resolve));

  /** A reservation, waiting for answers in flight when they may free room; null: stop. */
  async function reserve(): Promise<Reservation | null> {
    for (;;) {
      if (stopped || fatal) return null;
      const reservation = budget.tryReserve(price);
      if (reservation) return reservation;
      if (budget.isExhaustedFor(price) || budget.reserved === 0) {
        stopped ??= budgetStop(budget);
        return null;
      }
      await settled();
    }
  }

  async function send(request: LookalikeRequest, first: Reservation): Promise<SeedOutcome> {
    const held = { reservation: first };
    const retryHook = catalogRetryHook(ctx);
    try {
      const response = await fetchLookalikes(ctx, request, {
        spinner: options.spinner,
        // An attempt that may have been charged keeps its reservation; its retry needs its own.
        onRetry: async (problem, attempt, delayMs) => {
          await retryHook(problem, attempt, delayMs);
          if (!mayHaveBeenCharged(problem)) return;
          budget.settleUnknown(held.reservation);
          wake();
          const again = await reserve();
          if (!again) {
            throw new Problem({
              code: 'budget_exhausted',
              detail: `not retried: --budget ${budget.limit} has no room left for another attempt (the last one may have been charged)`,
              source: 'client',
            });
          }
          held.reservation = again;
        },
      });
      const result = adaptLookalikeResponse(response.data);
      const notFound = result !== undefined && !result.found;
      // A charge the answer does not report is taken as the worst case: the budget must hold.
      const cost = response.credits.charged ?? (notFound ? 0 : price);
      budget.settle(held.reservation, cost);
      if (cost > 0) {
        priced = true;
        price = Math.max(price, cost);
      }
      if (response.credits.charged !== undefined) charged = (charged ?? 0) + response.credits.charged;
      const balance = response.credits.remaining;
      if (balance !== undefined) remaining = Math.min(remaining ?? balance, balance);
      if (!result) return { seed: request.seed, status: 'unrecognised', response, charged: cost };
      return {
        seed: request.seed,
        status: result.found ? 'found' : 'not_available',
        result,
        response,
        charged: cost,
      };
    } catch (error) {
      if (!(error instanceof Problem)) throw error;
      // Errors answered are never charged (spec, charging rule 4); an answer that never came may be.
      if (mayHaveBeenCharged(error)) budget.settleUnknown(held.reservation);
      else budget.settle(held.reservation, 0);
      if (isFatal(error)) fatal ??= error;
      // insufficient_credits, or a retry the budget has no room for: nothing more is sent.
      else if (error.exitCode === 4)
        stopped ??= error.code === 'budget_exhausted' ? budgetStop(budget) : error;
      return { seed: request.seed, status: 'failed', problem: error };
    }
  }

  async function worker(): Promise<void> {
    for (;;) {
      // Until a charge is known, a budgeted run sends one request at a time.
      while (options.budget !== undefined && !priced && inFlight > 0 && !stopped && !fatal) await settled();
      if (stopped || fatal || next >= requests.length) return;
      const index = next++;
      // Counted before the first await, so no other worker passes the check above meanwhile.
      inFlight++;
      try {
        const turn = options.pacer?.take();
        if (turn) await turn;
        const reservation = await reserve();
        if (!reservation) return;
        outcomes[index] = await send(requests[index], reservation);
        options.onSettled?.(++settledCount);
      } finally {
        inFlight--;
        wake();
      }
    }
  }

  const workers = Math.max(1, Math.min(options.concurrency, requests.length));
  await Promise.all(Array.from({ length: workers }, worker));
  const reason = stopped ?? fatal;
  return {
    outcomes: outcomes.map(
      (outcome, i) =>
        outcome ?? { seed: requests[i].seed, status: 'not_requested', problem: reason ?? budgetStop(budget) },
    ),
    stopped,
    fatal,
    credits: { charged, remaining },
  };
}
