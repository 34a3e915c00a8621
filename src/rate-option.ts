// --rate for the commands that send many requests (a batch, search --all, lookalike from many
// seeds): the option as given, else the key's rate limit asked of GET /api/me when the first
// request is about to go (docs/batch.md, "Pacing").
import { InvalidArgumentError } from 'commander';
import { deferredSharedRate, type SharedRate } from './pace/shared.js';
import { createPacer, MAX_RATE, type Pacer, paceForLimit, parseRate, type RateSource } from './pace.js';
import { baseOf, isPostgresUrl, keyIdOf } from './store/location.js';
import type { Context } from './types.js';

/** How long a run without --rate waits for GET /api/me to learn the key's rate limit. */
const ACCOUNT_RATE_TIMEOUT_MS = 5000;

export function parseRateOption(raw: string): number {
  const value = parseRate(raw);
  if (value === undefined)
    throw new InvalidArgumentError(
      `--rate must be a number of requests per second between 0 and ${MAX_RATE} (decimals allowed: 0.5 is one every 2 s; 0 turns pacing off), got "${raw}"`,
    );
  return value;
}

/**
 * --rate as given (0: no pacing); else the key's rate limit, asked of GET /api/me (never charged)
 * when the run is about to send its first request, so a dry run, a refused output or a batch
 * answered from the store asks nothing. A failed or slow answer means no pacing. -v says which.
 */
export function rateFor(ctx: Context, rate: number | undefined): RateSource {
  if (rate !== undefined) return rate;
  return async () => {
    const { getAccount } = await import('./api/account.js');
    const { io } = ctx;
    try {
      const signal = AbortSignal.timeout(ACCOUNT_RATE_TIMEOUT_MS);
      const { account } = await getAccount(ctx, { spinner: false, signal });
      const limit = account.rate_limit_per_second;
      const pace = paceForLimit(limit);
      if (pace !== undefined)
        io.debug(
          `pacing: ${pace} requests per second, 90% of the rate limit GET /api/me reports (${limit} per second); --rate changes it`,
        );
      else if (limit === undefined || limit === null)
        io.debug('pacing: off; GET /api/me reports no rate limit');
      else
        io.debug(
          `pacing: off; GET /api/me reports a rate limit of ${JSON.stringify(limit)} per second, beyond what --rate paces`,
        );
      return pace;
    } catch (error) {
      io.debug(`pacing: off; GET /api/me failed (${(error as { code?: string }).code ?? String(error)})`);
      return undefined;
    }
  };
}

/**
 * The turns of every host on this key when the store is a PostgreSQL database, which the hosts of
 * a fleet share (docs/store.md, "The fleet's shared rate"); undefined for a store of this machine
 * alone. The database is opened for the first turn asked for (the purchase opens it anyway, for
 * its hold), under the base URL and key the store keeps answers under (scopeOf).
 */
export function fleetRateOf(ctx: Context): SharedRate | undefined {
  const where = ctx.store.path;
  if (where === false || !isPostgresUrl(where)) return undefined;
  return deferredSharedRate(where, async () =>
    (await ctx.store.open()).sharedRate?.(baseOf(ctx.config), keyIdOf(ctx.config.apiKey?.value)),
  );
}

/**
 * The pacer of a command's requests: --rate or the key's limit (rateFor), the fleet's turns on a
 * shared store (fleetRateOf), and whatever the service's RateLimit headers say on the way
 * (src/pace.ts `observe`).
 */
export function pacerFor(ctx: Context, rate: number | undefined): Pacer {
  const pacer = createPacer(rateFor(ctx, rate), {
    shared: fleetRateOf(ctx),
    note: (line) => ctx.io.debug(line),
  });
  ctx.client.watchRateLimits?.((limits) => pacer.observe(limits));
  return pacer;
}
