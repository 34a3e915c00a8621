// Pure helpers of the benchmark harness: statistics, the verdict of a figure against its target,
// and the text table. No I/O here, so test/bench/harness.test.ts can pin them down.

/** Median of a list of numbers (the mean of the middle two for an even count); NaN when empty. */
export function median(values) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The value at quantile q (0..1) by nearest rank; NaN when empty. */
export function quantile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

/**
 * Whether a measured ratio meets its target. `<=` and `<` targets are ceilings (start-up cost,
 * memory), `>=` a floor (throughput). A ratio that could not be measured never passes.
 */
export function meets(ratio, target) {
  if (!Number.isFinite(ratio)) return false;
  switch (target.op) {
    case '<=':
      return ratio <= target.value;
    case '<':
      return ratio < target.value;
    case '>=':
      return ratio >= target.value;
    default:
      throw new Error(`unknown target operator ${target.op}`);
  }
}

/**
 * One row of the report. `ratio` is what the target is about: measured / baseline for the
 * side-by-side figures, or the value itself in the target's unit for absolute ones (MB, ms).
 * `ceiling`, where a figure has one, is the same ratio for a bare undici request loop started as
 * a fresh process in the same run: what any Node client reaches there, a reference and not a
 * target, so that a reader can tell a slow client from an unreachable target.
 */
export function figure({ id, name, value, unit, ratio, target, ceiling, details = {} }) {
  const row = { id, name, value, unit, ratio, target, pass: meets(ratio, target), details };
  if (ceiling !== undefined) row.ceiling = ceiling;
  return row;
}

/** Rounds for display: three significant digits below 100, whole numbers above. */
export function formatNumber(n) {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  if (abs >= 100) return Math.round(n).toLocaleString('en-US');
  if (abs >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

export function formatTarget(target) {
  return `${target.op} ${target.value}${target.unit ? ` ${target.unit}` : 'x'}`;
}

/**
 * The report as a plain text table (no colour: it is as often piped into a log as read). The
 * `bare loop` column appears when some figure has a ceiling, and a line under the table says
 * what it is.
 */
export function renderTable(figures) {
  const ceilings = figures.some((f) => f.ceiling !== undefined);
  const head = ['figure', 'value', 'target', 'ratio', 'result', ...(ceilings ? ['bare loop'] : [])];
  const rows = figures.map((f) => [
    f.name,
    `${formatNumber(f.value)} ${f.unit}`,
    formatTarget(f.target),
    f.target.unit ? `${formatNumber(f.ratio)} ${f.target.unit}` : `${formatNumber(f.ratio)}x`,
    f.pass ? 'pass' : 'FAIL',
    ...(ceilings ? [f.ceiling === undefined ? '' : `${formatNumber(f.ceiling)}x`] : []),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  const table = [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
  if (ceilings) table.push('', CEILING_NOTE);
  return table.join('\n');
}

export const CEILING_NOTE =
  'bare loop: the same ratio for a bare undici request loop started as a fresh process in this run ' +
  '(what any Node client reaches here; a reference, not a target)';

/** Arithmetic mean; NaN when empty. */
export function mean(values) {
  if (values.length === 0) return Number.NaN;
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

/**
 * The run with the most rows per second (the first of equals); undefined for none. On a machine
 * shared with others' load, a run can only be slowed, never sped up, by what else runs: the
 * fastest of a few runs is the best estimate of what each side costs. The baseline of a ratio
 * gets at least as many runs as the client (figure 2's loop one more), so that a load spike
 * cannot flatter the client.
 */
export function fastest(runs) {
  let best;
  for (const run of runs) if (!best || run.rowsPerSecond > best.rowsPerSecond) best = run;
  return best;
}
