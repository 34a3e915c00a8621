// The statements that callers of one moment share (src/store/postgres/batches.ts): the callers
// of one turn go together, at most two statements of a group are on their way, whoever asks while
// they are waits for the next, and a failure is every caller's of its statement.
import { describe, expect, it } from 'vitest';
import { batched } from '../../src/store/postgres/batches.js';

/** A statement that answers when told: the items of each call, and a way to answer it. */
function statements() {
  const calls: Array<{ group: string; items: number[]; answer: (error?: Error) => void }> = [];
  const run = (group: string, items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      calls.push({
        group,
        items,
        answer: (error) => (error ? reject(error) : resolve(items.map((n) => n * 10))),
      });
    });
  return { calls, run };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('batched statements', () => {
  it('one statement for the callers of a turn; two on their way at most; the rest in the next', async () => {
    const { calls, run } = statements();
    const ask = batched(run);
    const first = [ask('g', 1), ask('g', 2), ask('g', 3)];
    await turn();
    expect(calls.map((c) => c.items)).toEqual([[1, 2, 3]]);
    const second = [ask('g', 4)];
    await turn();
    expect(calls.map((c) => c.items)).toEqual([[1, 2, 3], [4]]);
    // Both lanes busy: these wait, together.
    const third = [ask('g', 5), ask('g', 6)];
    await turn();
    const other = ask('h', 7);
    await turn();
    expect(calls.map((c) => [c.group, c.items])).toEqual([
      ['g', [1, 2, 3]],
      ['g', [4]],
      ['h', [7]],
    ]);
    calls[0].answer();
    expect(await Promise.all(first)).toEqual([10, 20, 30]);
    await turn();
    expect(calls.map((c) => c.items)).toEqual([[1, 2, 3], [4], [7], [5, 6]]);
    calls[1].answer();
    calls[2].answer();
    calls[3].answer(new Error('lost'));
    expect(await Promise.all(second)).toEqual([40]);
    expect(await other).toBe(70);
    expect(await Promise.allSettled(third)).toEqual([
      { status: 'rejected', reason: new Error('lost') },
      { status: 'rejected', reason: new Error('lost') },
    ]);
    // Nothing waits any more: a new caller starts a new statement.
    const again = ask('g', 8);
    await turn();
    calls[4].answer();
    expect(await again).toBe(80);
  });
});
