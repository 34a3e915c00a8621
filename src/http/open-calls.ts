// The calls in progress, for the deadline sweep and for ending the calls of an aborted signal.
//
// An array of slots with a free list, deliberately not a Set, and no listener per call on the
// caller's AbortSignal: a batch adds and removes one entry per request, hundreds of thousands of
// times, and both of those keep dead entries linked to live ones.
// - Node's EventTarget unlinks a removed listener from its neighbours but leaves the listener's
//   own `next` pointing at the one added after it.
// - A V8 Set or Map that churns is rebuilt again and again, and each outgrown table stays linked
//   to the table that replaced it.
// Once a minor GC has moved such a dead listener or table to the old generation, every later
// minor GC treats it as live, and through it every request of its time, with its answer, is
// copied and then promoted. In a bare undici loop of 50,000 requests: 8 MB promoted with no
// listener, 60 MB with one per request on a shared signal, 107 MB with a Set of callbacks, 8 MB
// with these slots (docs/performance.md, "Eighth pass", which also covers src/batch/heap.ts,
// the other half of the cure).

export class OpenCalls<T extends object> {
  private readonly slots: Array<T | undefined> = [];
  private readonly free: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds a call; the returned slot removes it. */
  add(call: T): number {
    const slot = this.free.pop() ?? this.slots.length;
    this.slots[slot] = call;
    this.count++;
    return slot;
  }

  remove(slot: number): void {
    if (this.slots[slot] === undefined) return;
    this.slots[slot] = undefined;
    this.free.push(slot);
    this.count--;
  }

  /** Visits each open call; `visit` may remove calls (one removed before its turn is skipped). */
  forEach(visit: (call: T) => void): void {
    const end = this.slots.length;
    for (let slot = 0; slot < end; slot++) {
      const call = this.slots[slot];
      if (call !== undefined) visit(call);
    }
  }
}
