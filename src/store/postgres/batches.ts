// Statements that serve many callers at once: what callers ask of one kind (the answers of
// domains, claims on domains) while a statement of that kind is on its way waits for it to end
// and then goes in the next one, with everything else asked meanwhile. A statement carries as
// many domains as were asked for during the last one's round trip, so a batch that asks for many
// at once pays one round trip for them, and a caller alone pays one as before (docs/store.md,
// "Round trips").

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * One caller's item in, its result out: `run` is given every item asked for since its last call
 * (of the same `group`, whose items share one statement) and returns one result per item, in
 * order. At most `lanes` calls of `run` per group are under way at a time (a process has two
 * connections that run statements: a caller need not wait for a statement of its kind on the
 * other).
 */
export function batched<I, R>(
  run: (group: string, items: I[]) => Promise<R[]>,
  lanes = 2,
): (group: string, item: I) => Promise<R> {
  const groups = new Map<string, { waiting: Waiting<I, R>[]; running: number; scheduled: boolean }>();
  const next = (group: string): void => {
    const state = groups.get(group)!;
    if (state.running >= lanes || state.waiting.length === 0) {
      if (state.running === 0 && !state.scheduled) groups.delete(group);
      return;
    }
    const batch = state.waiting;
    state.waiting = [];
    state.running++;
    run(
      group,
      batch.map((w) => w.item),
    )
      .then(
        (results) => {
          for (let i = 0; i < batch.length; i++) batch[i].resolve(results[i]);
        },
        (error: unknown) => {
          for (const w of batch) w.reject(error);
        },
      )
      .finally(() => {
        state.running--;
        next(group);
      });
  };
  return (group, item) =>
    new Promise<R>((resolve, reject) => {
      let state = groups.get(group);
      if (!state) {
        state = { waiting: [], running: 0, scheduled: false };
        groups.set(group, state);
      }
      state.waiting.push({ item, resolve, reject });
      if (state.running < lanes && !state.scheduled) {
        // The callers of this turn of the event loop go together in one statement.
        const scheduled = state;
        scheduled.scheduled = true;
        setImmediate(() => {
          scheduled.scheduled = false;
          next(group);
        });
      }
    });
}
