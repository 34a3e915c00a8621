// Types of stats.mjs, for test/bench/harness.test.ts (the benchmark itself is plain JavaScript).
export interface Target {
  op: '<=' | '<' | '>=';
  value: number;
  /** Set when the ratio is an absolute value in this unit (MB, ms), not measured / baseline. */
  unit?: string;
}
export interface Figure {
  id: string;
  name: string;
  value: number;
  unit: string;
  ratio: number;
  target: Target;
  pass: boolean;
  /** The same ratio for a bare undici loop started fresh in the same run (a reference). */
  ceiling?: number;
  details: Record<string, unknown>;
}
export function median(values: readonly number[]): number;
export function mean(values: readonly number[]): number;
export function fastest<T extends { rowsPerSecond: number }>(runs: readonly T[]): T | undefined;
export function quantile(values: readonly number[], q: number): number;
export function meets(ratio: number, target: Target): boolean;
export function figure(
  input: Omit<Figure, 'pass' | 'details'> & { details?: Record<string, unknown> },
): Figure;
export function formatNumber(n: number): string;
export function formatTarget(target: Target): string;
export function renderTable(figures: readonly Figure[]): string;
export const CEILING_NOTE: string;
