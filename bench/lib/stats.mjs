// Pure helpers of the benchmark harness: statistics, the run order of interleaved commands, the
// verdict of a figure against its target, and the report as a text table and as markdown. No
// I/O here, so test/bench/harness.test.ts can pin them down.

/** Median of a list of numbers (the mean of the middle two for an even count); NaN when empty. */
export function median(values) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Arithmetic mean; NaN when empty. */
export function mean(values) {
  if (values.length === 0) return Number.NaN;
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

/**
 * The run with the most rows per second (the first of equals); undefined for none. On a machine
 * shared with others' load, a run can only be slowed, never sped up, by what else runs: the
 * fastest of a few runs is the best estimate of what a side costs.
 */
export function fastest(runs) {
  let best;
  for (const run of runs) if (!best || run.rowsPerSecond > best.rowsPerSecond) best = run;
  return best;
}

/** The run with the least CPU per row (the first of equals); undefined for none. Same reasoning. */
export function cheapest(runs) {
  let best;
  for (const run of runs) if (!best || run.cpuUsPerRow < best.cpuUsPerRow) best = run;
  return best;
}

/**
 * The order in which `commands` commands run for `rounds` rounds, as command indexes: every
 * command once per round, the order reversed every other round, so that none always follows
 * another and the machine's drifting load falls on all alike.
 */
export function interleaveOrder(commands, rounds) {
  const order = [];
  for (let round = 0; round < rounds; round++) {
    const once = Array.from({ length: commands }, (_, i) => i);
    if (round % 2 === 1) once.reverse();
    order.push(...once);
  }
  return order;
}

/**
 * Whether a measured ratio meets its target. `<=` targets are ceilings (start-up, CPU, memory,
 * time), `>=` floors (throughput). A ratio that could not be measured never passes.
 */
export function meets(ratio, target) {
  if (!Number.isFinite(ratio)) return false;
  switch (target.op) {
    case '<=':
      return ratio <= target.value;
    case '>=':
      return ratio >= target.value;
    default:
      throw new Error(`unknown target operator ${target.op}`);
  }
}

/**
 * One row of the report. `ratio` is what the target is about: measured / baseline for the
 * side-by-side figures, or the value itself in the target's unit (MB, ms) for absolute ones.
 * `note` says what the ratio was made of ("58 ms vs 41 ms"); `details` go to the JSON only.
 * `skipped` says why a figure could not be measured on this machine (it then never passes).
 */
export function figure({ id, name, ratio, target, note = '', details = {}, skipped }) {
  if (skipped !== undefined) return { id, name, ratio, target, note: skipped, pass: false, skipped, details };
  return { id, name, ratio, target, note, pass: meets(ratio, target), details };
}

/** Rounds for display: three significant digits below 100, whole numbers above. */
export function formatNumber(n) {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  if (abs >= 100) return Math.round(n).toLocaleString('en-US');
  if (abs >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

/** "≤ 1.6x", "≥ 0.95x", "≤ 300 MB" */
export function formatTarget(target) {
  const value = target.unit ? `${target.value} ${target.unit}` : `${target.value}x`;
  return `${target.op === '<=' ? '≤' : '≥'} ${value}`;
}

/** The ratio in the target's terms, then what it was made of: "1.42x (58 ms vs 41 ms)". */
export function formatMeasured(f) {
  if (f.skipped !== undefined) return `not measured: ${f.skipped}`;
  const number = formatNumber(f.ratio);
  const value = f.target.unit ? `${number} ${f.target.unit}` : `${number}x`;
  return f.note ? `${value} (${f.note})` : value;
}

export const verdict = (f) => (f.pass ? 'met' : f.skipped !== undefined ? 'not measured' : 'NOT MET');

/** "AMD EPYC 7B13, 2 cores, node v20.20.2" */
export function describeMachine(machine) {
  return `${machine.cpu ?? 'unknown CPU'}, ${machine.cores} cores, node ${machine.node}`;
}

const cells = (f) => [f.name, formatTarget(f.target), formatMeasured(f), verdict(f)];
const HEAD = ['figure', 'target', 'measured', 'result'];

/** The report as a plain text table (no colour: it is as often piped into a log as read). */
export function renderTable(report) {
  const rows = report.figures.map(cells);
  const widths = HEAD.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (row) =>
    row
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [
    `company-data bench, ${report.mode} run, ${report.date}`,
    `machine: ${describeMachine(report.machine)}`,
    '',
    line(HEAD),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(line),
    '',
    summaryLine(report),
  ].join('\n');
}

/** The same report as markdown, to paste into docs/performance.md. */
export function renderMarkdown(report) {
  const escapePipes = (text) => text.replaceAll('|', '\\|');
  const row = (r) => `| ${r.map(escapePipes).join(' | ')} |`;
  return [
    `### ${report.date.slice(0, 10)}: ${report.mode} run`,
    '',
    `Machine: ${describeMachine(report.machine)}. Finished ${report.date}.`,
    '',
    row(HEAD),
    `| ${HEAD.map(() => '---').join(' | ')} |`,
    ...report.figures.map((f) => row(cells(f))),
    '',
    summaryLine(report),
  ].join('\n');
}

export function summaryLine(report) {
  const met = report.figures.filter((f) => f.pass).length;
  const load = report.machine.loadAverage;
  return (
    `${met}/${report.figures.length} figures met; ${report.seconds} s` +
    (load ? `; load average ${load.start.join(' ')} -> ${load.end.join(' ')}` : '')
  );
}
