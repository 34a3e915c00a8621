// Types of stats.mjs, for test/bench/harness.test.ts (the benchmark itself is plain JavaScript).
export interface Target {
  op: '<=' | '>=';
  value: number;
  /** Set when the ratio is an absolute value in this unit (MB, ms), not measured / baseline. */
  unit?: string;
}
export interface Figure {
  id: string;
  name: string;
  ratio: number;
  target: Target;
  note: string;
  pass: boolean;
  /** Why the figure could not be measured on this machine (it never passes then). */
  skipped?: string;
  details: Record<string, unknown>;
}
export interface Machine {
  cpu?: string;
  cores: number;
  node: string;
  loadAverage?: { start: number[]; end: number[] };
}
export interface Report {
  mode: 'quick' | 'full';
  date: string;
  seconds: number;
  machine: Machine;
  figures: readonly Figure[];
}
export function median(values: readonly number[]): number;
export function mean(values: readonly number[]): number;
export function fastest<T extends { rowsPerSecond: number }>(runs: readonly T[]): T | undefined;
export function cheapest<T extends { cpuUsPerRow: number }>(runs: readonly T[]): T | undefined;
export function interleaveOrder(commands: number, rounds: number): number[];
export function meets(ratio: number, target: Target): boolean;
export function figure(input: {
  id: string;
  name: string;
  ratio: number;
  target: Target;
  note?: string;
  details?: Record<string, unknown>;
  skipped?: string;
}): Figure;
export function formatNumber(n: number): string;
export function formatTarget(target: Target): string;
export function formatMeasured(f: Figure): string;
export function verdict(f: Figure): string;
export function describeMachine(machine: Machine): string;
export function renderTable(report: Report): string;
export function renderMarkdown(report: Report): string;
export function summaryLine(report: Report): string;
