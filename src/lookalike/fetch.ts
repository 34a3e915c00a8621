// One lookalike request per seed: a small pool of requests in flight, the client's retries, and
// the caps in force (--budget, the month's) held under that concurrency through the one purchase
// path (src/spend/purchase.ts; docs/lookalike.md, "Credits").
//
// The spec publishes no price for a lookalike, so the reservation is the largest charge seen so
// far (1 before any): while no answer has shown a charge, and a budget is set, requests go one at
// a time, so that a price above 1 is learnt from one request instead of being paid by several.
import { adaptLookalikeResponse, type LookalikeRequest, type LookalikeResult } from '../api/lookalike.js';
import type { Pacer } from '../pace.js';
import { Problem } from '../problem.js';
import { buyLookalike } from '../spend/buy.js';
import { learntPrice, REQUEST_PRICE_ESTIMATE } from '../spend/prices.js';
import { stoppedProblem } from '../spend/purchase.js';
import { type Hold, type Purse, purseOf } from '../spend/purse.js';
import { verdictOf } from '../spend/stops.js';
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
  /** The run's signal fired: the seeds not requested are `not_requested` (interrupted). */
  interrupted?: boolean;
  credits: Credits;
}

export interface SeedRunOptions {
  concurrency: number;
  budget?: number;
  /** --budget-month as given (COMPANY_DATA_BUDGET_MONTH when absent). */
  budgetMonth?: number;
  /** Spaces the requests under --rate, across the workers (src/pace.ts). */
  pacer?: Pacer;
  /** false: no spinner per request (the caller draws its own progress). */
  spinner?: false;
  /** Called as each seed settles, with how many have. */
  onSettled?: (settled: number) => void;
  /** The purse to buy with (the mcp server's session); else one of this run's own. */
  purse?: Purse;
  /** The operation's stop: no seed is requested after it fires; those in flight settle. */
  signal?: AbortSignal;
}

function budgetStop(purse: Purse, price: number): Problem {
  if (purse.refusedBy === 'month') return purse.refusal(price);
  return new Problem({
    code: 'budget_exhausted',
    detail: `${purse.runCapFlag} ${purse.runCap} reached`,
    source: 'client',
  });
}

export async function fetchSeeds(
  ctx: Context,
  requests: readonly LookalikeRequest[],
  options: SeedRunOptions,
): Promise<SeedRun> {
  const purse =
    options.purse ?? (await purseOf(ctx, { budget: options.budget, budgetMonth: options.budgetMonth }));
  const outcomes: Array<SeedOutcome | undefined> = requests.map(() => undefined);
  const size = requests[0]?.k;
  let price = Math.max(REQUEST_PRICE_ESTIMATE, learntPrice(ctx, 'lookalike', size));
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
  const { signal } = options;
  const halted = () => stopped !== undefined || fatal !== undefined || signal?.aborted === true;
  signal?.addEventListener('abort', () => wake(), { once: true });

  async function send(request: LookalikeRequest, hold: Hold): Promise<SeedOutcome | undefined> {
    try {
      const { response, charged: cost } = await buyLookalike(ctx, purse, request, {
        worstCase: price,
        hold,
        spinner: options.spinner,
        stopped: halted,
      });
      if (cost > 0) {
        priced = true;
        price = Math.max(price, cost);
      }
      charged = (charged ?? 0) + cost;
      const balance = response.credits.remaining;
      if (balance !== undefined) remaining = Math.min(remaining ?? balance, balance);
      const result = adaptLookalikeResponse(response.data, response.credits);
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
      // A reservation refused before sending: the run stops, and this seed is not requested.
      if ((error.code === 'budget_exhausted' || error.code === 'interrupted') && halted()) return undefined;
      const verdict = verdictOf(error);
      if (verdict === 'abort') fatal ??= error;
      // insufficient_credits, a cap, or a retry the caps have no room for: nothing more is sent.
      else if (verdict === 'stop')
        stopped ??= error.code === 'budget_exhausted' ? budgetStop(purse, price) : error;
      return { seed: request.seed, status: 'failed', problem: error };
    }
  }

  async function worker(): Promise<void> {
    for (;;) {
      // Until a charge is known, a budgeted run sends one request at a time.
      while (options.budget !== undefined && !priced && inFlight > 0 && !halted()) await settled();
      if (halted() || next >= requests.length) return;
      const index = next++;
      // Counted before the first await, so no other worker passes the check above meanwhile.
      inFlight++;
      try {
        const turn = options.pacer?.take();
        if (turn) await turn;
        const hold = await purse.reserve(price, halted);
        if (!hold) {
          if (!halted()) stopped = budgetStop(purse, price);
          return;
        }
        const outcome = await send(requests[index], hold);
        if (outcome) outcomes[index] = outcome;
        options.onSettled?.(++settledCount);
      } finally {
        inFlight--;
        wake();
      }
    }
  }

  const workers = Math.max(1, Math.min(options.concurrency, requests.length));
  await Promise.all(Array.from({ length: workers }, worker));
  const reason = stopped ?? fatal ?? (signal?.aborted ? stoppedProblem() : undefined);
  return {
    outcomes: outcomes.map(
      (outcome, i) =>
        outcome ?? {
          seed: requests[i].seed,
          status: 'not_requested',
          problem: reason ?? budgetStop(purse, price),
        },
    ),
    stopped,
    fatal,
    ...(signal?.aborted && !stopped && !fatal ? { interrupted: true } : {}),
    credits: { charged, remaining },
  };
}
