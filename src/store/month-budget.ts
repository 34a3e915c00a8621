// --budget-month: a cap on a calendar month's spend (UTC) for one key, across every run that uses
// the store. The same rules as --budget (src/batch/budget.ts), with the month's state in the store
// instead of memory: a request first reserves its worst case in a transaction that also sums the
// ledger and every live reservation, so two processes can never both take the last room; the
// charge the service reports reaches the ledger (src/store/handle.ts) before the reservation is
// dropped; an attempt whose answer never came is kept in the ledger as possibly charged.
import type { Budget, Reservation } from '../batch/budget.js';
import type { Context } from '../types.js';
import { baseOf, keyIdOf, monthOf } from './location.js';
import type { AnswerStore, MonthReservation } from './types.js';

export interface MonthCap {
  store: AnswerStore;
  baseUrl: string;
  keyId: string;
  cap: number;
  command: string;
  now: () => number;
}

type Held = Reservation & { month: MonthReservation };

/** The --budget-month of a command: the month of the key in force, its charges named by the command. */
export function monthBudgetOf(ctx: Context, store: AnswerStore, cap: number): Budget {
  return monthBudget({
    store,
    baseUrl: baseOf(ctx.config),
    keyId: keyIdOf(ctx.config.apiKey?.value),
    cap,
    command: ctx.command,
    now: ctx.now,
  });
}

export function monthBudget(options: MonthCap): Budget {
  const { store, baseUrl, keyId, cap } = options;
  let reserved = 0;
  let possiblyCharged = 0;
  const release = (reservation: Reservation): MonthReservation | undefined => {
    if (reservation.settled) return undefined;
    reservation.settled = true;
    reserved -= reservation.amount;
    return (reservation as Held).month;
  };
  return {
    limit: cap,
    // What this run spent is the run's own budget's to tell; the month's is in the ledger.
    spent: 0,
    get reserved() {
      return reserved;
    },
    get possiblyCharged() {
      return possiblyCharged;
    },
    tryReserve(amount) {
      const month = store.reserveMonth(baseUrl, keyId, amount, cap, monthOf(options.now()));
      if (!month) return null;
      reserved += amount;
      const held: Held = { amount, settled: false, month };
      return held;
    },
    settle(reservation) {
      const month = release(reservation);
      if (month) store.settleMonth(month);
    },
    settleUnknown(reservation) {
      const month = release(reservation);
      if (!month) return;
      possiblyCharged += reservation.amount;
      store.settleMonth(month, {
        at: options.now(),
        baseUrl,
        keyId,
        command: options.command,
        credits: reservation.amount,
        outcome: 'unknown',
      });
    },
    isExhaustedFor(amount) {
      const { from, to } = monthOf(options.now());
      return store.monthUsage(baseUrl, keyId, from, to).spent + amount > cap;
    },
  };
}

/** Two caps at once (a run's --budget and the month's): a reservation needs room in both. */
export function bothBudgets(run: Budget, month: Budget): Budget & { refusedBy?: 'run' | 'month' } {
  type Pair = Reservation & { parts: [Reservation, Reservation] };
  const combined: Budget & { refusedBy?: 'run' | 'month' } = {
    limit: run.limit,
    get spent() {
      return run.spent;
    },
    get reserved() {
      return run.reserved;
    },
    get possiblyCharged() {
      return run.possiblyCharged;
    },
    tryReserve(amount) {
      const first = run.tryReserve(amount);
      if (!first) {
        combined.refusedBy = 'run';
        return null;
      }
      const second = month.tryReserve(amount);
      if (!second) {
        run.settle(first, 0);
        combined.refusedBy = 'month';
        return null;
      }
      const pair: Pair = { amount, settled: false, parts: [first, second] };
      return pair;
    },
    settle(reservation, charged) {
      if (reservation.settled) return;
      reservation.settled = true;
      const [a, b] = (reservation as Pair).parts;
      run.settle(a, charged);
      month.settle(b, charged);
    },
    settleUnknown(reservation) {
      if (reservation.settled) return;
      reservation.settled = true;
      const [a, b] = (reservation as Pair).parts;
      run.settleUnknown(a);
      month.settleUnknown(b);
    },
    isExhaustedFor(amount) {
      if (run.isExhaustedFor(amount)) {
        combined.refusedBy = 'run';
        return true;
      }
      if (month.isExhaustedFor(amount)) {
        combined.refusedBy = 'month';
        return true;
      }
      return false;
    },
  };
  return combined;
}
