// Month holds and the ledger of a SQLite store, inside the caller's transaction (SQLite's calls are
// synchronous): the month-cap check, settle once, and the holds nobody will settle recorded as
// possibly charged; the claims of owners that are gone dropped. Each decision is
// src/store/rules.ts's; this file says it in statements.
import {
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

  /** A hold under `hold.cap` (rules.ts, holdFits); null when there is no room. */
  reserve(hold: HoldRequest): MonthReservation | null {
    if (hold.cap !== undefined) {
      if (!holdFits(this.usage(hold.keyId, hold.window.from, hold.window.to), hold.amount, hold.cap))
        return null;
    }
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
    return { id: Number(put.lastInsertRowid), amount: hold.amount };
  }

  /** Settle once (rules.ts, entryToRecord): the hold dropped by id and owner, then the entry. */
  settle(settlement: Settlement): void {
    const { reservation } = settlement;
    const ours = reservation ? this.s.reservationSettle.run(reservation.id, this.me).changes === 1 : true;
    const entry = entryToRecord(settlement, ours);
    if (entry) this.put(entry);
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
    this.put(entryOf(r, keyId));
  }

  /** An entry with credits (rules.ts, recordable). */
  put(entry: LedgerEntry): void {
    const e = recordable(entry);
    if (e) this.s.ledgerPut.run(e.at, e.baseUrl, e.keyId, e.command, e.credits, e.outcome);
  }
}
