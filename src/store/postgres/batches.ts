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
 * order. One call of `run` per group is under way at a time.
 */
export function batched<I, R>(
  run: (group: string, items: I[]) => Promise<R[]>,
): (group: string, item: I) => Promise<R> {
  const groups = new Map<string, { waiting: Waiting<I, R>[]; busy: boolean }>();
  const next = (group: string): void => {
    const state = groups.get(group)!;
    if (state.busy || state.waiting.length === 0) {
      if (!state.busy) groups.delete(group);
      return;
    }
    const batch = state.waiting;
    state.waiting = [];
    state.busy = true;
    run(
      group,
      batch.map((w) => w.item),
    ).then(
      (results) => {
        for (let i = 0; i < batch.length; i++) batch[i].resolve(results[i]);
      },
      (error: unknown) => {
        for (const w of batch) w.reject(error);
      },
    ).finally(() => {
      state.busy = false;
      next(group);
    });
  };
  return (group, item) =>
    new Promise<R>((resolve, reject) => {
      let state = groups.get(group);
      if (!state) {
        state = { waiting: [], busy: false };
        groups.set(group, state);
        // The callers of this turn of the event loop go together in the first statement.
        setImmediate(() => next(group));
      }
      state.waiting.push({ item, resolve, reject });
    });
}
