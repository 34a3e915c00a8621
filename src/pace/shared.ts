// The fleet's turns: hosts that share a store and a key share one rate (docs/store.md, "The fleet's
// shared rate"). The turns are handed out by the store (on PostgreSQL, one row per service and key,
// on the database's clock: src/store/postgres/rate.ts), a few at a time; this file is the host's
// side, the turns it holds until they are due. The pacer (src/pace.ts) grants a lookup's turn only
// when the local rules allow it AND a fleet turn is due, so the fleet's turns are its source of
// tokens, not a second pacer.
//
// Spaced turns rather than a bucket of tokens: the fleet's turns are `1000 / rate` ms apart on the
// database's clock, whichever host holds them, so a second at the service holds about `rate` of
// them however many hosts there are; a bucket's burst, taken by four hosts at once, would arrive
// together.

/** What the store answers for a request of turns, in ms on its clock, measured from its now. */
export interface Reserved {
  /** When the first turn is due, ms from the store's now (0 when at once). */
  startIn: number;
  /** The spacing between the turns, in ms. */
  spacing: number;
  /** What is left of the fleet's pause, ms from the store's now (0 when none). */
  pausedFor: number;
}

/** The store's side: where the fleet's turns, its pause and its cut rate are kept. */
export interface SharedRate {
  /** Where the turns are kept, as `-v` names it. */
  readonly where: string;
  /** `count` consecutive turns for this host, at `rate` per second (or the fleet's cut rate, when lower). */
  reserve(count: number, rate: number): Promise<Reserved>;
  /** No request from any host for the next `ms` (a Retry-After, a RateLimit header with nothing left). */
  pause(ms: number): Promise<void>;
  /** The fleet's rate is cut to `rate` (a refusal without Retry-After), growing back by `growth` a second every second. */
  cut(rate: number, growth: number): Promise<void>;
}

/**
 * A turn due longer ago than this is dropped, not used: a host whose event loop was busy, or that
 * waited out a pause, must not send its old turns all at once on top of the fleet's current ones.
 */
export const STALE_MS = 50;
/** A host asks for at most this many ms of the rate at once: its turns are the fleet's. */
const BATCH_MS = 50;
/** After a failed request of turns (the store unreachable), the host paces alone this long. */
const ALONE_MS = 1000;
/** How far back the host's own use of turns is measured, to ask ahead for what it will use. */
const USE_WINDOW_MS = 250;
/**
 * A host keeps in hand the turns it will use over this long (or a round trip, when longer), and
 * asks again once it is down to half of them: a host sending 300 a second then asks about every
 * third turn rather than for each one.
 */
const AHEAD_MS = 20;

export interface FleetTurns {
  /**
   * When the first turn held is due, stale ones dropped first: +Infinity when none is held (ask),
   * -Infinity while pacing alone (the store could not be reached).
   */
  nextDue(at: number): number;
  /** The first turn is used. */
  use(): void;
  /**
   * Asks the store for turns, unless an ask is under way or enough are held already: one for
   * each of `wanted()` (the callers waiting), and those this host will use over the next 20 ms
   * (or round trip) at its recent pace, asked again once half of them are used, so that a host
   * that keeps sending finds its next turn in hand rather than waiting a round trip for it. Asked
   * once the callers of this moment have all joined the line (a microtask later), so that a burst
   * of them takes one request.
   */
  ask(wanted: () => number, rate: number): void;
  /** Tells the fleet to pause for `ms` (not awaited: a failure leaves the pause this host's only). */
  pause(ms: number): void;
  /** Tells the fleet its rate was cut. */
  cut(rate: number, growth: number): void;
  /** Asks for no more turns, and an answer still on its way changes nothing (the run ended). */
  stop(): void;
}

export interface FleetHooks {
  now: () => number;
  /** Turns came (or the ask failed): the pacer looks at its line again. */
  answered: () => void;
  /** The fleet is paused until `at` (this host's clock). */
  paused: (at: number) => void;
  /** Said once, the first time something happens (`-v`). */
  note?: (line: string) => void;
}

export function createFleetTurns(source: SharedRate, hooks: FleetHooks): FleetTurns {
  const { now } = hooks;
  // The due times of the turns held, from `head` on, in order.
  let turns: number[] = [];
  let head = 0;
  let asking = false;
  let stopped = false;
  let aloneUntil = Number.NEGATIVE_INFINITY;
  /** The last request of turns, ask to answer, in ms. */
  let roundTrip = 0;
  /** When this host used its recent turns (the last USE_WINDOW_MS, oldest first). */
  const used: number[] = [];
  /** The turns this host will use over AHEAD_MS or a round trip, at its recent pace. */
  const ahead = (at: number) => {
    while (used.length > 0 && used[0] < at - USE_WINDOW_MS) used.shift();
    return Math.ceil((used.length * Math.max(AHEAD_MS, roundTrip + 1)) / USE_WINDOW_MS);
  };
  // Each kind of note once: a run asks for turns thousands of times.
  const said = new Set<string>();
  const note = (kind: string, line: string) => {
    if (said.has(kind)) return;
    said.add(kind);
    hooks.note?.(line);
  };
  const dropStale = (at: number) => {
    while (head < turns.length && turns[head] < at - STALE_MS) head++;
    if (head === turns.length && head > 0) {
      turns = [];
      head = 0;
    }
  };
  const held = (at: number) => {
    dropStale(at);
    return turns.length - head;
  };
  const ignore = () => undefined;
  return {
    nextDue(at) {
      if (at < aloneUntil) return Number.NEGATIVE_INFINITY;
      dropStale(at);
      return head < turns.length ? turns[head] : Number.POSITIVE_INFINITY;
    },
    use() {
      if (head === turns.length) return;
      head++;
      used.push(now());
    },
    ask(wanted, rate) {
      if (asking || stopped || now() < aloneUntil) return;
      asking = true;
      queueMicrotask(() => {
        const at = now();
        const waiting = wanted();
        const [have, more] = [held(at), ahead(at)];
        const count = Math.min(Math.max(1, Math.ceil((rate * BATCH_MS) / 1000)), waiting + more - have);
        // Enough in hand: every caller waiting has a turn, and half of those asked ahead are left.
        if (stopped || count <= 0 || have - waiting > more / 2) {
          asking = false;
          return;
        }
        reserve(count, rate);
      });
    },
    pause(ms) {
      source.pause(ms).catch(ignore);
    },
    cut(rate, growth) {
      source.cut(rate, growth).catch(ignore);
    },
    stop() {
      stopped = true;
    },
  };

  function reserve(count: number, rate: number): void {
    const sent = now();
    source.reserve(count, rate).then(
      (reserved) => {
        asking = false;
        if (stopped) return;
        // The store's now lies between the ask and its answer: counted from the answer, a turn
        // goes no earlier than the store said, at worst a round trip late.
        const back = now();
        roundTrip = back - sent;
        note('shared', `pacing: shared with every host of the store ${source.where} on this key`);
        const first = back + reserved.startIn;
        for (let i = 0; i < count; i++) turns.push(first + i * reserved.spacing);
        if (reserved.pausedFor > 0) hooks.paused(back + reserved.pausedFor);
        hooks.answered();
      },
      (error: unknown) => {
        asking = false;
        if (stopped) return;
        note(
          'alone',
          `pacing: alone for now; the store's shared rate could not be used (${(error as Error)?.message ?? String(error)})`,
        );
        aloneUntil = now() + ALONE_MS;
        hooks.answered();
      },
    );
  }
}

/**
 * The fleet's turns of a store reached on first use (`open`, which says undefined when the store
 * keeps no shared rate): a command that may send a single request never opens a database for its
 * pacing alone. While the store cannot be reached, each request of turns fails and the host paces
 * alone (createFleetTurns).
 */
export function deferredSharedRate(where: string, open: () => Promise<SharedRate | undefined>): SharedRate {
  let opening: Promise<SharedRate> | undefined;
  const source = (): Promise<SharedRate> => {
    opening ??= open().then((found) => {
      if (!found) throw new Error(`${where} keeps no shared rate`);
      return found;
    });
    return opening;
  };
  return {
    where,
    reserve: async (count, rate) => (await source()).reserve(count, rate),
    pause: async (ms) => (await source()).pause(ms),
    cut: async (rate, growth) => (await source()).cut(rate, growth),
  };
}
