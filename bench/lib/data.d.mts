// Types of the pure parts of data.mjs, for test/bench/harness.test.ts.
export function duplicateOf(i: number, rows: number): number;
export function mixedDomains(known: readonly string[], count: number): string[];
export function missingDomain(i: number): string;
