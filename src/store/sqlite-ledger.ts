// Month holds and the ledger of a SQLite store, inside the caller's transaction (SQLite's calls are
// synchronous): the month-cap check, settle once, and the holds nobody will settle recorded as
// possibly charged; the claims of owners that are gone dropped. Each decision is
// src/store/rules.ts's; this file says it in statements.
import {
  counterMonth,
  entryToRecord,
  holdFits,
  holdInMonth,
  LEASE_MS,
  lostEntry,
  ownerAlive,
  ownerProcessIsGone,
  recordable,
} from './rules.js';
import type { HeldRow, Owned, Statements } from './sqlite-statements.js';
import type { HoldRequest, LedgerEntry, MonthReservation, Settlement } from './types.js';

/** rules.ts's liveness test on a row: its lease runs, and its process is not known to be gone. */
export function alive(owned: Owned | undefined, me: string, now: number): boolean {
  return ownerAlive(
    owned && { owner: owned.owner, expiresAt: owned.expires_at },
    me,
    now,
    ownerProcessIsGone,
  );
}

type Held = HeldRow & { base_url: string; key_id?: string };

function entryOf(r: Held, keyId: string): LedgerEntry {
  return lostEntry(
    { at: r.at, baseUrl: r.base_url, keyId, command: r.command, amount: r.amount },
    Date.now(),
  );
}

export class SqliteLedger {
  constructor(
    private readonly s: Statements,
    /** The owner of this store's holds. */
    private readonly me: string,
  ) {}

  /**
   * This key's month: the ledger, and the reservations of live owners. A reservation whose owner
   * is gone (killed, or its lease ran out) becomes a possibly-charged entry first: never dropped.
   */
  usage(keyId: string, from: number, to: number): { spent: number; held: number } {
    const now = Date.now();
    let held = 0;
    for (const r of this.s.reservations.all(keyId)) {
      if (r.owner === this.me || alive(r, this.me, now)) {
        if (holdInMonth(r.at, from, to)) held += r.amount;
      } else this.orphan(r, keyId);
    }
    const spent = this.s.ledgerSum.get(keyId, from, to)?.total ?? 0;
    return { spent, held };
  }

  /** The counter of the month of `at` (rules.ts, counterMonth), after the key's lost holds are recorded. */
  monthCount(keyId: string, at: number): { spent: number; held: number } {
    this.orphanKey(keyId);
    return this.s.countGet.get(keyId, counterMonth(at)) ?? { spent: 0, held: 0 };
  }

  /**
   * A hold under `hold.cap` (rules.ts, holdFits) against its month's counter; null when there is
   * no room (the key's holds of owners that are gone are then recorded as possibly charged, which
   * leaves the counter's sum as it is: they counted as held, they count as spent).
   */
  reserve(hold: HoldRequest): MonthReservation | null {
    const month = counterMonth(hold.at);
    if (hold.cap !== undefined) {
      const usage = this.s.countGet.get(hold.keyId, month) ?? { spent: 0, held: 0 };
      if (!holdFits(usage, hold.amount, hold.cap)) {
        this.orphanKey(hold.keyId);
        return null;
      }
    }
    this.s.countAdd.run(hold.keyId, month, 0, hold.amount);
    const expires = Date.now() + LEASE_MS;
    const put = this.s.reservationPut.run(
      hold.baseUrl,
      hold.keyId,
      this.me,
      hold.amount,
      expires,
      hold.command,
      hold.at,
    );
    return { id: Number(put.lastInsertRowid), amount: hold.amount, at: hold.at };
  }

  /** Settle once (rules.ts, entryToRecord): the hold dropped by id and owner, then the entry. */
  settle(settlement: Settlement): void {
    const { reservation } = settlement;
    const dropped = reservation ? this.s.reservationSettle.get(reservation.id, this.me) : undefined;
    if (dropped) this.s.countAdd.run(dropped.key_id, counterMonth(dropped.at), 0, -dropped.amount);
    const entry = entryToRecord(settlement, reservation ? dropped !== undefined : true);
    if (entry) this.put(entry);
  }

  /** The key's holds of owners that are gone become possibly-charged entries. */
  private orphanKey(keyId: string): void {
    const now = Date.now();
    for (const r of this.s.reservations.all(keyId)) {
      if (r.owner !== this.me && !alive(r, this.me, now)) this.orphan(r, keyId);
    }
  }

  /** Every reservation of an owner that is gone becomes a ledger entry. */
  sweep(): void {
    const now = Date.now();
    for (const r of this.s.allReservations.all()) {
      if (r.owner !== this.me && !alive(r, this.me, now)) this.orphan(r, r.key_id);
    }
  }

  /** The holds of owners that are gone, as the entries sweep() would make, without writing. */
  lostHolds(): LedgerEntry[] {
    const now = Date.now();
    return this.s.allReservations
      .all()
      .filter((r) => r.owner !== this.me && !alive(r, this.me, now))
      .map((r) => entryOf(r, r.key_id));
  }

  /**
   * The holds of owners that are gone become ledger entries, and their claims are dropped, judged
   * by the same liveness test as a takeover (rules.ts, ownerAlive): a claim of a process of this
   * host that no longer exists goes at once, not when its lease runs out.
   */
  dropLapsed(): void {
    this.sweep();
    const now = Date.now();
    for (const c of this.s.othersClaims.all(this.me)) {
      if (!alive(c, this.me, now)) this.s.claimDrop.run(c.scope, c.domain, c.owner);
    }
  }

  /** On closing: a hold never settled belongs to a request whose answer never came, maybe charged. */
  orphanOwn(): void {
    for (const r of this.s.ownReservations.all(this.me)) this.orphan(r, r.key_id);
  }

  /** A reservation nobody will settle: the ledger keeps it as possibly charged. */
  private orphan(r: Held, keyId: string): void {
    this.s.reservationDrop.run(r.id);
    this.s.countAdd.run(keyId, counterMonth(r.at), 0, -r.amount);
    this.put(entryOf(r, keyId));
  }

  /** An entry with credits (rules.ts, recordable), counted in its month. */
  put(entry: LedgerEntry): void {
    const e = recordable(entry);
    if (!e) return;
    this.s.ledgerPut.run(e.at, e.baseUrl, e.keyId, e.command, e.credits, e.outcome);
    this.s.countAdd.run(e.keyId, counterMonth(e.at), e.credits, 0);
  }
}
