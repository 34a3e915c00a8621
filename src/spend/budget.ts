// The --budget of a batch: a credit cap that holds under any concurrency.
//
// Every request first reserves its worst-case cost; the reservation is replaced by the actual
// charge when the answer arrives. Reserving and settling are synchronous, so two workers can never
// both see room for one last request: JavaScript runs one of them to completion first.
//
// An attempt whose answer never arrived (src/http/outcome.ts) may have been charged all the same:
// its reservation is kept for the rest of the run as "possibly charged", and the cap bounds
// charged plus possibly charged.

export interface Reservation {
  readonly amount: number;
  /** Set once settled, so a double settle (a bug) cannot release credits twice. */
  settled: boolean;
}

export interface Budget {
  /** The cap, or undefined when the run has none (reservations then always succeed). */
  readonly limit: number | undefined;
  /** Credits actually charged so far by this run. */
  readonly spent: number;
  /** Credits held by requests in flight. */
  readonly reserved: number;
  /** Credits kept by attempts whose answer never arrived: the service may have charged them. */
  readonly possiblyCharged: number;
  /**
   * Reserves `amount` when spent + possiblyCharged + reserved + amount stays within the limit;
   * otherwise null and nothing changes. Never awaits.
   */
  tryReserve(amount: number): Reservation | null;
  /** Replaces the reservation by what the request really cost (0 for errors and not-found). */
  settle(reservation: Reservation, charged: number): void;
  /**
   * Keeps the reservation as possibly charged (`amount`, the whole reservation unless a larger
   * figure was reported): the attempt's outcome is unknown.
   */
  settleUnknown(reservation: Reservation, amount?: number): void;
  /**
   * True when no request of `amount` can ever fit again: even with nothing in flight the cap
   * would be passed. While requests are in flight a refused reservation may still fit later,
   * because most answers cost less than their worst case.
   */
  isExhaustedFor(amount: number): boolean;
}

export function createBudget(limit?: number): Budget {
  if (limit !== undefined && (!Number.isFinite(limit) || limit < 0)) {
    throw new RangeError(`budget must be a non-negative number, got ${limit}`);
  }
  let spent = 0;
  let reserved = 0;
  let possiblyCharged = 0;
  const release = (reservation: Reservation): boolean => {
    if (reservation.settled) return false;
    reservation.settled = true;
    reserved -= reservation.amount;
    return true;
  };
  return {
    limit,
    get spent() {
      return spent;
    },
    get reserved() {
      return reserved;
    },
    get possiblyCharged() {
      return possiblyCharged;
    },
    tryReserve(amount) {
      if (limit !== undefined && spent + possiblyCharged + reserved + amount > limit) return null;
      reserved += amount;
      return { amount, settled: false };
    },
    settle(reservation, charged) {
      if (!release(reservation)) return;
      // A server charging more than the worst case is recorded honestly; the cap then stops
      // further requests through tryReserve.
      spent += Math.max(0, charged);
    },
    settleUnknown(reservation, amount = reservation.amount) {
      if (release(reservation)) possiblyCharged += Math.max(amount, reservation.amount);
    },
    isExhaustedFor(amount) {
      return limit !== undefined && spent + possiblyCharged + amount > limit;
    },
  };
}
