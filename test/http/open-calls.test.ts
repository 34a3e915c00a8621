// The registry of calls in progress that the deadline sweep and signal aborts walk.
import { describe, expect, it } from 'vitest';
import { OpenCalls } from '../../src/http/open-calls.js';

const visited = (calls: OpenCalls<{ id: string }>): string[] => {
  const ids: string[] = [];
  calls.forEach((call) => {
    ids.push(call.id);
  });
  return ids;
};

describe('OpenCalls', () => {
  it('counts what is added and removed, and visits only open calls', () => {
    const calls = new OpenCalls<{ id: string }>();
    const a = calls.add({ id: 'a' });
    const b = calls.add({ id: 'b' });
    calls.add({ id: 'c' });
    expect(calls.size).toBe(3);
    calls.remove(b);
    expect(calls.size).toBe(2);
    expect(visited(calls)).toEqual(['a', 'c']);
    calls.remove(a);
    calls.remove(a); // a second remove of the same slot changes nothing
    expect(calls.size).toBe(1);
    expect(visited(calls)).toEqual(['c']);
  });

  it('reuses freed slots, so a steady batch keeps a small array', () => {
    const calls = new OpenCalls<{ id: string }>();
    const slots = new Set<number>();
    for (let i = 0; i < 1000; i++) {
      const first = calls.add({ id: `x${i}` });
      const second = calls.add({ id: `y${i}` });
      slots.add(first).add(second);
      calls.remove(first);
      calls.remove(second);
    }
    expect(calls.size).toBe(0);
    expect(slots.size).toBe(2);
    expect(visited(calls)).toEqual([]);
  });

  it('lets a visit remove calls; one removed before its turn is skipped', () => {
    const calls = new OpenCalls<{ id: string }>();
    const slots = ['a', 'b', 'c'].map((id) => calls.add({ id }));
    const seen: string[] = [];
    calls.forEach((call) => {
      seen.push(call.id);
      if (call.id === 'a') calls.remove(slots[1]);
    });
    expect(seen).toEqual(['a', 'c']);
    expect(calls.size).toBe(2);
  });
});
